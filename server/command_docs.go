package server

import "strings"

// usages are the commands' argument syntax as Redis documents it. COMMAND
// DOCS turns them into argument trees: redis-cli 7 builds its as-you-type
// hints from those, so without them an interactive redis-cli shows none.
var usages = map[string]string{
	"append": "key value", "auth": "[username] password", "dbsize": "", "decr": "key",
	"decrby": "key decrement", "del": "key [key ...]", "echo": "message", "exists": "key [key ...]",
	"expire":   "key seconds [NX|XX|GT|LT]",
	"expireat": "key unix-time-seconds [NX|XX|GT|LT]", "expiretime": "key",
	"flushall": "[ASYNC|SYNC]", "flushdb": "[ASYNC|SYNC]", "get": "key", "getdel": "key",
	"getex":    "key [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|PERSIST]",
	"getrange": "key start end", "getset": "key value",
	"hello": "[protover [AUTH username password] [SETNAME clientname]]",
	"incr":  "key", "incrby": "key increment", "incrbyfloat": "key increment", "info": "[section [section ...]]",
	"keys": "pattern", "lastsave": "", "mget": "key [key ...]", "mset": "key value [key value ...]",
	"msetnx": "key value [key value ...]", "persist": "key", "pexpire": "key milliseconds [NX|XX|GT|LT]",
	"pexpireat": "key unix-time-milliseconds [NX|XX|GT|LT]", "pexpiretime": "key",
	"ping": "[message]", "psetex": "key milliseconds value", "pttl": "key", "quit": "", "randomkey": "",
	"rename": "key newkey", "renamenx": "key newkey", "reset": "",
	"scan": "cursor [MATCH pattern] [COUNT count] [TYPE type]", "select": "index",
	"set":   "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]",
	"setex": "key seconds value", "setnx": "key value", "setrange": "key offset value",
	"shutdown": "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]", "strlen": "key", "substr": "key start end",
	"time": "", "touch": "key [key ...]", "ttl": "key", "type": "key", "unlink": "key [key ...]",
	"config|get": "parameter [parameter ...]", "config|set": "parameter value [parameter value ...]",
	"client|setname": "connection-name", "client|setinfo": "LIB-NAME libname|LIB-VER libver",
	"client|kill":     "[ip:port] [ID client-id] [ADDR ip:port] [LADDR ip:port] [SKIPME yes/no]",
	"client|list":     "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]",
	"client|no-evict": "ON|OFF", "command|info": "[command-name [command-name ...]]",
	"object|encoding": "key", "object|freq": "key", "object|idletime": "key", "object|refcount": "key",
	"command|docs": "[command-name [command-name ...]]", "command|getkeys": "command [arg [arg ...]]",
	"lpush": "key element [element ...]", "rpush": "key element [element ...]",
	"lpushx": "key element [element ...]", "rpushx": "key element [element ...]",
	"lpop": "key [count]", "rpop": "key [count]", "llen": "key", "lrange": "key start stop",
	"lindex": "key index", "lset": "key index element", "ltrim": "key start stop",
	"lrem": "key count element", "linsert": "key BEFORE|AFTER pivot element",
	"hset": "key field value [field value ...]", "hsetnx": "key field value", "hget": "key field",
	"hmget": "key field [field ...]", "hmset": "key field value [field value ...]", "hgetall": "key",
	"hdel": "key field [field ...]", "hlen": "key", "hexists": "key field",
	"hincrby": "key field increment", "hincrbyfloat": "key field increment", "hkeys": "key",
	"hvals": "key", "hstrlen": "key field",
	"sadd": "key member [member ...]", "srem": "key member [member ...]", "smembers": "key",
	"sismember": "key member", "smismember": "key member [member ...]", "scard": "key",
	"spop": "key [count]", "srandmember": "key [count]", "sinter": "key [key ...]",
	"sunion": "key [key ...]", "sdiff": "key [key ...]",
	"zadd": "key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]",
	"zrem": "key member [member ...]", "zcard": "key", "zscore": "key member",
	"zincrby":       "key increment member",
	"zrange":        "key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]",
	"zrangebyscore": "key min max [WITHSCORES] [LIMIT offset count]",
	"zrank":         "key member", "zrevrank": "key member", "zcount": "key min max",
	"zpopmin": "key [count]", "zpopmax": "key [count]",
	"xadd": "key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]",
	"xlen": "key", "xrange": "key start end [COUNT count]",
	// Issue 19's commands.
	"setbit": "key offset value", "getbit": "key offset", "bitcount": "key [start end [BYTE|BIT]]",
	"bitpos": "key bit [start [end [BYTE|BIT]]]", "bitop": "AND|OR|XOR|NOT destkey key [key ...]",
	"bitfield":    "key [GET encoding offset|SET encoding offset value|INCRBY encoding offset increment|OVERFLOW WRAP|SAT|FAIL [GET encoding offset ...]]",
	"bitfield_ro": "key [GET encoding offset [GET encoding offset ...]]",
	"sscan":       "key cursor [MATCH pattern] [COUNT count]", "hscan": "key cursor [MATCH pattern] [COUNT count]",
	"zscan": "key cursor [MATCH pattern] [COUNT count]",
	"copy":  "source destination [DB destination-db] [REPLACE]", "move": "key db", "swapdb": "index1 index2",
	"sort":    "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination]",
	"sort_ro": "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]",
	"dump":    "key", "restore": "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]", "restore-asking": "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]",
	"lpos":  "key element [RANK rank] [COUNT num-matches] [MAXLEN len]",
	"lmove": "source destination LEFT|RIGHT LEFT|RIGHT", "rpoplpush": "source destination",
	"lmpop":      "numkeys key [key ...] LEFT|RIGHT [COUNT count]",
	"hrandfield": "key [count [WITHVALUES]]", "smove": "source destination member",
	"sintercard":  "numkeys key [key ...] [LIMIT limit]",
	"sinterstore": "destination key [key ...]", "sunionstore": "destination key [key ...]",
	"sdiffstore":  "destination key [key ...]",
	"zrangestore": "dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]",
	"zunion":      "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]",
	"zinter":      "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]",
	"zdiff":       "numkeys key [key ...] [WITHSCORES]",
	"zunionstore": "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]",
	"zinterstore": "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]",
	"zdiffstore":  "destination numkeys key [key ...]", "zintercard": "numkeys key [key ...] [LIMIT limit]",
	"zrandmember": "key [count [WITHSCORES]]", "zmscore": "key member [member ...]",
	"zlexcount": "key min max", "zremrangebyrank": "key start stop", "zremrangebyscore": "key min max",
	"zremrangebylex": "key min max", "zmpop": "numkeys key [key ...] MIN|MAX [COUNT count]",
	"xsetid": "key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]",
	"xdel":   "key id [id ...]", "xtrim": "key MAXLEN|MINID [=|~] threshold [LIMIT count]",
	"xreadgroup":    "GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]",
	"xack":          "key group id [id ...]",
	"xpending":      "key group [[IDLE min-idle-time] start end count [consumer]]",
	"xclaim":        "key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]",
	"xautoclaim":    "key group consumer min-idle-time start [COUNT count] [JUSTID]",
	"xgroup|create": "key group id|$ [MKSTREAM] [ENTRIESREAD entries-read]",
	"xgroup|setid":  "key group id|$ [ENTRIESREAD entries-read]", "xgroup|destroy": "key group",
	"xgroup|createconsumer": "key group consumer", "xgroup|delconsumer": "key group consumer",
	"xinfo|stream": "key [FULL [COUNT count]]", "xinfo|groups": "key", "xinfo|consumers": "key group",
	"lcs":            "key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]",
	"function|flush": "[ASYNC|SYNC]", "function|list": "[LIBRARYNAME library-name-pattern] [WITHCODE]",
	"function|restore": "serialized-value [FLUSH|APPEND|REPLACE]", "function|delete": "library-name",
	"function|load": "[REPLACE] function-code", "script|flush": "[ASYNC|SYNC]",
	"script|exists": "sha1 [sha1 ...]", "script|load": "script",
	"eval": "script numkeys [key [key ...]] [arg [arg ...]]", "evalsha": "sha1 numkeys [key [key ...]] [arg [arg ...]]",
	"fcall":           "function numkeys [key [key ...]] [arg [arg ...]]",
	"latency|history": "event", "latency|reset": "[event [event ...]]", "latency|graph": "event",
	"slowlog|get": "[count]", "memory|usage": "key [SAMPLES count]",
	"client|pause": "timeout [WRITE|ALL]", "client|tracking": "ON|OFF [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]",
}

