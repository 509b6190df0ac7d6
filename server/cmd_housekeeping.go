package server

import (
	"bytes"
	"runtime/debug"
	"strconv"
	"strings"
)

// The housekeeping commands test harnesses and client libraries call:
// FUNCTION and SCRIPT with an empty library set, EVAL/FCALL refused,
// LATENCY with nothing recorded, SLOWLOG (slowlog.go), MEMORY.
//
// Why no Lua VM: dpulab's server is what a lab host runs to measure
// Redis-compatible throughput over TCP and RDMA. Scripts would put a
// second interpreter under the server's lock (a slow script stalls every
// client, which Redis answers with script timeouts, SCRIPT KILL and
// BUSY replies: a whole subsystem), and Redis's exact Lua 5.1 semantics
// (its cjson, cmsgpack and bit libraries, redis.call's error conversion)
// would have to be reproduced to the letter for a harness to trust the
// replies. None of the labs needs it, so scripts are refused with a clear
// error rather than half-run; the read-only housekeeping (FUNCTION LIST,
// STATS, FLUSH, DUMP, SCRIPT EXISTS, FLUSH) answers as Redis does for an
// empty library set, which is what harnesses call in their set-up.

func init() { registerGroup(registerHousekeepingCommands) }

func registerHousekeepingCommands(t *commandTable) {
	const sg = "scripting"
	ns := flagNoScript
	t.add(
		&command{Name: "function", Arity: -2, Group: sg, Summary: "A container for function commands", Since: "7.0.0",
			Subcommands: []*command{
				{Name: "function|flush", Fn: cmdFunctionFlush, Arity: -2, Flags: flagWrite | ns, Group: sg, Summary: "Deleting all functions", Since: "7.0.0"},
				{Name: "function|list", Fn: cmdFunctionList, Arity: -2, Flags: ns, Group: sg, Summary: "List information about all the functions", Since: "7.0.0"},
				{Name: "function|stats", Fn: cmdFunctionStats, Arity: 2, Flags: ns | flagAllowBusy, Group: sg, Summary: "Return information about the function currently running (name, description, duration)", Since: "7.0.0"},
				{Name: "function|dump", Fn: cmdFunctionDump, Arity: 2, Flags: ns, Group: sg, Summary: "Dump all functions into a serialized binary payload", Since: "7.0.0"},
				{Name: "function|restore", Fn: cmdFunctionRestore, Arity: -3, Flags: flagWrite | flagDenyOOM | ns, Group: sg, Summary: "Restore all the functions on the given payload", Since: "7.0.0"},
				{Name: "function|load", Fn: cmdScriptingRefused, Arity: -3, Flags: flagWrite | flagDenyOOM | ns, Group: sg, Summary: "Create a function with the given arguments (name, code, description)", Since: "7.0.0"},
				{Name: "function|delete", Fn: cmdFunctionDelete, Arity: 3, Flags: flagWrite | ns, Group: sg, Summary: "Delete a function by name", Since: "7.0.0"},
				{Name: "function|kill", Fn: cmdScriptKill, Arity: 2, Flags: ns | flagAllowBusy, Group: sg, Summary: "Kill the function currently in execution.", Since: "7.0.0"},
				{Name: "function|help", Fn: cmdFunctionHelp, Arity: 2, Flags: flagLoading | flagStale, Group: sg, Summary: "Show helpful text about the different subcommands", Since: "7.0.0"},
			}},
		&command{Name: "script", Arity: -2, Group: sg, Summary: "A container for Lua scripts management commands", Since: "2.6.0",
			Subcommands: []*command{
				{Name: "script|flush", Fn: cmdScriptFlush, Arity: -2, Flags: ns, Group: sg, Summary: "Remove all the scripts from the script cache.", Since: "2.6.0"},
				{Name: "script|exists", Fn: cmdScriptExists, Arity: -3, Flags: ns, Group: sg, Summary: "Check existence of scripts in the script cache.", Since: "2.6.0"},
				{Name: "script|load", Fn: cmdScriptingRefused, Arity: 3, Flags: ns | flagStale, Group: sg, Summary: "Load the specified Lua script into the script cache.", Since: "2.6.0"},
				{Name: "script|kill", Fn: cmdScriptKill, Arity: 2, Flags: ns | flagAllowBusy, Group: sg, Summary: "Kill the script currently in execution.", Since: "2.6.0"},
				{Name: "script|help", Fn: cmdScriptHelp, Arity: 2, Flags: flagLoading | flagStale, Group: sg, Summary: "Show helpful text about the different subcommands", Since: "5.0.0"},
			}},
		&command{Name: "eval", Fn: cmdScriptingRefused, Arity: -3, Flags: ns | flagStale, Group: sg, Summary: "Execute a Lua script server side", Since: "2.6.0"},
		&command{Name: "evalsha", Fn: cmdScriptingRefused, Arity: -3, Flags: ns | flagStale, Group: sg, Summary: "Execute a Lua script server side", Since: "2.6.0"},
		&command{Name: "eval_ro", Fn: cmdScriptingRefused, Arity: -3, Flags: flagReadonly | ns | flagStale, Group: sg, Summary: "Execute a read-only Lua script server side", Since: "7.0.0"},
		&command{Name: "evalsha_ro", Fn: cmdScriptingRefused, Arity: -3, Flags: flagReadonly | ns | flagStale, Group: sg, Summary: "Execute a read-only Lua script server side", Since: "7.0.0"},
		&command{Name: "fcall", Fn: cmdScriptingRefused, Arity: -3, Flags: ns | flagStale, Group: sg, Summary: "Invoke a function", Since: "7.0.0"},
		&command{Name: "fcall_ro", Fn: cmdScriptingRefused, Arity: -3, Flags: flagReadonly | ns | flagStale, Group: sg, Summary: "Invoke a read-only function", Since: "7.0.0"},
		&command{Name: "latency", Arity: -2, Group: "server", Summary: "A container for latency diagnostics commands", Since: "2.8.13",
			Subcommands: []*command{
				{Name: "latency|doctor", Fn: cmdLatencyDoctor, Arity: 2, Flags: flagAdmin | ns | flagLoading | flagStale, Group: "server", Summary: "Return a human readable latency analysis report.", Since: "2.8.13"},
				{Name: "latency|latest", Fn: cmdLatencyEmpty, Arity: 2, Flags: flagAdmin | ns | flagLoading | flagStale, Group: "server", Summary: "Return the latest latency samples for all events.", Since: "2.8.13"},
				{Name: "latency|history", Fn: cmdLatencyEmpty, Arity: 3, Flags: flagAdmin | ns | flagLoading | flagStale, Group: "server", Summary: "Return timestamp-latency samples for the event.", Since: "2.8.13"},
				{Name: "latency|reset", Fn: cmdLatencyReset, Arity: -2, Flags: flagAdmin | ns | flagLoading | flagStale, Group: "server", Summary: "Reset latency data for one or more events.", Since: "2.8.13"},
				{Name: "latency|graph", Fn: cmdLatencyGraph, Arity: 3, Flags: flagAdmin | ns | flagLoading | flagStale, Group: "server", Summary: "Return a latency graph for the event.", Since: "2.8.13"},
				{Name: "latency|histogram", Fn: cmdLatencyHistogram, Arity: -2, Flags: flagAdmin | ns | flagLoading | flagStale, Group: "server", Summary: "Return the cumulative distribution of latencies of a subset of commands or all commands.", Since: "7.0.0"},
				{Name: "latency|help", Fn: cmdLatencyHelp, Arity: 2, Flags: flagLoading | flagStale, Group: "server", Summary: "Show helpful text about the different subcommands.", Since: "2.8.13"},
			}},
		&command{Name: "slowlog", Arity: -2, Group: "server", Summary: "A container for slow log commands", Since: "2.2.12",
			Subcommands: []*command{
				{Name: "slowlog|get", Fn: cmdSlowlogGet, Arity: -2, Flags: flagAdmin | flagLoading | flagStale, Group: "server", Summary: "Get the slow log's entries", Since: "2.2.12"},
				{Name: "slowlog|len", Fn: cmdSlowlogLen, Arity: 2, Flags: flagAdmin | flagLoading | flagStale, Group: "server", Summary: "Get the slow log's length", Since: "2.2.12"},
				{Name: "slowlog|reset", Fn: cmdSlowlogReset, Arity: 2, Flags: flagAdmin | flagLoading | flagStale, Group: "server", Summary: "Clear all entries from the slow log", Since: "2.2.12"},
				{Name: "slowlog|help", Fn: cmdSlowlogHelp, Arity: 2, Flags: flagLoading | flagStale, Group: "server", Summary: "Show helpful text about the different subcommands", Since: "6.2.0"},
			}},
		&command{Name: "debug", Fn: cmdDebug, Arity: -2, Flags: flagAdmin | ns | flagLoading | flagStale, Group: "server", Summary: "A container for debugging commands", Since: "1.0.0"},
		&command{Name: "memory", Arity: -2, Group: "server", Summary: "A container for memory diagnostics commands", Since: "4.0.0",
			Subcommands: []*command{
				{Name: "memory|usage", Fn: cmdMemoryUsage, Arity: -3, Flags: flagReadonly, FirstKey: 2, LastKey: 2, Group: "server", Summary: "Estimate the memory usage of a key", Since: "4.0.0"},
				{Name: "memory|doctor", Fn: cmdMemoryDoctor, Arity: 2, Group: "server", Summary: "Outputs memory problems report", Since: "4.0.0"},
				{Name: "memory|stats", Fn: cmdMemoryStats, Arity: 2, Group: "server", Summary: "Show memory usage details", Since: "4.0.0"},
				{Name: "memory|purge", Fn: cmdMemoryPurge, Arity: 2, Group: "server", Summary: "Ask the allocator to release memory", Since: "4.0.0"},
				{Name: "memory|malloc-stats", Fn: cmdMemoryMallocStats, Arity: 2, Group: "server", Summary: "Show allocator internal stats", Since: "4.0.0"},
				{Name: "memory|help", Fn: cmdMemoryHelp, Arity: 2, Flags: flagLoading | flagStale, Group: "server", Summary: "Show helpful text about the different subcommands", Since: "4.0.0"},
			}},
	)
}

