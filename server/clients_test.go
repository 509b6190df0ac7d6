package server

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// go-redis v9 opens every connection with HELLO 3 and pipelines CLIENT
// SETINFO; with Protocol 3 replies are RESP3 types.
func TestGoRedisProtocol3(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 3, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	if err := rdb.Set(ctx, "k", "v", time.Minute).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if v, err := rdb.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET = %q, %v", v, err)
	}
	if _, err := rdb.Get(ctx, "missing").Result(); err != redis.Nil {
		t.Fatalf("GET missing: err = %v, want redis.Nil", err)
	}
	if ttl, err := rdb.TTL(ctx, "k").Result(); err != nil || ttl != time.Minute {
		t.Fatalf("TTL = %v, %v", ttl, err)
	}
	if n, err := rdb.IncrBy(ctx, "n", 5).Result(); err != nil || n != 5 {
		t.Fatalf("INCRBY = %d, %v", n, err)
	}
	if f, err := rdb.IncrByFloat(ctx, "f", 1.5).Result(); err != nil || f != 1.5 {
		t.Fatalf("INCRBYFLOAT = %v, %v", f, err)
	}
	if vals, err := rdb.MGet(ctx, "k", "missing").Result(); err != nil || len(vals) != 2 || vals[0] != "v" || vals[1] != nil {
		t.Fatalf("MGET = %v, %v", vals, err)
	}
	if err := rdb.Do(ctx, "NOSUCHCMD").Err(); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("unknown command: %v", err)
	}
	// The connection survived the error.
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after error: %v", err)
	}
	pipe := rdb.Pipeline()
	for i := 0; i < 100; i++ {
		pipe.Set(ctx, "p", i, 0)
	}
	get := pipe.Get(ctx, "p")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	if get.Val() != "99" {
		t.Fatalf("pipelined GET = %q", get.Val())
	}
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil || !strings.Contains(info, "redis_version:") {
		t.Fatalf("INFO = %q, %v", info, err)
	}
	if name, err := rdb.ClientList(ctx).Result(); err != nil || !strings.Contains(name, "lib-name=go-redis") {
		t.Fatalf("CLIENT LIST = %q, %v (CLIENT SETINFO not recorded?)", name, err)
	}
	// Many connections at once, as a load generator's pool opens them.
	rdb2 := redis.NewClient(&redis.Options{Addr: addr, Protocol: 3, PoolSize: 20, MinIdleConns: 20})
	defer rdb2.Close()
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func() { errs <- rdb2.Incr(ctx, "shared").Err() }()
	}
	for i := 0; i < 20; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent INCR: %v", err)
		}
	}
	if n, _ := rdb2.Get(ctx, "shared").Int(); n != 20 {
		t.Fatalf("shared = %d, want 20", n)
	}
}

func TestGoRedisAuth(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RequirePass = "pw"
	addr := StartTest(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	good := redis.NewClient(&redis.Options{Addr: addr, Protocol: 3, Password: "pw"})
	defer good.Close()
	if err := good.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("with password: %v", err)
	}
	bad := redis.NewClient(&redis.Options{Addr: addr, Protocol: 3, Password: "nope", MaxRetries: -1})
	defer bad.Close()
	if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
}

func redisCLI(t *testing.T, bin, addr string, stdin string, args ...string) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, append([]string{"-h", host, "-p", port}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// redis-cli, as a person uses it: commands as arguments, a script on
// stdin, RESP3, and its start-up COMMAND DOCS query.
func TestRedisCLI(t *testing.T) {
	bin := testpeer.Require(t, "redis-cli")
	addr := StartTest(t, DefaultConfig())
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"ping", "", []string{"PING"}, "PONG\n"},
		{"set", "", []string{"SET", "greeting", "hello world"}, "OK\n"},
		{"get", "", []string{"GET", "greeting"}, "hello world\n"},
		{"missing", "", []string{"GET", "nope"}, "\n"},
		{"error", "", []string{"INCR", "greeting"}, "ERR value is not an integer or out of range\n\n"},
		{"unknown", "", []string{"FOO"}, "ERR unknown command 'FOO', with args beginning with: \n\n"},
		{"resp3", "", []string{"-3", "HELLO", "3"}, "server redis\nversion 7.0.15\nproto 3\nid "},
		{"stdin script", "SET a 1\nINCR a\nGET a\n", nil, "OK\n2\n2\n"},
		{"dbsize", "", []string{"-n", "0", "DBSIZE"}, "2\n"},
		{"info", "", []string{"INFO", "keyspace"}, "# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redisCLI(t, bin, addr, tt.stdin, tt.args...)
			if tt.name == "resp3" {
				if !strings.HasPrefix(got, tt.want) {
					t.Fatalf("got %q, want prefix %q", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	// Outputs above are redis-cli's non-terminal formats, checked against
	// Debian's redis-server 7.0.15. --pipe mode (mass insertion) speaks raw RESP.
	var mass strings.Builder
	for i := 0; i < 1000; i++ {
		mass.WriteString("SET key:" + strings.Repeat("x", i%5) + " v\r\n")
	}
	if out := redisCLI(t, bin, addr, mass.String(), "--pipe"); !strings.Contains(out, "errors: 0, replies: 1000") {
		t.Fatalf("redis-cli --pipe: %s", out)
	}
}

// TestRedisCLIInteractive drives redis-cli in a terminal (tmux), as a person
// would: it must connect, answer, and show its argument hints (which
// redis-cli 7 builds from COMMAND DOCS).
func TestRedisCLIInteractive(t *testing.T) {
	cli := testpeer.Require(t, "redis-cli")
	tmux := testpeer.Require(t, "tmux")
	addr := StartTest(t, DefaultConfig())
	host, port, _ := net.SplitHostPort(addr)
	session := "dpulab-rcli-" + port
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("new-session", "-d", "-s", session, "-x", "200", "-y", "20", cli+" -h "+host+" -p "+port)
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	waitFor := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			screen := run("capture-pane", "-t", session, "-p")
			if strings.Contains(screen, want) {
				return screen
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q:\n%s", want, screen)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	prompt := host + ":" + port + ">"
	waitFor(prompt)
	run("send-keys", "-t", session, "set greeting hello", "Enter")
	waitFor("OK")
	run("send-keys", "-t", session, "get greeting", "Enter")
	waitFor(`"hello"`)
	run("send-keys", "-t", session, "set ")
	waitFor("set key value [NX|XX] [GET]")
	run("send-keys", "-t", session, "C-u", "hgetall nothing", "Enter")
	waitFor("(empty array)")
}

// TestClientListFD checks that CLIENT LIST and CLIENT INFO report each
// connection's real descriptor (the event loop's, or the socket's on the
// goroutine path), not -1.
func TestClientListFD(t *testing.T) {
	tc, addr := newTestServer(t)
	other := dialTest(t, addr)
	fdRe := regexp.MustCompile(` fd=(-?\d+) `)
	fd := func(c *testConn) int {
		line := c.do("CLIENT", "INFO")
		m := fdRe.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("CLIENT INFO = %s: no fd field", line)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	a, b := fd(tc), fd(other)
	if a < 0 || b < 0 || a == b {
		t.Fatalf("fds %d and %d, want two distinct descriptors", a, b)
	}
	if list := tc.do("CLIENT", "LIST"); !regexp.MustCompile(` fd=` + strconv.Itoa(b) + ` `).MatchString(list) {
		t.Fatalf("CLIENT LIST = %s, want fd=%d for the other client", list, b)
	}
}
