package server

import (
	"bufio"
	"context"
	"encoding/hex"
	"io"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dpulab/dpulab/server/resp"
)

// tokenBucket is the usual Lua rate limiter: a hash holds the tokens left
// and the last refill time; each call refills by the elapsed time, takes
// one token if it can, and expires the bucket once it would be full.
var tokenBucket = redis.NewScript(`
local key = KEYS[1]
local rate = tonumber(ARGV[1])      -- tokens per second
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])       -- milliseconds
local requested = tonumber(ARGV[4])
local state = redis.call('HMGET', key, 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil then
  tokens = capacity
  ts = now
end
local elapsed = math.max(0, now - ts)
tokens = math.min(capacity, tokens + elapsed * rate / 1000)
local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end
redis.call('HMSET', key, 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', key, math.ceil(capacity / rate * 1000))
return {allowed, tostring(tokens)}
`)

// TestGoRedisScripts: go-redis's Script (EVALSHA, falling back to EVAL on
// NOSCRIPT) and a token-bucket rate limiter work against our server, in
// RESP3 and RESP2.
func TestGoRedisScripts(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{3, 2} {
		t.Run("resp"+string(rune('0'+proto)), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1})
			defer rdb.Close()
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			incr := redis.NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)
			for i, want := range []int64{5, 10} {
				// The first Run gets NOSCRIPT from EVALSHA and sends EVAL.
				n, err := incr.Run(ctx, rdb, []string{"counter"}, 5).Int64()
				if err != nil || n != want {
					t.Fatalf("run %d: %d, %v; want %d", i, n, err, want)
				}
			}
			if ok, err := incr.Exists(ctx, rdb).Result(); err != nil || len(ok) != 1 || !ok[0] {
				t.Errorf("SCRIPT EXISTS = %v, %v", ok, err)
			}
			if _, err := redis.NewScript(`return redis.call('INCR', 'counter', 'x')`).Run(ctx, rdb, nil).Result(); err == nil ||
				!strings.HasPrefix(err.Error(), "ERR Wrong number of args calling Redis command from script") {
				t.Errorf("bad call: %v", err)
			}

			// Capacity 3, one token a second: three calls pass at once,
			// the fourth is refused, and one second later one passes.
			now := int64(1_700_000_000_000)
			for i, want := range []int64{1, 1, 1, 0} {
				res, err := tokenBucket.Run(ctx, rdb, []string{"bucket"}, 1, 3, now, 1).Slice()
				if err != nil || len(res) != 2 || res[0] != want {
					t.Fatalf("call %d: %v, %v; want allowed %d", i, res, err, want)
				}
			}
			res, err := tokenBucket.Run(ctx, rdb, []string{"bucket"}, 1, 3, now+1000, 1).Slice()
			if err != nil || res[0] != int64(1) || res[1] != "0" {
				t.Fatalf("after a second: %v, %v", res, err)
			}
			if ttl := rdb.PTTL(ctx, "bucket").Val(); ttl <= 0 || ttl > 3000*time.Millisecond {
				t.Errorf("PTTL bucket = %v", ttl)
			}
			if got := rdb.HGet(ctx, "bucket", "ts").Val(); got != "1700000001000" {
				t.Errorf("ts = %q", got)
			}

			// FUNCTION LOAD and FCALL through go-redis.
			if err := rdb.FunctionFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			lib := "#!lua name=mylib\nredis.register_function{function_name='hello', callback=function(keys, args) return 'hello ' .. args[1] end, flags={'no-writes'}}"
			if name, err := rdb.FunctionLoad(ctx, lib).Result(); err != nil || name != "mylib" {
				t.Fatalf("FUNCTION LOAD = %q, %v", name, err)
			}
			if got, err := rdb.FCallRo(ctx, "hello", nil, "world").Text(); err != nil || got != "hello world" {
				t.Errorf("FCALL_RO = %q, %v", got, err)
			}
			libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{WithCode: true}).Result()
			if err != nil || len(libs) != 1 || libs[0].Name != "mylib" || len(libs[0].Functions) != 1 || libs[0].Code != lib {
				t.Errorf("FUNCTION LIST = %+v, %v", libs, err)
			}
		})
	}
}

