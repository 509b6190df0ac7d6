package server

import (
	"runtime/debug"
	"strconv"
	"strings"
)

// The housekeeping commands test harnesses and client libraries call:
// LATENCY with nothing recorded, SLOWLOG (slowlog.go), MEMORY, DEBUG.
// Scripting (SCRIPT, FUNCTION, EVAL, FCALL) is in cmd_script.go and
// cmd_function.go.

func init() { registerGroup(registerHousekeepingCommands) }

func registerHousekeepingCommands(t *commandTable) {
	ns := flagNoScript
	t.add(
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

// writeSubcommandArityError is Redis's addReplyErrorArity for a
// subcommand: it names the subcommand as typed and its container's HELP.
func (c *Client) writeSubcommandArityError(args [][]byte) {
	c.writeError("ERR unknown subcommand or wrong number of arguments for '" + truncate(args[1], 128) + "'. Try " + strings.ToUpper(string(args[0])) + " HELP.")
}

// flushMode checks FUNCTION FLUSH's and SCRIPT FLUSH's optional
// ASYNC|SYNC (replying errMsg otherwise); both flush at once.
func flushMode(c *Client, args [][]byte, errMsg string) bool {
	if len(args) == 2 || len(args) == 3 && (equalFold(args[2], "sync") || equalFold(args[2], "async")) {
		return true
	}
	c.writeError(errMsg)
	return false
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
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
		"HELP",
		"    Prints this help.",
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
