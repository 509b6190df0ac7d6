package server

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestKeyCommands(t *testing.T) {
	c, _ := newTestServer(t)
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"MSET", "a", "1", "b", "2", "c", "3"}, `"OK"`},
		{[]string{"EXISTS", "a", "b", "nope", "a"}, "(integer) 3"},
		{[]string{"TYPE", "a"}, `"string"`},
		{[]string{"TYPE", "nope"}, `"none"`},
		{[]string{"DEL", "a", "nope"}, "(integer) 1"},
		{[]string{"UNLINK", "b"}, "(integer) 1"},
		{[]string{"TTL", "c"}, "(integer) -1"},
		{[]string{"TTL", "nope"}, "(integer) -2"},
		{[]string{"EXPIRE", "c", "100"}, "(integer) 1"},
		{[]string{"TTL", "c"}, "(integer) 100"},
		{[]string{"EXPIRE", "c", "50", "GT"}, "(integer) 0"},
		{[]string{"EXPIRE", "c", "50", "LT"}, "(integer) 1"},
		{[]string{"EXPIRE", "c", "50", "NX"}, "(integer) 0"},
		{[]string{"EXPIRE", "c", "50", "NX", "XX"}, "(error) ERR NX and XX, GT or LT options at the same time are not compatible"},
		{[]string{"EXPIRE", "c", "50", "GT", "LT"}, "(error) ERR GT and LT options at the same time are not compatible"},
		{[]string{"EXPIRE", "c", "50", "YY"}, "(error) ERR Unsupported option YY"},
		{[]string{"EXPIRE", "c", "x"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"EXPIRE", "c", "9223372036854775807"}, "(error) ERR invalid expire time in 'expire' command"},
		{[]string{"PERSIST", "c"}, "(integer) 1"},
		{[]string{"PERSIST", "c"}, "(integer) 0"},
		{[]string{"PEXPIRE", "c", "100000"}, "(integer) 1"},
		{[]string{"RENAME", "c", "d"}, `"OK"`},
		{[]string{"TTL", "d"}, "(integer) 100"},
		{[]string{"RENAME", "nope", "x"}, "(error) ERR no such key"},
		{[]string{"SET", "e", "1"}, `"OK"`},
		{[]string{"RENAMENX", "d", "e"}, "(integer) 0"},
		{[]string{"RENAMENX", "d", "f"}, "(integer) 1"},
		{[]string{"EXPIREAT", "f", "1"}, "(integer) 1"},
		{[]string{"EXISTS", "f"}, "(integer) 0"},
		{[]string{"EXPIRETIME", "e"}, "(integer) -1"},
		{[]string{"PEXPIREAT", "e", "99999999999999"}, "(integer) 1"},
		{[]string{"PEXPIRETIME", "e"}, "(integer) 99999999999999"},
		{[]string{"EXPIRETIME", "e"}, "(integer) 99999999999"},
		{[]string{"RANDOMKEY"}, `"e"`},
		{[]string{"DBSIZE"}, "(integer) 1"},
		{[]string{"FLUSHDB"}, `"OK"`},
		{[]string{"RANDOMKEY"}, "(nil)"},
		{[]string{"FLUSHALL", "bogus"}, "(error) ERR syntax error"},
	}
	for _, s := range steps {
		c.must(s.want, s.args...)
	}
}

