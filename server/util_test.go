package server

import (
	"strings"
	"testing"
)

func TestParseInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-1", -1, true}, {"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true}, {"9223372036854775808", 0, false},
		{"01", 0, false}, {"+1", 0, false}, {" 1", 0, false}, {"1 ", 0, false},
		{"-0", 0, false}, {"", 0, false}, {"1.5", 0, false}, {"-", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseInt([]byte(tt.in))
			if ok != tt.ok || ok && got != tt.want {
				t.Fatalf("parseInt(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pat, s string
		want   bool
	}{
		{"*", "anything", true},
		{"user:*", "user:1", true},
		{"user:*", "usr:1", false},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-c]llo", "hbllo", true},
		{"h\\*llo", "h*llo", true},
		{"h\\*llo", "hello", false},
		{"*a*b*", "xxaxxbxx", true},
		{"a*", "", false},
		{"", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.pat+"/"+tt.s, func(t *testing.T) {
			if got := globMatch([]byte(tt.pat), []byte(tt.s), false); got != tt.want {
				t.Fatalf("globMatch(%q, %q) = %v", tt.pat, tt.s, got)
			}
		})
	}
	if !globMatch([]byte("GET"), []byte("get"), true) {
		t.Error("nocase match failed")
	}
}

func TestCommandLookupCaseInsensitiveNoAlloc(t *testing.T) {
	tbl := table()
	for _, name := range []string{"get", "GET", "gEt"} {
		if c := tbl.lookup([]byte(name)); c == nil || c.Name != "get" {
			t.Fatalf("lookup(%q) = %v", name, c)
		}
	}
	name := []byte("SET")
	if n := testing.AllocsPerRun(100, func() { tbl.lookup(name) }); n != 0 {
		t.Fatalf("lookup allocated %v times", n)
	}
}

// The hot path allocates nothing for GET and for SET over a same-sized
// value (what redis-benchmark and caches do), and one key + one value for a
// new key.
func TestHotPathAllocations(t *testing.T) {
	srv, err := New(DefaultConfig().WithLog(&syncBuffer{}))
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{srv: srv, db: srv.dbs[0], resp: 2, authed: true}
	set := [][]byte{[]byte("SET"), []byte("key:1"), []byte("0123456789abcdef")}
	get := [][]byte{[]byte("GET"), []byte("key:1")}
	c.exec(set)
	c.exec(get)
	for _, tt := range []struct {
		name string
		args [][]byte
		max  float64
	}{
		{"GET", get, 0},
		{"SET same size", set, 0},
	} {
		n := testing.AllocsPerRun(200, func() {
			c.out = c.out[:0]
			c.exec(tt.args)
		})
		if n > tt.max {
			t.Errorf("%s: %v allocations per command, want <= %v", tt.name, n, tt.max)
		}
	}
	i := 0
	keys := make([][]byte, 300)
	for j := range keys {
		keys[j] = []byte("new:" + itoa(int64(j)))
	}
	args := [][]byte{set[0], nil, set[2]}
	n := testing.AllocsPerRun(200, func() {
		c.out = c.out[:0]
		args[1] = keys[i]
		c.exec(args)
		i++
	})
	if n > 2.5 { // key string + value bytes (+ amortised map growth)
		t.Errorf("SET new key: %v allocations, want about 2", n)
	}
}

func TestUsageDocs(t *testing.T) {
	render := func(args []docArg) string {
		var f func([]docArg) string
		f = func(as []docArg) string {
			var parts []string
			for _, a := range as {
				s := a.typ + ":" + a.name
				if a.token != "" {
					s += "=" + a.token
				}
				if a.optional {
					s += "?"
				}
				if a.multiple {
					s += "*"
				}
				if len(a.sub) > 0 {
					s += "(" + f(a.sub) + ")"
				}
				parts = append(parts, s)
			}
			return strings.Join(parts, " ")
		}
		return f(args)
	}
	tests := map[string]string{
		"del":             "key:key*",
		"mset":            "block:block*(key:key string:value)",
		"client|list":     "oneof:condition=TYPE?(pure-token:normal=NORMAL pure-token:master=MASTER pure-token:replica=REPLICA pure-token:pubsub=PUBSUB) integer:client-id=ID?*",
		"client|no-evict": "oneof:condition(pure-token:on=ON pure-token:off=OFF)",
		"getrange":        "key:key integer:start integer:end",
		"expire":          "key:key integer:seconds oneof:condition?(pure-token:nx=NX pure-token:xx=XX pure-token:gt=GT pure-token:lt=LT)",
	}
	for name, want := range tests {
		args, ok := usageArgs(name)
		if !ok {
			t.Fatalf("no usage for %s", name)
		}
		if got := render(args); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	for name := range usages {
		if _, ok := usageArgs(name); !ok {
			t.Errorf("usage %s does not parse", name)
		}
	}
}