// errDebugRefused is Redis 7.0's refusal of DEBUG to a client that
// enable-debug-command does not allow (by default, everyone).
const errDebugRefused = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

// cmdDebug refuses DEBUG: with Redis's error to a client that
// enable-debug-command does not allow, else as not implemented: none of
// its subcommands is worth a lab's while (DEBUG SLEEP would stall every
// client, DEBUG RELOAD needs RDB persistence).
func cmdDebug(c *Client, args [][]byte) {
	if !c.debugAllowed() {
		c.writeError(errDebugRefused)
		return
	}
	if equalFold(args[1], "sleep") && len(args) == 3 {
		debugSleep(c, args) // shutdown.go
		return
	}
	c.writeError("ERR DEBUG " + strings.ToUpper(truncate(args[1], 128)) + " is not supported by dpulab's server (no DEBUG subcommand is implemented)")
}

// errNoScripting is the refusal of every command that would run a script.
const errNoScripting = "ERR scripting is not supported by dpulab's server (no Lua VM: EVAL, EVALSHA, FCALL and FUNCTION LOAD are refused); run the commands from the client, or use MULTI/EXEC for atomicity"

func cmdScriptingRefused(c *Client, args [][]byte) { c.writeError(errNoScripting) }

// writeSubcommandArityError is Redis's addReplyErrorArity for a
// subcommand: it names the subcommand as typed and its container's HELP.
func (c *Client) writeSubcommandArityError(args [][]byte) {
	c.writeError("ERR unknown subcommand or wrong number of arguments for '" + truncate(args[1], 128) + "'. Try " + strings.ToUpper(string(args[0])) + " HELP.")
}