func TestKeysAndScan(t *testing.T) {
	c, _ := newTestServer(t)
	want := map[string]bool{}
	for i := 0; i < 250; i++ {
		k := "user:" + strconv.Itoa(i)
		c.do("SET", k, "x")
		want[k] = true
	}
	c.do("SET", "other", "y")
	got := c.do("KEYS", "user:1?")
	if n := strings.Count(got, `"user:1`); n != 10 {
		t.Errorf("KEYS user:1? matched %d keys: %s", n, got)
	}
	seen := map[string]bool{}
	cursor := "0"
	for rounds := 0; ; rounds++ {
		if rounds > 100 {
			t.Fatal("SCAN did not finish")
		}
		reply := c.do("SCAN", cursor, "MATCH", "user:*", "COUNT", "20")
		// *["next" *["k1" "k2" ...]]
		fields := strings.Fields(strings.NewReplacer("*[", " ", "]", " ", `"`, " ").Replace(reply))
		cursor = fields[0]
		for _, k := range fields[1:] {
			seen[k] = true
		}
		if cursor == "0" {
			break
		}
	}
	if len(seen) != len(want) {
		var missing []string
		for k := range want {
			if !seen[k] {
				missing = append(missing, k)
			}
		}
		sort.Strings(missing)
		t.Fatalf("SCAN returned %d of %d keys; missing %v", len(seen), len(want), missing)
	}
	c.must("(error) ERR invalid cursor", "SCAN", "x")
	c.must("(error) ERR syntax error", "SCAN", "0", "COUNT", "0")
	c.must(`*["0" *["other"]]`, "SCAN", "0", "MATCH", "oth*", "COUNT", "1000", "TYPE", "string")
}