// docArg is one node of a COMMAND DOCS argument tree.
type docArg struct {
	name, typ, token string
	optional         bool
	multiple         bool
	sub              []docArg
}

func tokenizeUsage(s string) []string {
	var out []string
	cur := ""
	flush := func() {
		if cur != "" {
			out = append(out, cur)
			cur = ""
		}
	}
	for _, r := range s {
		switch r {
		case '[', ']', '|':
			flush()
			out = append(out, string(r))
		case ' ':
			flush()
		default:
			cur += string(r)
		}
	}
	flush()
	return out
}

func isTokenWord(w string) bool {
	return w == strings.ToUpper(w) && strings.ToLower(w) != w || w == "*" || w == "=" || w == "~"
}

func argType(name string) string {
	switch {
	case name == "key" || name == "newkey" || name == "destination":
		return "key"
	case name == "pattern":
		return "pattern"
	case strings.HasPrefix(name, "unix-time"):
		return "unix-time"
	case name == "count" || name == "seconds" || name == "milliseconds" || name == "index" || name == "start" ||
		name == "stop" || name == "end" || name == "offset" || name == "increment" || name == "decrement" ||
		name == "cursor" || name == "protover" || name == "client-id":
		return "integer"
	case name == "score" || name == "min" || name == "max":
		return "double"
	}
	return "string"
}