// flushMode checks FUNCTION FLUSH's and SCRIPT FLUSH's optional
// ASYNC|SYNC (replying errMsg otherwise); there is nothing to flush
// either way.
func flushMode(c *Client, args [][]byte, errMsg string) bool {
	if len(args) == 2 || len(args) == 3 && (equalFold(args[2], "sync") || equalFold(args[2], "async")) {
		return true
	}
	c.writeError(errMsg)
	return false
}

func cmdFunctionFlush(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.writeSubcommandArityError(args)
		return
	}
	if flushMode(c, args, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option") {
		c.writeOK()
	}
}

func cmdFunctionList(c *Client, args [][]byte) {
	withCode, libName := false, false
	for i := 2; i < len(args); i++ {
		switch {
		case !withCode && equalFold(args[i], "withcode"):
			withCode = true
		case !libName && equalFold(args[i], "libraryname"):
			if i >= len(args)-1 {
				c.writeError("ERR library name argument was not given")
				return
			}
			libName = true
			i++
		default:
			c.writeError("ERR Unknown argument " + string(args[i]))
			return
		}
	}
	c.writeArray(0)
}

// cmdFunctionStats answers as Redis does with nothing running, except
// that no engine is listed: there is none.
func cmdFunctionStats(c *Client, args [][]byte) {
	c.writeMap(2)
	c.writeBulkString("running_script")
	c.writeNull()
	c.writeBulkString("engines")
	c.writeMap(0)
}