func TestExpiry(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hz = 100
	addr := StartTest(t, cfg)
	c := dialTest(t, addr)
	c.must(`"OK"`, "SET", "lazy", "v", "PX", "50")
	for i := 0; i < 100; i++ {
		c.do("SET", fmt.Sprintf("active:%d", i), "v", "PX", "50")
	}
	c.must(`"OK"`, "SET", "keep", "v", "EX", "100")
	time.Sleep(150 * time.Millisecond)
	c.must("(nil)", "GET", "lazy")
	// Active expiry removes keys nobody reads: DBSIZE counts them until
	// then, as in Redis.
	deadline := time.Now().Add(5 * time.Second)
	for c.do("DBSIZE") != "(integer) 1" {
		if time.Now().After(deadline) {
			t.Fatalf("active expiry left DBSIZE at %s", c.do("DBSIZE"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if info := c.do("INFO", "stats"); !strings.Contains(info, "expired_keys:10") {
		t.Errorf("INFO stats lacks expired_keys (%s)", info)
	}
}

func TestMaxMemory(t *testing.T) {
	val := strings.Repeat("v", 1000)
	t.Run("noeviction", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.MaxMemory = 1 << 20
		addr := StartTest(t, cfg)
		c := dialTest(t, addr)
		var got string
		for i := 0; i < 2000; i++ {
			got = c.do("SET", "k"+strconv.Itoa(i), val)
			if got != `"OK"` {
				break
			}
		}
		if got != "(error) OOM command not allowed when used memory > 'maxmemory'." {
			t.Fatalf("over maxmemory: %s", got)
		}
		c.must(`"PONG"`, "PING")
		c.must("(integer) 1", "DEL", "k0") // deletes are allowed
		c.must(`"OK"`, "CONFIG", "SET", "maxmemory", "0")
		c.must(`"OK"`, "SET", "more", val)
	})
	for _, policy := range []string{"allkeys-lru", "allkeys-random", "volatile-lru", "volatile-ttl", "volatile-random"} {
		t.Run(policy, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxMemory = 1 << 20
			cfg.MaxMemoryPolicy = policy
			addr := StartTest(t, cfg)
			c := dialTest(t, addr)
			for i := 0; i < 3000; i++ {
				if got := c.do("SET", "k"+strconv.Itoa(i), val, "EX", "1000"); got != `"OK"` {
					t.Fatalf("SET %d under %s: %s", i, policy, got)
				}
			}
			n, _ := strconv.Atoi(strings.TrimPrefix(c.do("DBSIZE"), "(integer) "))
			if n >= 3000 || n < 500 {
				t.Fatalf("DBSIZE %d after 3000 x 1KB into 1MB", n)
			}
			if info := c.do("INFO", "stats"); strings.Contains(info, "evicted_keys:0\r") {
				t.Fatal("evicted_keys stayed 0")
			}
		})
	}
	t.Run("allkeys-lru keeps hot keys", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.MaxMemory = 1 << 20
		cfg.MaxMemoryPolicy = "allkeys-lru"
		cfg.MaxMemorySamples = 10
		addr := StartTest(t, cfg)
		c := dialTest(t, addr)
		c.must(`"OK"`, "SET", "hot", val)
		for i := 0; i < 600; i++ {
			c.do("SET", "cold"+strconv.Itoa(i), val)
		}
		time.Sleep(1100 * time.Millisecond) // LRU clock has 1 s resolution
		for i := 600; i < 900; i++ {
			c.do("GET", "hot")
			c.do("SET", "cold"+strconv.Itoa(i), val)
		}
		c.must(`"`+val+`"`, "GET", "hot")
	})
}

func TestServerCommands(t *testing.T) {
	c, _ := newTestServer(t)
	c.do("SET", "a", "1")
	info := c.do("INFO")
	for _, field := range []string{"# Server", "redis_version:7.0.15", "connected_clients:1", "used_memory:", "instantaneous_ops_per_sec:", "total_commands_processed:", "used_cpu_sys:", "used_cpu_user:", "# Keyspace", "db0:keys=1,expires=0"} {
		if !strings.Contains(info, field) {
			t.Errorf("INFO lacks %q", field)
		}
	}
	if strings.Contains(info, "cmdstat_") {
		t.Error("default INFO includes commandstats")
	}
	if cs := c.do("INFO", "commandstats"); !strings.Contains(cs, "cmdstat_set:calls=1,") {
		t.Errorf("commandstats = %s", cs)
	}
	c.must(`*["maxmemory" "0"]`, "CONFIG", "GET", "maxmemory")
	c.must(`*["save" ""]`, "CONFIG", "GET", "save")
	c.must(`*["appendonly" "no"]`, "CONFIG", "GET", "appendonly")
	c.must(`"OK"`, "CONFIG", "SET", "maxmemory", "12gb", "maxmemory-policy", "allkeys-lru")
	c.must(`*["maxmemory" "12884901888" "maxmemory-policy" "allkeys-lru"]`, "CONFIG", "GET", "maxmemory", "maxmemory-policy")
	c.must("(error) ERR Unknown option or number of arguments for CONFIG SET - 'nope'", "CONFIG", "SET", "nope", "1")
	c.must("(error) ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value", "CONFIG", "SET", "maxmemory", "lots")
	c.must("(error) ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config", "CONFIG", "SET", "port", "1")
	c.must(`"OK"`, "CONFIG", "RESETSTAT")
	if got := c.do("COMMAND", "COUNT"); !strings.HasPrefix(got, "(integer) ") || got == "(integer) 0" {
		t.Errorf("COMMAND COUNT = %s", got)
	}
	c.must(`*[*["get" (integer) 2 *["readonly" "fast"] (integer) 1 (integer) 1 (integer) 1 *["@read" "@string" "@fast"] *[] *[*["flags" *["RO" "access"] "begin_search" *["type" "index" "spec" *["index" (integer) 1]] "find_keys" *["type" "range" "spec" *["lastkey" (integer) 0 "keystep" (integer) 1 "limit" (integer) 0]]]] *[]]]`, "COMMAND", "INFO", "get")
	if got := c.do("COMMAND", "DOCS", "set"); !strings.HasPrefix(got, `*["set" *["summary"`) {
		t.Errorf("COMMAND DOCS set = %s", got)
	}
	c.must(`*["a" "b"]`, "COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2")
	if got := c.do("TIME"); !strings.HasPrefix(got, `*["`) {
		t.Errorf("TIME = %s", got)
	}
}

func TestShutdownCommand(t *testing.T) {
	addr, stop, err := StartLocal(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c := dialTest(t, addr)
	c.conn.Write([]byte("SHUTDOWN NOSAVE\r\n"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if conn, err := dialRaw(addr); err != nil {
			break
		} else {
			conn.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("server still accepting after SHUTDOWN")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
