package server

import (
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/server/resp"
)

// configNames returns the parameter names CONFIG GET * lists on conn.
func configNames(t *testing.T, c *diffConn) []string {
	t.Helper()
	if _, err := c.c.Write(resp.AppendCommand(nil, "CONFIG", "GET", "*")); err != nil {
		t.Fatal(err)
	}
	v, err := c.rd.ReadReply()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 0; i+1 < len(v.Elems); i += 2 {
		names = append(names, string(v.Elems[i].Str))
	}
	sort.Strings(names)
	return names
}

// TestConfigNamesRedis70 checks that every parameter redis-server 7.0.15
// lists in CONFIG GET * is listed by ours, and that each can be read
// alone and set to the value it reports (when Redis lets it be set at
// run time). The names come from testdata/redis70_config_names.txt,
// and from a live redis-server when one is installed.
func TestConfigNamesRedis70(t *testing.T) {
	data, err := os.ReadFile("testdata/redis70_config_names.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(data))
	if _, err := exec.LookPath("redis-server"); err == nil {
		ref := dialDiff(t, "unix", startRedisPeer(t))
		live := configNames(t, ref)
		if strings.Join(live, " ") != strings.Join(want, " ") {
			t.Errorf("redis-server's CONFIG GET * names differ from testdata/redis70_config_names.txt; re-record it:\n live: %v\n file: %v", live, want)
		}
	}
	ours := dialDiff(t, "tcp", StartTest(t, DefaultConfig()))
	have := map[string]bool{}
	for _, n := range configNames(t, ours) {
		have[n] = true
	}
	for _, n := range want {
		if !have[n] {
			t.Errorf("CONFIG GET * does not list %q", n)
		}
	}
	tc := &testConn{t: t, conn: ours.c, r: ours.rd}
	for _, n := range want {
		v := tc.do("CONFIG", "GET", n)
		if !strings.HasPrefix(v, `*["`+n+`" `) {
			t.Errorf("CONFIG GET %s: %s", n, v)
			continue
		}
		d := findDirective(n)
		if d == nil || !d.runtime || d.protected {
			continue
		}
		val := strings.TrimSuffix(strings.TrimPrefix(v, `*["`+n+`" `), "]")
		val = strings.Trim(val, `"`)
		if got := tc.do("CONFIG", "SET", n, val); got != `"OK"` {
			t.Errorf("CONFIG SET %s %q (its own value): %s", n, val, got)
		}
	}
}

// TestConfigFileRedis70 loads the parameters from a config file, as
// harnesses write them, aliases included.
func TestConfigFileRedis70(t *testing.T) {
	f := t.TempDir() + "/redis.conf"
	conf := "lua-time-limit 1234\nset-max-intset-entries 10\nhash-max-ziplist-entries 3\nnotify-keyspace-events KEA\n" +
		"save 900 1\nsave 300 10\nlatency-tracking-info-percentiles 50 99\nappendonly no\n"
	if err := os.WriteFile(f, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	if err := cfg.LoadFile(f); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"busy-reply-threshold": "1234", "hash-max-listpack-entries": "3", "notify-keyspace-events": "AKE",
		"save": "900 1 300 10", "latency-tracking-info-percentiles": "50 99",
	} {
		if got := findDirective(name).get(&cfg); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if cfg.Tuning.BusyReplyThreshold != 1234 {
		t.Errorf("Tuning.BusyReplyThreshold = %d", cfg.Tuning.BusyReplyThreshold)
	}
	bad := DefaultConfig()
	if err := bad.Set("lua-time-limit", []string{"x"}); err == nil {
		t.Error("lua-time-limit x accepted")
	}
}

// TestConfigSetHostile: every parameter survives hostile values (errors
// or accepted values, never a crash), and the connection carries on.
func TestConfigSetHostile(t *testing.T) {
	data, err := os.ReadFile("testdata/redis70_config_names.txt")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newTestServer(t)
	hostile := []string{"", " ", "-1", "0", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
		"18446744073709551616kb", "101%", "-5%", "%", "1gb", "yes", "NO", "a b c", "\"unbalanced", "{title", "nan", "1e400"}
	for _, n := range strings.Fields(string(data)) {
		if n == "port" || n == "maxclients" || n == "bind" || n == "requirepass" || n == "dir" {
			continue // would move the server or lock us out
		}
		for _, v := range hostile {
			got := c.do("CONFIG", "SET", n, v)
			if got != `"OK"` && !strings.HasPrefix(got, "(error) ERR ") {
				t.Errorf("CONFIG SET %s %q: %s", n, v, got)
			}
		}
	}
	c.must(`"PONG"`, "PING")
}