// rdbVersion is the RDB format version of Redis 7.0, which FUNCTION DUMP
// payloads carry.
const rdbVersion = 10

// crc64Jones is Redis's crc64 (Jones polynomial, reflected, no initial
// or final inversion, unlike hash/crc64), which ends DUMP payloads.
func crc64Jones(b []byte) uint64 {
	const poly = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9 reflected
	var crc uint64
	for _, x := range b {
		crc ^= uint64(x)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ poly
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// emptyFunctionDump is FUNCTION DUMP's payload for no libraries: the RDB
// version and the checksum, byte for byte what Redis 7.0 produces.
func emptyFunctionDump() []byte {
	p := []byte{rdbVersion, 0}
	crc := crc64Jones(p)
	for i := 0; i < 8; i++ {
		p = append(p, byte(crc>>(8*i)))
	}
	return p
}

func cmdFunctionDump(c *Client, args [][]byte) { c.writeBulk(emptyFunctionDump()) }

// cmdFunctionRestore accepts an empty library set (what FUNCTION DUMP gave)
// and refuses any library, which would need the scripting engine.
func cmdFunctionRestore(c *Client, args [][]byte) {
	if len(args) > 4 {
		c.writeSubcommandArityError(args)
		return
	}
	if len(args) == 4 && !equalFold(args[3], "replace") && !equalFold(args[3], "append") && !equalFold(args[3], "flush") {
		c.writeError("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
		return
	}
	p := args[2]
	if len(p) < 10 || p[len(p)-10] > rdbVersion || p[len(p)-9] != 0 || crc64Jones(p[:len(p)-8]) != leUint64(p[len(p)-8:]) {
		c.writeError("ERR DUMP payload version or checksum are wrong")
		return
	}
	if !bytes.Equal(p, emptyFunctionDump()) {
		c.writeError(errNoScripting)
		return
	}
	c.writeOK()
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func cmdFunctionDelete(c *Client, args [][]byte) { c.writeError("ERR Library not found") }

func cmdScriptKill(c *Client, args [][]byte) {
	c.writeError("NOTBUSY No scripts in execution right now.")
}

func cmdFunctionHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Refused: dpulab's server has no scripting engine.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library (there are none).",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries (none).",
		"STATS",
		"    Return information about the current function running.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries.",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload (an empty set only).",
		"HELP",
		"    Print this help.",
	})
}

func cmdScriptFlush(c *Client, args [][]byte) {
	if flushMode(c, args, "ERR SCRIPT FLUSH only support SYNC|ASYNC option") {
		c.writeOK()
	}
}

// cmdScriptExists: no script was ever loaded.
func cmdScriptExists(c *Client, args [][]byte) {
	c.writeArray(len(args) - 2)
	for range args[2:] {
		c.writeInt(0)
	}
}

func cmdScriptHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache (none).",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Refused: dpulab's server has no scripting engine.",
		"HELP",
		"    Print this help.",
	})
}

