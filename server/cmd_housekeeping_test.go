package server

import (
	"regexp"
	"strings"
	"testing"
)

// TestInfoReplication: the fields harnesses read, with a fresh master's
// values; the replication id is 40 hex digits and stable while the
// server runs.
func TestInfoReplication(t *testing.T) {
	c, _ := newTestServer(t)
	info := c.do("INFO", "replication")
	for _, want := range []string{"# Replication", "role:master", "connected_slaves:0", "master_failover_state:no-failover",
		"master_replid2:0000000000000000000000000000000000000000", "master_repl_offset:0", "second_repl_offset:-1",
		"repl_backlog_active:0", "repl_backlog_size:1048576", "repl_backlog_first_byte_offset:0", "repl_backlog_histlen:0"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO replication lacks %q:\n%s", want, info)
		}
	}
	id := regexp.MustCompile(`master_replid:([0-9a-f]{40})\\r\\n`).FindStringSubmatch(info)
	if id == nil {
		t.Fatalf("no 40-hex master_replid in %s", info)
	}
	if again := c.do("INFO", "replication"); !strings.Contains(again, id[1]) {
		t.Errorf("master_replid changed between two INFO calls")
	}
}

// TestRefusedClearly: what dpulab's server does not do is refused with an
// error that says so and what to use instead, and the connection carries
// on.
func TestRefusedClearly(t *testing.T) {
	c, _ := newTestServer(t)
	for _, tc := range []struct {
		args []string
		want string
	}{} {
		if got := c.do(tc.args...); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: %s", tc.args, got)
		}
	}
	c.must(`"PONG"`, "PING")
}