// parseUsageSeq parses items until ']' or '|' or the end; it returns the
// items and the position after them.
func parseUsageSeq(toks []string, i int) ([]docArg, int) {
	var seq []docArg
	for i < len(toks) {
		t := toks[i]
		switch {
		case t == "]" || t == "|":
			return seq, i
		case t == "[":
			var alts [][]docArg
			i++
			for {
				alt, j := parseUsageSeq(toks, i)
				alts = append(alts, alt)
				i = j
				if i < len(toks) && toks[i] == "|" {
					i++
					continue
				}
				break
			}
			i++ // ']'
			// "x [x ...]" is Redis's way to write "one or more x": fold
			// the repetition into the preceding items, flagged multiple.
			if last := alts[len(alts)-1]; len(alts) == 1 && len(last) > 0 && last[len(last)-1].name == "..." {
				rep := last[:len(last)-1]
				if n := len(rep); n > 0 && n <= len(seq) && sameArgs(seq[len(seq)-n:], rep) {
					token := seq[len(seq)-n].token
					seq = seq[:len(seq)-n]
					a := group([][]docArg{rep})
					a.multiple = true
					if n == 1 {
						a.token = token // "ID id [id ...]": one token, many ids
					}
					seq = append(seq, a)
					continue
				}
				alts[0] = rep
				a := group(alts)
				a.optional, a.multiple = true, true
				seq = append(seq, a)
				continue
			}
			// "[TYPE A|B|C]": a leading token names the choice that follows.
			lead := ""
			if len(alts) > 1 && len(alts[0]) == 2 && alts[0][0].typ == "pure-token" && alts[0][1].typ == "pure-token" {
				lead = alts[0][0].token
				alts[0] = alts[0][1:]
			}
			a := group(alts)
			a.optional = true
			if lead != "" {
				a.token = lead
			}
			seq = append(seq, a)
		case t == "...":
			// Kept as a marker; the enclosing bracket folds it.
			seq = append(seq, docArg{name: "..."})
			i++
		case isTokenWord(t) && i+1 < len(toks) && !isTokenWord(toks[i+1]) && toks[i+1] != "|" && toks[i+1] != "]" && toks[i+1] != "[" && toks[i+1] != "...":
			name := toks[i+1]
			seq = append(seq, docArg{name: name, typ: argType(name), token: t})
			i += 2
		case isTokenWord(t):
			seq = append(seq, docArg{name: strings.ToLower(t), typ: "pure-token", token: t})
			i++
		default:
			seq = append(seq, docArg{name: t, typ: argType(t)})
			i++
		}
	}
	// A bare "a|b" at top level (e.g. "ON|OFF").
	return seq, i
}

