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
	"dbsize": "keyspace", "flushall": "keyspace dangerous", "swapdb": "dangerous", "restore": "dangerous", "flushdb": "keyspace dangerous",
	"info": "dangerous", "keys": "dangerous", "lastsave": "admin dangerous",
	"command": "connection", "command|count": "connection", "command|docs": "connection",
	"command|getkeys": "connection", "command|help": "connection", "command|info": "connection",
	"command|list": "connection",
}

// categories returns cmd's ACL categories in Redis's order, with '@'.
func categories(cmd *command) []string {
	has := map[string]bool{}
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

// keySpecs returns cmd's key specs: one covering FirstKey..LastKey by Step,
// or, when Redis lists several (RENAME's source and destination), one
// per key from FirstKey. Each has Redis's flags (keySpecFlags) and notes.
func keySpecs(cmd *command) []keySpec {
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

// keySpec is one key spec of the "index" begin_search and "range"
// find_keys kinds, the only ones dpulab's commands need: keys from
// argument index to lastKey (relative to index; negative counts from the
// end) by keyStep.
type keySpec struct {
	flags            []string
	notes            string
	index            int
	lastKey, keyStep int
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
	c.writeBulkString("index")
	c.writeBulkString("spec")
	c.writeMap(1)
	c.writeBulkString("index")
	c.writeInt(int64(s.index))
	c.writeBulkString("find_keys")
	c.writeMap(2)
	c.writeBulkString("type")
	c.writeBulkString("range")
	c.writeBulkString("spec")
	c.writeMap(3)
	c.writeBulkString("lastkey")
	c.writeInt(int64(s.lastKey))
	c.writeBulkString("keystep")
	c.writeInt(int64(s.keyStep))
	c.writeBulkString("limit")
	c.writeInt(0)
}

// commandTips are Redis's command tips, space-separated in its order.
var commandTips = map[string]string{
	"xinfo|consumers": "nondeterministic_output",
	"xautoclaim":      "nondeterministic_output",
	"xclaim":          "nondeterministic_output",
	"xpending":        "nondeterministic_output",
	"xtrim":           "nondeterministic_output",
	"zrandmember":     "nondeterministic_output",
	"hrandfield":      "nondeterministic_output",
	"client|info":     "nondeterministic_output",
	"client|list":     "nondeterministic_output",
	"command":         "nondeterministic_output_order",
	"command|docs":    "nondeterministic_output_order",
	"command|info":    "nondeterministic_output_order",
	"command|list":    "nondeterministic_output_order",
	"config|set":      "request_policy:all_nodes response_policy:all_succeeded",
	"dbsize":          "request_policy:all_shards response_policy:agg_sum",
	"del":             "request_policy:multi_shard response_policy:agg_sum",
	"dump":            "nondeterministic_output",
	"exists":          "request_policy:multi_shard response_policy:agg_sum",
	"flushall":        "request_policy:all_shards response_policy:all_succeeded",
	"flushdb":         "request_policy:all_shards response_policy:all_succeeded",
	"hgetall":         "nondeterministic_output_order",
	"hkeys":           "nondeterministic_output_order",
	"hvals":           "nondeterministic_output_order",
	"info":            "nondeterministic_output request_policy:all_shards response_policy:special",
	"keys":            "request_policy:all_shards nondeterministic_output_order",
	"lastsave":        "nondeterministic_output",
	"mget":            "request_policy:multi_shard",
	"mset":            "request_policy:multi_shard response_policy:all_succeeded",
	"msetnx":          "request_policy:multi_shard response_policy:agg_min",
	"object|encoding": "nondeterministic_output",
	"object|freq":     "nondeterministic_output",
	"object|idletime": "nondeterministic_output",
	"object|refcount": "nondeterministic_output",
	"ping":            "request_policy:all_shards response_policy:all_succeeded",
	"pttl":            "nondeterministic_output",
	"randomkey":       "request_policy:all_shards nondeterministic_output",
	"scan":            "nondeterministic_output request_policy:special",
	"sdiff":           "nondeterministic_output_order",
	"sscan":           "nondeterministic_output",
	"hscan":           "nondeterministic_output",
	"zscan":           "nondeterministic_output",
	"sinter":          "nondeterministic_output_order",
	"smembers":        "nondeterministic_output_order",
	"spop":            "nondeterministic_output",
	"srandmember":     "nondeterministic_output",
	"sunion":          "nondeterministic_output_order",
	"time":            "nondeterministic_output",
	"touch":           "request_policy:multi_shard response_policy:agg_sum",
	"ttl":             "nondeterministic_output",
	"unlink":          "request_policy:multi_shard response_policy:agg_sum",
	"xadd":            "nondeterministic_output",
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
