package server

import (
	"sort"
	"strings"
	"sync"
)

// cmdFunc runs one command. args[0] is the command name as the client sent
// it; arity has been checked. It replies through c's write methods.
type cmdFunc func(c *Client, args [][]byte)

// cmdFlags are the command's properties (a subset of Redis's flags, with the
// same names in COMMAND INFO).
type cmdFlags uint32

const (
	flagWrite     cmdFlags = 1 << iota // modifies the keyspace
	flagReadonly                       // only reads
	flagDenyOOM                        // refused with OOM when over maxmemory (may grow memory)
	flagAdmin                          // administrative
	flagNoAuth                         // allowed before AUTH
	flagFast                           // O(1) or O(log N)
	flagLoading                        // allowed while loading
	flagStale                          // allowed on a stale replica
	flagPubSub                         // pub/sub
	flagNoScript                       // not in scripts
	flagAllowBusy                      // allowed while a script is busy
	flagNoMulti                        // not inside MULTI
	flagBlocking                       // may block the client (BLPOP, XREAD BLOCK)
	flagAsking                         // runs on an importing slot in a cluster (RESTORE-ASKING)
)

// flagNames are the flags' names in the order Redis lists them.
var flagNames = []struct {
	f    cmdFlags
	name string
}{
	{flagWrite, "write"}, {flagReadonly, "readonly"}, {flagDenyOOM, "denyoom"},
	{flagAdmin, "admin"}, {flagPubSub, "pubsub"}, {flagNoScript, "noscript"}, {flagBlocking, "blocking"},
	{flagLoading, "loading"}, {flagStale, "stale"}, {flagAsking, "asking"}, {flagFast, "fast"},
	{flagNoAuth, "no_auth"}, {flagNoMulti, "no_multi"}, {flagAllowBusy, "allow_busy"},
}

// command is one entry of the command table. Arity follows Redis: N > 0
// means exactly N arguments including the name, -N means at least N.
// FirstKey/LastKey/Step locate key arguments (LastKey -1 = last argument,
// 0 = no keys) for COMMAND INFO and COMMAND GETKEYS.
type command struct {
	Name     string // lowercase
	Fn       cmdFunc
	Arity    int
	Flags    cmdFlags
	FirstKey int
	LastKey  int
	Step     int
	Group    string // COMMAND DOCS group: "string", "list", "generic", ...
	Summary  string // one line for COMMAND DOCS
	Since    string
	// Subcommands (CLIENT SETNAME, CONFIG GET, ...) are dispatched by Fn
	// itself; listed here only for COMMAND DOCS/INFO.
	Subcommands []*command

	id int // index into per-server statistics
	// slowTimed: timed on its own for the slow log at a positive
	// slowlog-log-slower-than (slowlog.go's slowTimedCmd).
	slowTimed bool
}

// commandTable maps lowercase names to commands.
type commandTable struct {
	byName map[string]*command
	list   []*command // top-level commands, sorted by name
	all    []*command // list plus subcommands, indexed by id
}

func (t *commandTable) add(cmds ...*command) {
	for _, c := range cmds {
		c.Name = strings.ToLower(c.Name)
		if _, dup := t.byName[c.Name]; dup {
			panic("server: command registered twice: " + c.Name)
		}
		if c.Step == 0 && c.FirstKey > 0 {
			c.Step = 1
		}
		c.id = len(t.list)
		t.byName[c.Name] = c
		t.list = append(t.list, c)
	}
}

// lookup finds a command by name, case-insensitively, without allocating:
// the name is lowered into a stack buffer and the map lookup's string
// conversion does not escape.
func (t *commandTable) lookup(name []byte) *command {
	var buf [32]byte
	if len(name) > len(buf) {
		return nil
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return t.byName[string(buf[:len(name)])]
}

// registrars are the command groups' registration functions, added by each
// cmd_<group>.go's init. Only init functions write it; afterwards it is
// read-only.
var registrars []func(*commandTable)

// registerGroup adds a command group's registration function; call it from
// an init function in cmd_<group>.go.
func registerGroup(f func(*commandTable)) { registrars = append(registrars, f) }

// table returns the command table every Server uses, built on first use:
// package variables are initialised before init functions run, so the
// groups' registrations are only complete once main (or a test) runs.
var table = sync.OnceValue(func() *commandTable {
	t := &commandTable{byName: make(map[string]*command)}
	for _, r := range registrars {
		r(t)
	}
	sort.Slice(t.list, func(i, j int) bool { return t.list[i].Name < t.list[j].Name })
	for _, c := range t.list {
		c.id = len(t.all)
		c.slowTimed = slowTimedCmd(c)
		t.all = append(t.all, c)
		for _, sc := range c.Subcommands {
			sc.Name = strings.ToLower(sc.Name)
			if sc.Step == 0 && sc.FirstKey > 0 {
				sc.Step = 1
			}
			sc.id = len(t.all)
			sc.slowTimed = slowTimedCmd(sc)
			t.all = append(t.all, sc)
		}
	}
	return t
})
