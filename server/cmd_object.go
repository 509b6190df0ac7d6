package server

import (
	"math"
	"strings"
)

func init() { registerGroup(registerObjectCommands) }

func registerObjectCommands(t *commandTable) {
	const g = "generic"
	key := func(name string, fn cmdFunc, summary, since string) *command {
		return &command{Name: "object|" + name, Fn: fn, Arity: 3, Flags: flagReadonly, FirstKey: 2, LastKey: 2,
			Group: g, Summary: summary, Since: since}
	}
	t.add(
		&command{Name: "object", Arity: -2, Group: g, Summary: "A container for object introspection commands", Since: "2.2.3",
			Subcommands: []*command{
				key("encoding", cmdObjectEncoding, "Inspect the internal encoding of a Redis object", "2.2.3"),
				key("freq", cmdObjectFreq, "Get the logarithmic access frequency counter of a Redis object", "4.0.0"),
				key("idletime", cmdObjectIdleTime, "Get the time since a Redis object was last accessed", "2.2.3"),
				key("refcount", cmdObjectRefCount, "Get the number of references to the value of the key", "2.2.3"),
				{Name: "object|help", Fn: cmdObjectHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g,
					Summary: "Show helpful text about the different subcommands", Since: "6.2.0"},
			}},
	)
}

// Redis's string encodings: a string that is a canonical 64-bit integer of
// at most 20 characters is "int", one of at most 44 bytes "embstr" (object
// header and bytes in one allocation), a longer one "raw".
const (
	strIntMaxLen    = 20
	strEmbstrMaxLen = 44
	// sharedIntegers is Redis's OBJ_SHARED_INTEGERS: SET k 0..9999 stores a
	// shared object, whose REFCOUNT is sharedRefcount (INT_MAX).
	sharedIntegers = 10000
	sharedRefcount = math.MaxInt32
)

// stringEncoding names a string's encoding as Redis would for the same
// value stored by SET. dpulab keeps every string as one byte slice of
// exactly its length, so the name describes the value, not a different
// layout: unlike Redis it does not remember that APPEND or SETRANGE made
// a short value "raw" or that INCRBYFLOAT made an integer "embstr".
func stringEncoding(v []byte) string {
	if len(v) <= strIntMaxLen {
		if _, ok := parseRedisInt(v); ok {
			return "int"
		}
	}
	if len(v) <= strEmbstrMaxLen {
		return "embstr"
	}
	return "raw"
}

// encoding names the representation e's value is held in, with Redis's
// names for the same representations (type_<kind>.go keep Redis's small
// and big encodings and its conversion thresholds).
func encoding(e entry) string {
	switch e.kind() {
	case kindString:
		return stringEncoding(e.bytes())
	case kindList:
		// Redis 7.0 reports every list as a quicklist (7.2 added listpack
		// for small ones); ours is one ring buffer whatever its size.
		return "quicklist"
	case kindHash:
		if e.box().o.(*Hash).m != nil {
			return "hashtable"
		}
		return "listpack"
	case kindSet:
		if e.box().o.(*Set).idx != nil {
			return "hashtable"
		}
		return "intset"
	case kindZSet:
		if e.box().o.(*ZSet).isBig() {
			return "skiplist"
		}
		return "listpack"
	case kindStream:
		return "stream"
	}
	return "unknown"
}

// objectKey looks key up for OBJECT without touching its access clock,
// replying null when it does not exist.
func objectKey(c *Client, args [][]byte) (entry, bool) {
	e, ok := c.peek(args[2])
	if !ok {
		c.writeNull()
	}
	return e, ok
}

func cmdObjectEncoding(c *Client, args [][]byte) {
	if e, ok := objectKey(c, args); ok {
		c.writeBulkString(encoding(e))
	}
}

func cmdObjectRefCount(c *Client, args [][]byte) {
	e, ok := objectKey(c, args)
	if !ok {
		return
	}
	c.writeInt(int64(refCount(e, c.srv.cfg.MaxMemory, c.srv.cfg.MaxMemoryPolicy)))
}

// refCount is what Redis reports for e: SET stores 0..9999 as shared
// integers unless maxmemory is set with an LRU or LFU policy (which needs
// a clock per key); every other value has one reference.
func refCount(e entry, maxMemory int64, policy string) int {
	if e.kind() != kindString || len(e.bytes()) > strIntMaxLen {
		return 1
	}
	if maxMemory > 0 && (strings.HasSuffix(policy, "-lru") || strings.HasSuffix(policy, "-lfu")) {
		return 1
	}
	if n, ok := parseRedisInt(e.bytes()); ok && n >= 0 && n < sharedIntegers {
		return sharedRefcount
	}
	return 1
}

const lfuNote = " Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."

func cmdObjectIdleTime(c *Client, args [][]byte) {
	e, ok := objectKey(c, args)
	if !ok {
		return
	}
	if c.srv.lfu {
		c.writeError("ERR An LFU maxmemory policy is selected, idle time not tracked." + lfuNote)
		return
	}
	c.writeInt(int64(idleSeconds(e, c.srv.lruClock)))
}

func cmdObjectFreq(c *Client, args [][]byte) {
	e, ok := objectKey(c, args)
	if !ok {
		return
	}
	if !c.srv.lfu {
		c.writeError("ERR An LFU maxmemory policy is not selected, access frequency not tracked." + lfuNote)
		return
	}
	c.writeInt(int64(lfuCounter(e.lru(), c.srv.lfuMinutes)))
}

func cmdObjectHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"ENCODING <key>",
		"    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.",
		"FREQ <key>",
		"    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>",
		"    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>",
		"    Return the number of references of the value associated with the specified",
		"    <key>.",
		"HELP",
		"    Prints this help.",
	})
}