// LATENCY: dpulab's server does not sample latency events (Redis's
// latency monitor), so every event list is empty.

func cmdLatencyDoctor(c *Client, args [][]byte) {
	if c.srv.cfg.Tuning.LatencyMonitorThreshold == 0 {
		c.writeVerbatim("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
		return
	}
	c.writeVerbatim("dpulab's server does not sample latency events, so there is no latency spike to analyse. INFO commandstats has each command's total time.\n")
}

func cmdLatencyEmpty(c *Client, args [][]byte) { c.writeArray(0) }
func cmdLatencyReset(c *Client, args [][]byte) { c.writeInt(0) }

func cmdLatencyGraph(c *Client, args [][]byte) {
	c.writeError("ERR No samples available for event '" + string(args[2]) + "'")
}

// cmdLatencyHistogram is refused: Redis's histograms are of each call's
// duration, and dpulab's server times commands per pipelined batch (see
// slowlog.go), so it has no per-call distribution to report.
func cmdLatencyHistogram(c *Client, args [][]byte) {
	c.writeError("ERR LATENCY HISTOGRAM is not supported by dpulab's server (commands are timed per pipelined batch, not per call); INFO commandstats has each command's calls and mean time")
}

func cmdLatencyHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HELP",
		"    Print this help.",
	})
}

// cmdMemoryUsage is MEMORY USAGE key [SAMPLES n]: the bytes the keyspace
// accounts for the key (key, value and per-key overhead), which is what
// maxmemory and INFO count; like Redis it looks at the key without
// expiring it.
func cmdMemoryUsage(c *Client, args [][]byte) {
	for j := 3; j < len(args); j++ {
		if equalFold(args[j], "samples") && j+1 < len(args) {
			n, ok := parseInt(args[j+1])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			if n < 0 {
				c.writeError(errSyntax)
				return
			}
			j++
			continue
		}
		c.writeError(errSyntax)
		return
	}
	e, ok := c.db.keys[string(args[2])]
	if !ok {
		c.writeNull()
		return
	}
	c.writeInt(c.db.entryMem(string(args[2]), e))
}

func cmdMemoryDoctor(c *Client, args [][]byte) {
	var keys int
	for _, d := range c.srv.dbs {
		keys += len(d.keys)
	}
	c.writeVerbatim("dpulab's server holds " + strconv.Itoa(keys) + " keys in about " + strconv.FormatInt(c.srv.usedMemory(), 10) +
		" bytes (INFO memory has the details); it has no allocator fragmentation report.\n")
}

// cmdMemoryStats reports the figures the server has, under Redis's names.
func cmdMemoryStats(c *Client, args [][]byte) {
	used := c.srv.usedMemory()
	var keys, expires int64
	for _, d := range c.srv.dbs {
		keys += int64(len(d.keys))
		expires += int64(len(d.expires))
	}
	c.writeMap(5)
	c.writeBulkString("total.allocated")
	c.writeInt(used)
	c.writeBulkString("dataset.bytes")
	c.writeInt(used)
	c.writeBulkString("keys.count")
	c.writeInt(keys)
	c.writeBulkString("keys.bytes-per-key")
	if keys > 0 {
		c.writeInt(used / keys)
	} else {
		c.writeInt(0)
	}
	c.writeBulkString("expires.count")
	c.writeInt(expires)
}

// cmdMemoryPurge returns freed heap to the operating system, what
// jemalloc's purge does for Redis.
func cmdMemoryPurge(c *Client, args [][]byte) {
	debug.FreeOSMemory()
	c.writeOK()
}

func cmdMemoryMallocStats(c *Client, args [][]byte) {
	c.writeBulkString("Stats not supported for the current allocator")
}

func cmdMemoryHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"DOCTOR",
		"    Return memory problems reports.",
		"MALLOC-STATS",
		"    Return internal statistics report from the memory allocator.",
		"PURGE",
		"    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS",
		"    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).",
		"HELP",
		"    Print this help.",
	})
}