// scriptConn is a bare RESP connection for tests that must not wait for a
// reply (a script that runs on).
type scriptConn struct {
	t  *testing.T
	nc net.Conn
	r  *resp.Reader
}

func dialScript(t *testing.T, addr string) *scriptConn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &scriptConn{t: t, nc: nc, r: resp.NewReader(bufio.NewReader(nc))}
}

func (c *scriptConn) send(args ...string) {
	c.t.Helper()
	var b []byte
	b = resp.AppendArray(b, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *scriptConn) recv(timeout time.Duration) string {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	v, err := c.r.ReadReply()
	if err != nil {
		c.t.Fatalf("read reply: %v", err)
	}
	return v.String()
}

func (c *scriptConn) do(args ...string) string {
	c.t.Helper()
	c.send(args...)
	return c.recv(5 * time.Second)
}

// TestScriptBusyAndKill: past busy-reply-threshold a running script
// makes other clients get BUSY; SCRIPT KILL stops a script that has not
// written, whose caller gets Redis's error; a script that wrote is
// UNKILLABLE, and SHUTDOWN NOSAVE still ends the server.
func TestScriptBusyAndKill(t *testing.T) {
	addr, stop, err := StartLocal(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	a, b := dialScript(t, addr), dialScript(t, addr)
	if got := b.do("CONFIG", "SET", "lua-time-limit", "100"); got != `"OK"` {
		t.Fatal(got)
	}
	if got := b.do("CONFIG", "GET", "busy-reply-threshold"); got != `*[$"busy-reply-threshold" $"100"]` && got != `"busy-reply-threshold" "100"` && !strings.Contains(got, `"100"`) {
		t.Fatalf("CONFIG GET busy-reply-threshold = %s", got)
	}
	if got := b.do("SCRIPT", "KILL"); got != "(error) NOTBUSY No scripts in execution right now." {
		t.Fatalf("SCRIPT KILL with nothing running: %s", got)
	}

	a.send("EVAL", "local i = 0 while true do i = i + 1 end", "0")
	time.Sleep(300 * time.Millisecond)
	if got := b.do("PING"); got != "(error) "+errScriptBusy {
		t.Fatalf("PING during a busy script: %s", got)
	}
	if got := b.do("FUNCTION", "KILL"); got != "(error) NOTBUSY No scripts in execution right now." {
		t.Errorf("FUNCTION KILL during EVAL: %s", got)
	}
	if got := b.do("SCRIPT", "KILL"); got != `"OK"` {
		t.Fatalf("SCRIPT KILL: %s", got)
	}
	if got := a.recv(5 * time.Second); !strings.HasPrefix(got, "(error) ERR Script killed by user with SCRIPT KILL... script: ") || !strings.HasSuffix(got, ", on @user_script:1.") {
		t.Fatalf("killed script's reply: %s", got)
	}
	if got := b.do("PING"); got != `"PONG"` {
		t.Fatalf("PING after the kill: %s", got)
	}
	if got := a.do("GET", "x"); got != "(nil)" {
		t.Fatalf("the killed script's client carries on: %s", got)
	}

	// A loop inside a coroutine is under the same clock.
	a.send("EVAL", "coroutine.wrap(function() while true do end end)()", "0")
	time.Sleep(300 * time.Millisecond)
	if got := b.do("SCRIPT", "KILL"); got != `"OK"` {
		t.Fatalf("SCRIPT KILL of a coroutine loop: %s", got)
	}
	if got := a.recv(5 * time.Second); !strings.HasPrefix(got, "(error) ERR Script killed by user with SCRIPT KILL...") {
		t.Fatalf("killed coroutine's reply: %s", got)
	}

	// A busy function: FUNCTION KILL.
	if got := b.do("FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function('spin', function() while true do end end)"); got != `"spin"` {
		t.Fatal(got)
	}
	a.send("FCALL", "spin", "0")
	time.Sleep(300 * time.Millisecond)
	if got := b.do("GET", "x"); got != "(error) "+errScriptBusy {
		t.Fatalf("GET during a busy function: %s", got)
	}
	if got := b.do("FUNCTION", "STATS"); !strings.HasPrefix(got, `*["running_script" *["name" "spin" "command" *["FCALL" "spin" "0"] "duration_ms" (integer) `) {
		t.Errorf("FUNCTION STATS during a busy function: %s", got)
	}
	if got := b.do("FUNCTION", "KILL"); got != `"OK"` {
		t.Fatalf("FUNCTION KILL: %s", got)
	}
	if got := a.recv(5 * time.Second); !strings.HasPrefix(got, "(error) ERR Script killed by user with SCRIPT KILL... script: spin") {
		t.Fatalf("killed function's reply: %s", got)
	}

	// A script that wrote cannot be killed; SHUTDOWN NOSAVE ends it.
	a.send("EVAL", "redis.call('set', 'x', 'y') while true do end", "0")
	time.Sleep(300 * time.Millisecond)
	if got := b.do("SCRIPT", "KILL"); !strings.HasPrefix(got, "(error) UNKILLABLE Sorry the script already executed write commands") {
		t.Fatalf("SCRIPT KILL after a write: %s", got)
	}
	b.send("SHUTDOWN", "NOSAVE")
	deadline := time.Now().Add(5 * time.Second)
	for {
		nc, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			break
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still accepts connections 5s after SHUTDOWN NOSAVE")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestScriptSandboxLimits: what a script can ask for is bounded: deep
// and cyclic tables in replies, nesting in cjson.
func TestScriptSandboxLimits(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	c := dialScript(t, addr)
	// A cyclic table nests as deep as Redis's (7995 levels), then ends
	// in an error.
	c.send("EVAL", "local t = {} t[1] = t return t", "0")
	want := strings.Repeat("*1\r\n", maxLuaReplyDepth) + "-ERR reached lua stack limit\r\n"
	buf := make([]byte, len(want))
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c.nc, buf); err != nil || string(buf) != want {
		t.Fatalf("cyclic table: %v, %.200q", err, buf)
	}
	if got := c.do("EVAL", "return cjson.decode(string.rep('[', 5000))", "0"); !strings.HasPrefix(got, "(error) ERR") {
		t.Errorf("deep JSON: %.200s", got)
	}
	if got := c.do("EVAL", "local t = {} t[1] = t return cjson.encode(t)", "0"); !strings.HasPrefix(got, "(error) ERR") {
		t.Errorf("cyclic cjson.encode: %.200s", got)
	}
	if got := c.do("EVAL", "return #string.rep('x', 1e10)", "0"); !strings.Contains(got, "resulting string too large") {
		t.Errorf("huge string.rep: %.200s", got)
	}
	if got := c.do("EVAL", "return string.rep('ab', 3)", "0"); got != `"ababab"` {
		t.Errorf("string.rep: %s", got)
	}
	if got := c.do("PING"); got != `"PONG"` {
		t.Fatal(got)
	}
}

// BenchmarkScripts measures EVAL and EVALSHA per call, with allocations,
// over a pipelined connection (see benchCommand).
func BenchmarkScripts(b *testing.B) {
	const script = "return redis.call('INCR', KEYS[1])"
	b.Run("EVAL return 1", func(b *testing.B) { benchCommand(b, nil, "EVAL", "return 1", "0") })
	b.Run("EVAL incr", func(b *testing.B) { benchCommand(b, nil, "EVAL", script, "1", "k") })
	b.Run("EVALSHA incr", func(b *testing.B) {
		benchCommand(b, [][]string{{"SCRIPT", "LOAD", script}}, "EVALSHA", sha1hex([]byte(script)), "1", "k")
	})
	b.Run("INCR", func(b *testing.B) { benchCommand(b, nil, "INCR", "k") })
}

// redisLongLibDump is redis-server 7.0.15's FUNCTION DUMP of a library
// long enough that Redis stored its code LZF-compressed.
const redisLongLibDump = "f5c3409741ae1f23216c7561206e616d653d6c6f6e676c69620a6c6f63616c2066756e6374696f1a6e2068656c706572286b6579732c2061726773292072657475726e2006036469732e202c086c2827676574272c204024085b315d2920656e640a801e0872656769737465725fc05001282740680061202de000114036e0065be00a7520530029e015540062e04b540063e04b540064e02b540164290a00646aa0f28db24c47"

// TestFunctionRestoreFromRedis: a FUNCTION DUMP payload from redis-server
// (LZF-compressed code) restores here, and our own DUMP restores again.
func TestFunctionRestoreFromRedis(t *testing.T) {
	payload, err := hex.DecodeString(redisLongLibDump)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newTestServer(t)
	c.must(`"OK"`, "FUNCTION", "RESTORE", string(payload))
	c.must(`"OK"`, "SET", "k", "v")
	for _, f := range []string{"longa", "longb", "longc", "longd"} {
		c.must(`"v"`, "FCALL", f, "1", "k")
	}
	dump := c.do("FUNCTION", "DUMP")
	c.must(`"OK"`, "FUNCTION", "FLUSH")
	c.must(`(error) ERR Function not found`, "FCALL", "longa", "1", "k")
	v, err := strconv.Unquote(dump)
	if err != nil {
		t.Fatalf("FUNCTION DUMP: %s", dump)
	}
	c.must(`"OK"`, "FUNCTION", "RESTORE", v)
	c.must(`"v"`, "FCALL", "longd", "1", "k")
	// A corrupted LZF body is refused, not a panic.
	bad := append([]byte(nil), payload...)
	bad[10] ^= 0xff
	c.must(`(error) ERR DUMP payload version or checksum are wrong`, "FUNCTION", "RESTORE", string(bad))
	if _, err := lzfDecompress([]byte{0xe0, 0xff, 0x00}, 100); err == nil {
		t.Error("lzfDecompress accepted a back reference before the start")
	}
}

// TestScriptHostileInputs: random script bodies and library codes, and
// scripts that recurse, overflow or ask for too much, get errors; the
// server carries on.
func TestScriptHostileInputs(t *testing.T) {
	c, _ := newTestServer(t)
	for _, s := range []string{
		"local function f() return 1 + f() end return f()",
		"local function f() pcall(f) end f() return 1",
		"local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x",
		"return unpack({}, 1, 1e8)",
		"return string.format('%999999999d', 1)",
		"return loadstring(string.rep('(', 100000))",
		"return {0/0, 1/0, -1/0}",
		"return string.rep('x', 1e300)",
		"#!", "#!lua flags=", "#!lua\n", "",
	} {
		c.do("EVAL", s, "0")
	}
	c.must(`(error) ERR user_script:1: too many results to unpack script: b1a7a340c2636ecef66f82cf16b41fc37c1c017c, on @user_script:1.`, "EVAL", "return unpack({}, 1, 1e8)", "0")
	r := rand.New(rand.NewSource(1))
	alphabet := []byte("()[]{}=.,;:'\"\\#!-+*/%^<>~ \n\tabcdefxyz0123456789elocalfunctionendreturnwhiledoifrepeatuntil...")
	for i := 0; i < 500; i++ {
		b := make([]byte, r.Intn(40))
		for j := range b {
			b[j] = alphabet[r.Intn(len(alphabet))]
		}
		c.do("EVAL", string(b), "0")
		c.do("FUNCTION", "LOAD", "REPLACE", "#!lua name=l\n"+string(b))
	}
	c.must(`"PONG"`, "PING")
}
