package server

import "strings"

// COMMAND INFO's ACL categories, tips and key specs, as Redis 7.0 reports
// them for the commands dpulab has. Categories are derived the way Redis
// does (setImplicitACLCategories): one per group, plus @read/@write/
// @admin+@dangerous/@fast from the flags, else @slow. Tips and key-spec
// flags are Redis's data (src/commands/*.json), keyed by full name; the
// key positions themselves come from the command's FirstKey/LastKey/Step.

// aclCategories is Redis's category order, the order COMMAND INFO lists
// them in.
var aclCategories = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
	"connection", "transaction", "scripting"}

// groupCategory is the category a command of each COMMAND DOCS group has.
// Server commands have none of their own (see extraCategories).
var groupCategory = map[string]string{
	"generic": "keyspace", "string": "string", "list": "list", "hash": "hash", "set": "set",
	"sorted-set": "sortedset", "stream": "stream", "connection": "connection", "bitmap": "bitmap", "scripting": "scripting",
}

// extraCategories are categories Redis gives commands beyond their
// group's.
var extraCategories = map[string]string{
	"dbsize": "keyspace", "flushall": "keyspace dangerous", "swapdb": "dangerous", "restore": "dangerous", "restore-asking": "keyspace dangerous", "flushdb": "keyspace dangerous",
	"info": "dangerous", "keys": "dangerous", "lastsave": "admin dangerous",
	"command": "connection", "command|count": "connection", "command|docs": "connection",
	"command|getkeys": "connection", "command|help": "connection", "command|info": "connection",
	"command|list": "connection", "command|getkeysandflags": "connection",
}

// ownCategories are the categories of commands that Redis gives other
// than their group's (SORT is in the generic group but not @keyspace).
var ownCategories = map[string]string{
	"sort":    "write set sortedset list slow dangerous",
	"sort_ro": "read set sortedset list slow dangerous",
	"wait":    "slow connection",
	"role":    "admin fast dangerous",
}

// categories returns cmd's ACL categories in Redis's order, with '@'.
func categories(cmd *command) []string {
	has := map[string]bool{}
	if own, ok := ownCategories[cmd.Name]; ok {
		for _, c := range strings.Fields(own) {
			has[c] = true
		}
		var out []string
		for _, c := range aclCategories {
			if has[c] {
				out = append(out, "@"+c)
			}
		}
		return out
	}
	// A container (CLIENT, CONFIG, OBJECT) has no category of its own.
	if cmd.Fn != nil || cmd.Subcommands == nil {
		has[groupCategory[cmd.Group]] = true
	}
	for _, c := range strings.Fields(extraCategories[cmd.Name]) {
		has[c] = true
	}
	f := cmd.Flags
	has["write"] = has["write"] || f&flagWrite != 0
	has["read"] = has["read"] || f&flagReadonly != 0
	if f&flagAdmin != 0 {
		has["admin"], has["dangerous"] = true, true
	}
	has["pubsub"] = has["pubsub"] || f&flagPubSub != 0
	has["blocking"] = has["blocking"] || f&flagBlocking != 0
	has["fast"] = has["fast"] || f&flagFast != 0
	has["slow"] = !has["fast"]
	var out []string
	for _, c := range aclCategories {
		if has[c] {
			out = append(out, "@"+c)
		}
	}
	return out
}

// keySpecs returns cmd's key specs: Redis's own for the commands whose
// keys move with their arguments (movableKeySpecs), else one covering
// FirstKey..LastKey by Step, or, when Redis lists several (RENAME's source
// and destination), one per key from FirstKey. Each has Redis's flags
// (keySpecFlags) and notes.
func keySpecs(cmd *command) []keySpec {
	if specs, ok := movableKeySpecs[cmd.Name]; ok {
		return specs
	}
	flags, ok := keySpecFlags[cmd.Name]
	if !ok || cmd.FirstKey == 0 {
		return nil
	}
	alts := strings.Split(flags, "|")
	if len(alts) == 1 {
		last := cmd.LastKey
		if last >= 0 {
			last -= cmd.FirstKey
		}
		return []keySpec{{flags: strings.Fields(flags), notes: keySpecNotes[cmd.Name],
			index: cmd.FirstKey, lastKey: last, keyStep: cmd.Step}}
	}
	specs := make([]keySpec, len(alts))
	for i, a := range alts {
		specs[i] = keySpec{flags: strings.Fields(a), index: cmd.FirstKey + i, keyStep: 1}
	}
	// With LastKey -1 the last spec covers every remaining key (BITOP's
	// sources after its destination).
	if cmd.LastKey < 0 {
		specs[len(specs)-1].lastKey = cmd.LastKey
	}
	return specs
}