func sameArgs(a, b []docArg) bool {
	for i := range a {
		if a[i].name != b[i].name || a[i].typ != b[i].typ {
			return false
		}
	}
	return true
}

// group makes one argument from alternatives: a oneof when there are
// several, a block for a multi-item sequence, else the single item.
func group(alts [][]docArg) docArg {
	if len(alts) == 1 {
		if len(alts[0]) == 1 {
			return alts[0][0]
		}
		return docArg{name: "block", typ: "block", sub: alts[0]}
	}
	var sub []docArg
	for _, a := range alts {
		sub = append(sub, group([][]docArg{a}))
	}
	return docArg{name: "condition", typ: "oneof", sub: sub}
}

// usageArgs returns cmd's argument trees, handling top-level "a|b".
func usageArgs(name string) ([]docArg, bool) {
	u, ok := usages[name]
	if !ok {
		return nil, false
	}
	toks := tokenizeUsage(u)
	var alts [][]docArg
	i := 0
	for {
		seq, j := parseUsageSeq(toks, i)
		alts = append(alts, seq)
		i = j
		if i < len(toks) && toks[i] == "|" {
			i++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], true
	}
	return []docArg{group(alts)}, true
}

// keyArgs numbers a command's key arguments with the key spec describing
// each (COMMAND DOCS's key_spec_index): with one spec every key argument
// has index 0, with several (RENAME) the n-th key argument has spec n.
type keyArgs struct {
	specs, next int
}

func (k *keyArgs) index() int {
	if k.specs == 1 {
		return 0
	}
	i := k.next
	k.next++
	return i
}

func (c *Client) writeDocArgs(args []docArg, keys *keyArgs) {
	c.writeArray(len(args))
	for _, a := range args {
		n := 2
		hasSpec := a.typ == "key" && keys.specs > 0
		if hasSpec {
			n++
		}
		if a.token != "" {
			n++
		}
		var flags []string
		if a.optional {
			flags = append(flags, "optional")
		}
		if a.multiple {
			flags = append(flags, "multiple")
		}
		if len(flags) > 0 {
			n++
		}
		if len(a.sub) > 0 {
			n++
		}
		c.writeMap(n)
		c.writeBulkString("name")
		c.writeBulkString(a.name)
		c.writeBulkString("type")
		c.writeBulkString(a.typ)
		if hasSpec {
			c.writeBulkString("key_spec_index")
			c.writeInt(int64(keys.index()))
		}
		if a.token != "" {
			c.writeBulkString("token")
			c.writeBulkString(a.token)
		}
		if len(flags) > 0 {
			c.writeBulkString("flags")
			c.writeSet(len(flags)) // a set, as Redis: ~2 in RESP3
			for _, f := range flags {
				c.writeSimple(f)
			}
		}
		if len(a.sub) > 0 {
			c.writeBulkString("arguments")
			c.writeDocArgs(a.sub, keys)
		}
	}
}