// keySpec is one of Redis 7.0's key specs. begin_search is "index" (the
// key arguments start at index), "keyword" (after keyword, searched from
// startFrom) or "unknown"; find_keys is "range" (to lastKey, relative to
// the start, negative from the end, by keyStep; with limit, only that
// fraction of what remains), "keynum" (the argument at keyNumIdx, relative
// to the start, gives the number of keys that start at firstKey) or
// "unknown".
type keySpec struct {
	flags            []string
	notes            string
	begin            byte // 'i' (also the zero value), 'k', 'u'
	index            int
	keyword          string
	startFrom        int
	find             byte // 'r' (also the zero value), 'n', 'u'
	lastKey, keyStep int
	limit            int
	keyNumIdx        int
	firstKey         int
}

// keynumSpec is the usual spec of a command with a numkeys argument at
// index: "numkeys key [key ...]".
func keynumSpec(flags string, index int) keySpec {
	return keySpec{flags: strings.Fields(flags), index: index, find: 'n', firstKey: 1, keyStep: 1}
}

// movableKeySpecs are Redis 7.0's key specs of the commands whose keys
// are not at fixed positions; COMMAND INFO flags them movablekeys and
// COMMAND GETKEYS follows the specs.
var movableKeySpecs = map[string][]keySpec{
	"sort": {
		{flags: []string{"RO", "access"}, index: 1, keyStep: 1},
		{flags: []string{"RO", "access"}, begin: 'u', find: 'u', notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"},
		{flags: []string{"OW", "update"}, begin: 'u', find: 'u', notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"},
	},
	"sort_ro": {
		{flags: []string{"RO", "access"}, index: 1, keyStep: 1},
		{flags: []string{"RO", "access"}, begin: 'u', find: 'u', notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"},
	},
	"zunionstore": {{flags: []string{"OW", "update"}, index: 1, keyStep: 1}, keynumSpec("RO access", 2)},
	"zinterstore": {{flags: []string{"OW", "update"}, index: 1, keyStep: 1}, keynumSpec("RO access", 2)},
	"zdiffstore":  {{flags: []string{"OW", "update"}, index: 1, keyStep: 1}, keynumSpec("RO access", 2)},
	"zunion":      {keynumSpec("RO access", 1)},
	"zinter":      {keynumSpec("RO access", 1)},
	"zdiff":       {keynumSpec("RO access", 1)},
	"zintercard":  {keynumSpec("RO access", 1)},
	"sintercard":  {keynumSpec("RO access", 1)},
	"lmpop":       {keynumSpec("RW access delete", 1)},
	"zmpop":       {keynumSpec("RW access delete", 1)},
	"blmpop":      {keynumSpec("RW access delete", 2)},
	"bzmpop":      {keynumSpec("RW access delete", 2)},
	"xread":       {{flags: []string{"RO", "access"}, begin: 'k', keyword: "STREAMS", startFrom: 1, lastKey: -1, keyStep: 1, limit: 2}},
	"xreadgroup":  {{flags: []string{"RO", "access"}, begin: 'k', keyword: "STREAMS", startFrom: 4, lastKey: -1, keyStep: 1, limit: 2}},
	"eval":        {withNotes(keynumSpec("RW access update", 2), "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")},
	"evalsha":     {keynumSpec("RW access update", 2)},
	"eval_ro":     {withNotes(keynumSpec("RO access", 2), "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")},
	"evalsha_ro":  {keynumSpec("RO access", 2)},
	"fcall":       {withNotes(keynumSpec("RW access update", 2), "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")},
	"fcall_ro":    {withNotes(keynumSpec("RO access", 2), "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")},
}

func withNotes(s keySpec, notes string) keySpec {
	s.notes = notes
	return s
}

// keysAndSpecs returns the positions of the key arguments in args
// (args[0] the command name) as Redis's getKeysUsingKeySpecs finds them,
// and for each the index of the key spec that found it (COMMAND
// GETKEYSANDFLAGS); ok is false for arguments the specs cannot be applied
// to.
func keysAndSpecs(cmd *command, args [][]byte) (pos, spec []int, ok bool) {
	specs := keySpecs(cmd)
	for si, s := range specs {
		var first int
		switch s.begin {
		case 'u':
			continue
		case 'k':
			first = -1
			for i := s.startFrom; i < len(args); i++ {
				if equalFold(args[i], strings.ToLower(s.keyword)) {
					first = i + 1
					break
				}
			}
			if first < 0 {
				return nil, nil, false
			}
		default:
			first = s.index
		}
		var last, step int
		switch s.find {
		case 'u':
			continue
		case 'n':
			idx := first + s.keyNumIdx
			if idx >= len(args) {
				return nil, nil, false
			}
			n, good := parseInt(args[idx])
			if !good || n < 0 || n > int64(len(args)) {
				return nil, nil, false
			}
			first += s.firstKey
			last, step = first+int(n)-1, s.keyStep
		default:
			switch {
			case s.lastKey >= 0:
				last = first + s.lastKey
			case s.limit <= 1:
				last = len(args) + s.lastKey
			default:
				last = first + (len(args)-first)/s.limit + s.lastKey
			}
			step = s.keyStep
		}
		if last >= len(args) {
			return nil, nil, false
		}
		for i := first; i <= last; i += step {
			pos = append(pos, i)
			spec = append(spec, si)
		}
	}
	if cmd.Name == "sort" || cmd.Name == "sort_ro" {
		for _, p := range sortStoreKey(args) {
			pos = append(pos, p)
			spec = append(spec, 2) // the STORE spec
		}
	}
	return pos, spec, true
}

// sortStoreKey is what Redis's sortGetKeys adds to SORT's key: the last
// STORE destination, options' own arguments skipped.
func sortStoreKey(args [][]byte) []int {
	store := -1
	for i := 2; i < len(args); i++ {
		switch {
		case equalFold(args[i], "limit"):
			i += 2
		case equalFold(args[i], "get"), equalFold(args[i], "by"):
			i++
		case equalFold(args[i], "store") && i+1 < len(args):
			store = i + 1
		}
	}
	if store < 0 || equalFold(args[0], "sort_ro") {
		return nil
	}
	return []int{store}
}

func (c *Client) writeKeySpec(s keySpec) {
	n := 3
	if s.notes != "" {
		n++
	}
	c.writeMap(n)
	if s.notes != "" {
		c.writeBulkString("notes")
		c.writeBulkString(s.notes)
	}
	c.writeBulkString("flags")
	c.writeSet(len(s.flags))
	for _, f := range s.flags {
		c.writeSimple(f)
	}
	c.writeBulkString("begin_search")
	c.writeMap(2)
	c.writeBulkString("type")
	switch s.begin {
	case 'u':
		c.writeBulkString("unknown")
		c.writeBulkString("spec")
		c.writeMap(0)
	case 'k':
		c.writeBulkString("keyword")
		c.writeBulkString("spec")
		c.writeMap(2)
		c.writeBulkString("keyword")
		c.writeBulkString(s.keyword)
		c.writeBulkString("startfrom")
		c.writeInt(int64(s.startFrom))
	default:
		c.writeBulkString("index")
		c.writeBulkString("spec")
		c.writeMap(1)
		c.writeBulkString("index")
		c.writeInt(int64(s.index))
	}
	c.writeBulkString("find_keys")
	c.writeMap(2)
	c.writeBulkString("type")
	switch s.find {
	case 'u':
		c.writeBulkString("unknown")
		c.writeBulkString("spec")
		c.writeMap(0)
	case 'n':
		c.writeBulkString("keynum")
		c.writeBulkString("spec")
		c.writeMap(3)
		c.writeBulkString("keynumidx")
		c.writeInt(int64(s.keyNumIdx))
		c.writeBulkString("firstkey")
		c.writeInt(int64(s.firstKey))
		c.writeBulkString("keystep")
		c.writeInt(int64(s.keyStep))
	default:
		c.writeBulkString("range")
		c.writeBulkString("spec")
		c.writeMap(3)
		c.writeBulkString("lastkey")
		c.writeInt(int64(s.lastKey))
		c.writeBulkString("keystep")
		c.writeInt(int64(s.keyStep))
		c.writeBulkString("limit")
		c.writeInt(int64(s.limit))
	}
}

// commandTips are Redis's command tips, space-separated in its order.
var commandTips = map[string]string{
	"xinfo|consumers":   "nondeterministic_output",
	"xautoclaim":        "nondeterministic_output",
	"xclaim":            "nondeterministic_output",
	"xpending":          "nondeterministic_output",
	"xtrim":             "nondeterministic_output",
	"zrandmember":       "nondeterministic_output",
	"hrandfield":        "nondeterministic_output",
	"client|info":       "nondeterministic_output",
	"client|list":       "nondeterministic_output",
	"command":           "nondeterministic_output_order",
	"command|docs":      "nondeterministic_output_order",
	"command|info":      "nondeterministic_output_order",
	"command|list":      "nondeterministic_output_order",
	"module|list":       "nondeterministic_output_order",
	"config|set":        "request_policy:all_nodes response_policy:all_succeeded",
	"dbsize":            "request_policy:all_shards response_policy:agg_sum",
	"wait":              "request_policy:all_shards response_policy:agg_min",
	"latency|histogram": "nondeterministic_output request_policy:all_nodes response_policy:special",
	"del":               "request_policy:multi_shard response_policy:agg_sum",
	"dump":              "nondeterministic_output",
	"exists":            "request_policy:multi_shard response_policy:agg_sum",
	"flushall":          "request_policy:all_shards response_policy:all_succeeded",
	"flushdb":           "request_policy:all_shards response_policy:all_succeeded",
	"hgetall":           "nondeterministic_output_order",
	"hkeys":             "nondeterministic_output_order",
	"hvals":             "nondeterministic_output_order",
	"info":              "nondeterministic_output request_policy:all_shards response_policy:special",
	"keys":              "request_policy:all_shards nondeterministic_output_order",
	"lastsave":          "nondeterministic_output",
	"mget":              "request_policy:multi_shard",
	"mset":              "request_policy:multi_shard response_policy:all_succeeded",
	"msetnx":            "request_policy:multi_shard response_policy:agg_min",
	"object|encoding":   "nondeterministic_output",
	"object|freq":       "nondeterministic_output",
	"object|idletime":   "nondeterministic_output",
	"object|refcount":   "nondeterministic_output",
	"ping":              "request_policy:all_shards response_policy:all_succeeded",
	"pttl":              "nondeterministic_output",
	"randomkey":         "request_policy:all_shards nondeterministic_output",
	"scan":              "nondeterministic_output request_policy:special",
	"sdiff":             "nondeterministic_output_order",
	"sscan":             "nondeterministic_output",
	"hscan":             "nondeterministic_output",
	"zscan":             "nondeterministic_output",
	"sinter":            "nondeterministic_output_order",
	"smembers":          "nondeterministic_output_order",
	"spop":              "nondeterministic_output",
	"srandmember":       "nondeterministic_output",
	"sunion":            "nondeterministic_output_order",
	"time":              "nondeterministic_output",
	"touch":             "request_policy:multi_shard response_policy:agg_sum",
	"ttl":               "nondeterministic_output",
	"unlink":            "request_policy:multi_shard response_policy:agg_sum",
	"xadd":              "nondeterministic_output",
}

// keySpecFlags are the flags of each key spec Redis 7.0 lists, specs
// separated by "|".
var keySpecFlags = map[string]string{
	"xinfo|consumers":       "RO access",
	"xinfo|groups":          "RO access",
	"xinfo|stream":          "RO access",
	"xautoclaim":            "RW delete",
	"xclaim":                "RW update",
	"xpending":              "RO access",
	"xack":                  "RW update",
	"xgroup|delconsumer":    "RW delete",
	"xgroup|createconsumer": "RW insert",
	"xgroup|destroy":        "RW delete",
	"xgroup|setid":          "RW update",
	"xgroup|create":         "RW insert",
	"xdel":                  "RW delete",
	"xtrim":                 "RW delete",
	"memory|usage":          "RO",
	"lcs":                   "RO access",
	"zremrangebylex":        "RW delete",
	"zremrangebyscore":      "RW delete",
	"zremrangebyrank":       "RW delete",
	"zlexcount":             "RO access",
	"zmscore":               "RO access",
	"zrandmember":           "RO access",
	"zdiffstore":            "OW update",
	"zinterstore":           "OW update",
	"zunionstore":           "OW update",
	"zrangestore":           "OW update|RO access",
	"hrandfield":            "RO access",
	"sdiffstore":            "OW update|RO access",
	"sunionstore":           "OW update|RO access",
	"sinterstore":           "RW update|RO access",
	"smove":                 "RW access delete|RW insert",
	"rpoplpush":             "RW access delete|RW insert",
	"lmove":                 "RW access delete|RW insert",
	"lpos":                  "RO access",
	"append":                "RW insert",
	"bitcount":              "RO access",
	"bitfield":              "RW access update variable_flags",
	"bitfield_ro":           "RO access",
	"bitop":                 "OW update|RO access",
	"bitpos":                "RO access",
	"getbit":                "RO access",
	"setbit":                "RW access update",
	"decr":                  "RW access update",
	"decrby":                "RW access update",
	"copy":                  "RO access|OW update",
	"dump":                  "RO access",
	"move":                  "RW access update",
	"restore":               "OW update",
	"restore-asking":        "OW update",
	"del":                   "RM delete",
	"exists":                "RO",
	"watch":                 "RO",
	"expire":                "RW update",
	"expireat":              "RW update",
	"expiretime":            "RO access",
	"get":                   "RO access",
	"getdel":                "RW access delete",
	"getex":                 "RW access update",
	"getrange":              "RO access",
	"getset":                "RW access update",
	"hdel":                  "RW delete",
	"hexists":               "RO",
	"hget":                  "RO access",
	"hgetall":               "RO access",
	"hincrby":               "RW access update",
	"hincrbyfloat":          "RW access update",
	"hkeys":                 "RO access",
	"hlen":                  "RO",
	"hmget":                 "RO access",
	"hscan":                 "RO access",
	"hmset":                 "RW update",
	"hset":                  "RW update",
	"hsetnx":                "RW insert",
	"hstrlen":               "RO",
	"hvals":                 "RO access",
	"incr":                  "RW access update",
	"incrby":                "RW access update",
	"incrbyfloat":           "RW access update",
	"lindex":                "RO access",
	"linsert":               "RW insert",
	"llen":                  "RO",
	"lpop":                  "RW access delete",
	"lpush":                 "RW insert",
	"lpushx":                "RW insert",
	"lrange":                "RO access",
	"lrem":                  "RW delete",
	"lset":                  "RW update",
	"ltrim":                 "RW delete",
	"mget":                  "RO access",
	"mset":                  "OW update",
	"msetnx":                "OW insert",
	"object|encoding":       "RO",
	"object|freq":           "RO",
	"object|idletime":       "RO",
	"object|refcount":       "RO",
	"persist":               "RW update",
	"pexpire":               "RW update",
	"pexpireat":             "RW update",
	"pexpiretime":           "RO access",
	"psetex":                "OW update",
	"pttl":                  "RO access",
	"rename":                "RW access delete|OW update",
	"renamenx":              "RW access delete|OW insert",
	"rpop":                  "RW access delete",
	"rpush":                 "RW insert",
	"rpushx":                "RW insert",
	"sadd":                  "RW insert",
	"scard":                 "RO",
	"sdiff":                 "RO access",
	"set":                   "RW access update variable_flags",
	"setex":                 "OW update",
	"setnx":                 "OW insert",
	"setrange":              "RW update",
	"sinter":                "RO access",
	"sismember":             "RO",
	"smembers":              "RO access",
	"smismember":            "RO access",
	"spop":                  "RW access delete",
	"sort":                  "RO access",
	"sort_ro":               "RO access",
	"sscan":                 "RO access",
	"srandmember":           "RO access",
	"srem":                  "RW delete",
	"strlen":                "RO",
	"substr":                "RO access",
	"sunion":                "RO access",
	"touch":                 "RO",
	"ttl":                   "RO access",
	"type":                  "RO",
	"unlink":                "RM delete",
	"xadd":                  "RW update",
	"xlen":                  "RO",
	"xsetid":                "RW update",
	"xrange":                "RO access",
	"xrevrange":             "RO access",
	"zadd":                  "RW update",
	"zcard":                 "RO",
	"zcount":                "RO access",
	"zincrby":               "RW access update",
	"zpopmax":               "RW access delete",
	"zpopmin":               "RW access delete",
	"zrange":                "RO access",
	"zrangebylex":           "RO access",
	"zrangebyscore":         "RO access",
	"zrank":                 "RO access",
	"zrem":                  "RW delete",
	"zrevrange":             "RO access",
	"zrevrangebylex":        "RO access",
	"zrevrangebyscore":      "RO access",
	"zrevrank":              "RO access",
	"zscan":                 "RO access",
	"zscore":                "RO access",
}

// keySpecNotes are the notes Redis gives a command's only key spec.
var keySpecNotes = map[string]string{
	"bitfield": "This command allows both access and modification of the key",
	"getex":    "RW and UPDATE because it changes the TTL",
	"set":      "RW and ACCESS due to the optional `GET` argument",
	"xadd":     "UPDATE instead of INSERT because of the optional trimming feature",
}
