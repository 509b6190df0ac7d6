package server

import (
	"crypto/sha1"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/osproc"
)

func init() { registerGroup(registerServerCommands) }

func registerServerCommands(t *commandTable) {
	const g = "server"
	adm := flagAdmin | flagNoScript | flagLoading | flagStale
	t.add(
		&command{Name: "info", Fn: cmdInfo, Arity: -1, Flags: flagLoading | flagStale, Group: g, Summary: "Returns information and statistics about the server.", Since: "1.0.0"},
		&command{Name: "dbsize", Fn: cmdDBSize, Arity: 1, Flags: flagReadonly | flagFast, Group: g, Summary: "Returns the number of keys in the database.", Since: "1.0.0"},
		&command{Name: "flushdb", Fn: cmdFlushDB, Arity: -1, Flags: flagWrite, Group: g, Summary: "Remove all keys from the current database.", Since: "1.0.0"},
		&command{Name: "flushall", Fn: cmdFlushAll, Arity: -1, Flags: flagWrite, Group: g, Summary: "Removes all keys from all databases.", Since: "1.0.0"},
		&command{Name: "time", Fn: cmdTime, Arity: 1, Flags: flagLoading | flagStale | flagFast, Group: g, Summary: "Returns the server time.", Since: "2.6.0"},
		&command{Name: "lastsave", Fn: cmdLastSave, Arity: 1, Flags: flagLoading | flagStale | flagFast, Group: g, Summary: "Returns the Unix timestamp of the last successful save to disk.", Since: "1.0.0"},
		&command{Name: "shutdown", Fn: cmdShutdown, Arity: -1, Flags: adm | flagNoMulti | flagAllowBusy, Group: g, Summary: "Synchronously saves the database(s) to disk and shuts down the Redis server.", Since: "1.0.0"},
		&command{Name: "config", Arity: -2, Group: g, Summary: "A container for server configuration commands.", Since: "2.0.0",
			Subcommands: []*command{
				{Name: "config|get", Fn: cmdConfigGet, Arity: -3, Flags: adm, Group: g, Summary: "Returns the effective values of configuration parameters.", Since: "2.0.0"},
				{Name: "config|set", Fn: cmdConfigSet, Arity: -4, Flags: adm, Group: g, Summary: "Sets configuration parameters in-flight.", Since: "2.0.0"},
				{Name: "config|resetstat", Fn: cmdConfigResetStat, Arity: 2, Flags: adm, Group: g, Summary: "Resets the server's statistics.", Since: "2.0.0"},
				{Name: "config|rewrite", Fn: cmdConfigRewrite, Arity: 2, Flags: adm, Group: g, Summary: "Persists the effective configuration to file.", Since: "2.8.0"},
				{Name: "config|help", Fn: cmdConfigHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Returns helpful text about the different subcommands.", Since: "5.0.0"},
			}},
		&command{Name: "command", Fn: cmdCommand, Arity: -1, Flags: flagLoading | flagStale, Group: g, Summary: "Returns detailed information about all commands.", Since: "2.8.13",
			Subcommands: []*command{
				{Name: "command|count", Fn: cmdCommandCount, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Returns a count of commands.", Since: "2.8.13"},
				{Name: "command|info", Fn: cmdCommandInfo, Arity: -2, Flags: flagLoading | flagStale, Group: g, Summary: "Returns information about one, multiple or all commands.", Since: "2.8.13"},
				{Name: "command|docs", Fn: cmdCommandDocs, Arity: -2, Flags: flagLoading | flagStale, Group: g, Summary: "Returns documentary information about one, multiple or all commands.", Since: "7.0.0"},
				{Name: "command|list", Fn: cmdCommandList, Arity: -2, Flags: flagLoading | flagStale, Group: g, Summary: "Returns a list of command names.", Since: "7.0.0"},
				{Name: "command|getkeysandflags", Fn: cmdCommandGetKeysAndFlags, Arity: -4, Flags: flagLoading | flagStale, Group: g, Summary: "Extracts the key names and access flags for an arbitrary command.", Since: "7.0.0"},
				{Name: "command|getkeys", Fn: cmdCommandGetKeys, Arity: -4, Flags: flagLoading | flagStale, Group: g, Summary: "Extracts the key names from an arbitrary command.", Since: "2.8.13"},
				{Name: "command|help", Fn: cmdCommandHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Returns helpful text about the different subcommands.", Since: "5.0.0"},
			}},
	)
}

func cmdDBSize(c *Client, args [][]byte) { c.writeInt(int64(len(c.db.keys))) }

func flushArg(c *Client, args [][]byte) bool {
	if len(args) > 2 || len(args) == 2 && !equalFold(args[1], "async") && !equalFold(args[1], "sync") {
		c.writeError(errSyntax)
		return false
	}
	return true
}

func (d *db) flush() {
	d.touchAll()
	for _, e := range d.keys {
		if e.kind() != kindString {
			e.box().gone = true
		}
	}
	d.keys = make(map[string]entry)
	d.expires = make(map[string]int64)
	d.used = 0
	d.scans = nil // iterations over the old keys would only hold them
}

func cmdFlushDB(c *Client, args [][]byte) {
	if !flushArg(c, args) {
		return
	}
	c.srv.stats.dirty += int64(len(c.db.keys))
	c.db.flush()
	c.srv.trackingFlushed()
	c.writeOK()
}

func cmdFlushAll(c *Client, args [][]byte) {
	if !flushArg(c, args) {
		return
	}
	for _, d := range c.srv.dbs {
		c.srv.stats.dirty += int64(len(d.keys))
		d.flush()
	}
	c.srv.trackingFlushed()
	c.writeOK()
}

func cmdTime(c *Client, args [][]byte) {
	now := time.Now()
	c.writeArray(2)
	c.writeBulkString(strconv.FormatInt(now.Unix(), 10))
	c.writeBulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
}

func cmdLastSave(c *Client, args [][]byte) { c.writeInt(c.srv.start.Unix()) }

func cmdShutdown(c *Client, args [][]byte) {
	for _, a := range args[1:] {
		if !equalFold(a, "nosave") && !equalFold(a, "save") && !equalFold(a, "now") && !equalFold(a, "force") && !equalFold(a, "abort") {
			c.writeError(errSyntax)
			return
		}
		if equalFold(a, "abort") {
			c.writeError("ERR No shutdown in progress.")
			return
		}
	}
	c.srv.logf('#', "User requested shutdown...")
	c.closeAfter = true
	// stop takes other locks than mu; run it outside this command so the
	// batch finishes first.
	go c.srv.stop()
}

// ---- CONFIG ----

func cmdConfigGet(c *Client, args [][]byte) {
	cfg := &c.srv.cfg
	type kv struct{ k, v string }
	var out []kv
	seen := map[string]bool{}
	add := func(k, v string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, kv{k, v})
		}
	}
	for _, pat := range args[2:] {
		lp := []byte(strings.ToLower(string(pat)))
		for _, d := range directives() {
			if globMatch(lp, []byte(d.name), true) {
				add(d.name, d.get(cfg))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	c.writeMap(len(out))
	for _, p := range out {
		c.writeBulkString(p.k)
		c.writeBulkString(p.v)
	}
}

func cmdConfigSet(c *Client, args [][]byte) {
	if len(args)%2 != 0 {
		c.writeArityError("config|set")
		return
	}
	next := c.srv.cfg
	next.Bind = append([]string(nil), next.Bind...)
	seen := map[string]bool{}
	for i := 2; i < len(args); i += 2 {
		name := strings.ToLower(string(args[i]))
		val := string(args[i+1])
		if seen[name] {
			c.writeError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - duplicate parameter")
			return
		}
		seen[name] = true
		d := findDirective(name)
		if d == nil {
			c.writeError("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'")
			return
		}
		if !d.runtime {
			c.writeError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - can't set immutable config")
			return
		}
		if d.protected && !c.protectedConfigAllowed() {
			c.writeError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - can't set protected config")
			return
		}
		vals := []string{val}
		if name == "bind" {
			vals = strings.Fields(val)
		} else if d.multiArg {
			vals = splitConfigValue(val)
		}
		if err := d.set(&next, vals); err != nil {
			c.writeError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + err.Error())
			return
		}
	}
	if err := next.Validate(); err != nil {
		c.writeError("ERR CONFIG SET failed - " + strings.ReplaceAll(err.Error(), "\n", "; "))
		return
	}
	if next.MaxClients != c.srv.cfg.MaxClients {
		// As Redis: raise the descriptor limit for the new value, or
		// refuse it with the most the limit fits.
		if fitted, err := c.srv.fitDescriptors(next.MaxClients); err != nil || fitted < next.MaxClients {
			c.srv.logf('#', "Failed applying new configuration. Possibly related to new maxclients setting. Restoring previous settings.")
			c.writeError("ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system is not able to handle the specified number of clients, try with " + strconv.Itoa(fitted))
			return
		}
	}
	c.srv.cfg = next
	c.srv.applyDerived()
	c.writeOK()
}

func cmdConfigResetStat(c *Client, args [][]byte) {
	c.srv.stats.reset()
	c.writeOK()
}

func cmdConfigRewrite(c *Client, args [][]byte) {
	c.writeError("ERR CONFIG REWRITE is not supported by dpulab server; edit the config file instead")
}

func cmdConfigHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Not supported by dpulab server.",
		"HELP",
		"    Print this help.",
	})
}

// ---- COMMAND ----

func (c *Client) writeCommandInfo(cmd *command) {
	c.writeArray(10)
	c.writeBulkString(cmd.Name)
	c.writeInt(int64(cmd.Arity))
	var flags []string
	for _, f := range flagNames {
		if cmd.Flags&f.f != 0 {
			flags = append(flags, f.name)
		}
	}
	if _, movable := movableKeySpecs[cmd.Name]; movable {
		flags = append(flags, "movablekeys")
	}
	c.writeSet(len(flags))
	for _, f := range flags {
		c.writeSimple(f)
	}
	c.writeInt(int64(cmd.FirstKey))
	c.writeInt(int64(cmd.LastKey))
	c.writeInt(int64(cmd.Step))
	cats := categories(cmd)
	c.writeSet(len(cats))
	for _, cat := range cats {
		c.writeSimple(cat)
	}
	tips := strings.Fields(commandTips[cmd.Name])
	c.writeSet(len(tips))
	for _, tip := range tips {
		c.writeBulkString(tip)
	}
	specs := keySpecs(cmd)
	c.writeSet(len(specs))
	for _, s := range specs {
		c.writeKeySpec(s)
	}
	// Redis replies a set for a command without subcommands, an array
	// for a container.
	if cmd.Subcommands == nil {
		c.writeSet(0)
		return
	}
	c.writeArray(len(cmd.Subcommands))
	for _, sc := range cmd.Subcommands {
		c.writeCommandInfo(sc)
	}
}

func cmdCommand(c *Client, args [][]byte) {
	if len(args) > 1 {
		// Subcommands are dispatched by the table; reaching here means an
		// unknown one.
		c.writeError("ERR unknown subcommand '" + truncate(args[1], 128) + "'. Try COMMAND HELP.")
		return
	}
	list := c.srv.cmds.list
	c.writeArray(len(list))
	for _, cmd := range list {
		c.writeCommandInfo(cmd)
	}
}

func cmdCommandCount(c *Client, args [][]byte) { c.writeInt(int64(len(c.srv.cmds.list))) }

func cmdCommandInfo(c *Client, args [][]byte) {
	if len(args) == 2 {
		cmdCommand(c, args[:1])
		return
	}
	c.writeArray(len(args) - 2)
	for _, name := range args[2:] {
		cmd := c.srv.lookupFull(name)
		if cmd == nil {
			c.writeNull()
			continue
		}
		c.writeCommandInfo(cmd)
	}
}

// lookupFull finds "name" or "parent|sub".
func (s *Server) lookupFull(name []byte) *command {
	if i := strings.IndexByte(string(name), '|'); i > 0 {
		parent := s.cmds.lookup(name[:i])
		if parent == nil {
			return nil
		}
		return findSub(parent, name[i+1:])
	}
	return s.cmds.lookup(name)
}

func (c *Client) writeCommandDoc(cmd *command) {
	n := 4
	if len(cmd.Subcommands) > 0 {
		n++
	}
	args, hasArgs := usageArgs(cmd.Name)
	if hasArgs && len(args) > 0 {
		n++
	}
	c.writeMap(n)
	c.writeBulkString("summary")
	c.writeBulkString(cmd.Summary)
	c.writeBulkString("since")
	c.writeBulkString(cmd.Since)
	c.writeBulkString("group")
	c.writeBulkString(cmd.Group)
	c.writeBulkString("complexity")
	c.writeBulkString("")
	if hasArgs && len(args) > 0 {
		c.writeBulkString("arguments")
		c.writeDocArgs(args, &keyArgs{specs: len(keySpecs(cmd))})
	}
	if len(cmd.Subcommands) > 0 {
		c.writeBulkString("subcommands")
		c.writeMap(len(cmd.Subcommands))
		for _, sc := range cmd.Subcommands {
			c.writeBulkString(sc.Name)
			c.writeCommandDoc(sc)
		}
	}
}

func cmdCommandDocs(c *Client, args [][]byte) {
	var list []*command
	if len(args) == 2 {
		list = c.srv.cmds.list
	} else {
		for _, name := range args[2:] {
			if cmd := c.srv.lookupFull(name); cmd != nil {
				list = append(list, cmd)
			}
		}
	}
	c.writeMap(len(list))
	for _, cmd := range list {
		c.writeBulkString(cmd.Name)
		c.writeCommandDoc(cmd)
	}
}

func cmdCommandList(c *Client, args [][]byte) {
	var pat []byte
	if len(args) > 2 {
		if len(args) != 5 || !equalFold(args[2], "filterby") {
			c.writeError(errSyntax)
			return
		}
		switch {
		case equalFold(args[3], "pattern"):
			pat = args[4]
		default:
			c.writeError(errSyntax)
			return
		}
	}
	var names []string
	for _, cmd := range c.srv.cmds.list {
		if pat == nil || globMatch(pat, []byte(cmd.Name), true) {
			names = append(names, cmd.Name)
		}
	}
	c.writeArray(len(names))
	for _, n := range names {
		c.writeBulkString(n)
	}
}

func cmdCommandGetKeys(c *Client, args [][]byte) { commandGetKeys(c, args, false) }

// cmdCommandGetKeysAndFlags is COMMAND GETKEYSANDFLAGS: each key with its
// key spec's flags, as Redis 7.0 replies.
func cmdCommandGetKeysAndFlags(c *Client, args [][]byte) { commandGetKeys(c, args, true) }

// commandGetKeys is Redis's getKeysSubcommandImpl.
func commandGetKeys(c *Client, args [][]byte, withFlags bool) {
	sub := args[2:]
	cmd := c.srv.cmds.lookup(sub[0])
	if cmd != nil && cmd.Subcommands != nil && len(sub) > 1 {
		cmd = findSub(cmd, sub[1])
	}
	if cmd == nil {
		c.writeError("ERR Invalid command specified")
		return
	}
	if cmd.Arity > 0 && len(sub) != cmd.Arity || cmd.Arity < 0 && len(sub) < -cmd.Arity {
		c.writeError("ERR Invalid number of arguments specified for command")
		return
	}
	var pos, spec []int
	if _, movable := movableKeySpecs[cmd.Name]; movable {
		var ok bool
		pos, spec, ok = keysAndSpecs(cmd, sub)
		if !ok {
			c.writeError("ERR Invalid arguments specified for command")
			return
		}
		if len(pos) == 0 && cmd.Group != "scripting" {
			// Scripts may take no keys at all (Redis's no_mandatory_keys).
			c.writeError("ERR The command has no key arguments")
			return
		}
	} else {
		if cmd.FirstKey == 0 {
			c.writeError("ERR The command has no key arguments")
			return
		}
		last := cmd.LastKey
		if last < 0 {
			last = len(sub) + last
		}
		nspecs := max(len(keySpecs(cmd)), 1)
		for i := cmd.FirstKey; i <= last && i < len(sub); i += cmd.Step {
			pos = append(pos, i)
			// Several specs cover one key each from FirstKey, the last
			// one the rest (keySpecs).
			spec = append(spec, min((i-cmd.FirstKey)/cmd.Step, nspecs-1))
		}
	}
	c.writeArray(len(pos))
	if !withFlags {
		for _, p := range pos {
			c.writeBulk(sub[p])
		}
		return
	}
	specs := keySpecs(cmd)
	for i, p := range pos {
		c.writeArray(2)
		c.writeBulk(sub[p])
		var flags []string
		if spec[i] < len(specs) {
			flags = specs[spec[i]].flags
		}
		flags = variableKeyFlags(cmd, sub, flags)
		c.writeSet(len(flags))
		for _, f := range flags {
			c.writeSimple(f)
		}
	}
}

// variableKeyFlags is what Redis's setGetKeys and bitfieldGetKeys decide
// for the two commands whose key flags depend on their arguments
// (variable_flags): SET with GET reads, BITFIELD without SET or INCRBY
// only reads.
func variableKeyFlags(cmd *command, args [][]byte, flags []string) []string {
	switch cmd.Name {
	case "set":
		for _, a := range args[3:] {
			if equalFold(a, "get") {
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"OW", "update"}
	case "bitfield":
		for i := 2; i < len(args); i++ {
			rem := len(args) - i - 1
			switch {
			case equalFold(args[i], "get") && rem >= 2:
				i += 2
			case equalFold(args[i], "overflow") && rem >= 1:
				i++
			default:
				// SET, INCRBY, or a syntax error: assumed to write.
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"RO", "access"}
	}
	return flags
}

func cmdCommandHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"(no subcommand)",
		"    Return details about all commands.",
		"COUNT",
		"    Return the total number of commands in this server.",
		"LIST",
		"    Return a list of all commands in this server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple commands.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple commands.",
		"GETKEYS <full-command>",
		"    Return the keys from a full command.",
		"HELP",
		"    Print this help.",
	})
}

// ---- INFO ----

var defaultSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"}

func cmdInfo(c *Client, args [][]byte) {
	want := map[string]bool{}
	if len(args) == 1 {
		for _, s := range defaultSections {
			want[s] = true
		}
	}
	for _, a := range args[1:] {
		s := strings.ToLower(string(a))
		switch s {
		case "default":
			for _, d := range defaultSections {
				want[d] = true
			}
		case "all", "everything":
			for _, d := range defaultSections {
				want[d] = true
			}
			want["commandstats"] = true
			want["latencystats"] = true
		default:
			want[s] = true
		}
	}
	c.writeVerbatim(c.srv.info(want))
}

func human(n int64) string {
	f := float64(n)
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", f/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", f/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", f/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// rss reads the process's resident set size from /proc (0 elsewhere).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// info renders INFO's sections in Redis's order and field names. Called
// with mu held.
func (s *Server) info(want map[string]bool) string {
	var b strings.Builder
	sec := func(name string) bool {
		if !want[name] {
			return false
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + strings.ToUpper(name[:1]) + name[1:] + "\r\n")
		return true
	}
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	now := time.Now()
	if sec("server") {
		kv("redis_version", Version)
		kv("redis_git_sha1", "00000000")
		kv("redis_git_dirty", 0)
		kv("redis_build_id", "dpulab")
		kv("redis_mode", "standalone")
		kv("os", runtime.GOOS+" "+runtime.GOARCH)
		kv("arch_bits", strconv.IntSize)
		kv("multiplexing_api", "go-netpoll")
		kv("gcc_version", "0.0.0")
		kv("go_version", runtime.Version())
		kv("process_id", os.Getpid())
		kv("run_id", fmt.Sprintf("%040x", s.start.UnixNano()))
		port := s.cfg.Port
		if addrs := s.Addrs(); len(addrs) > 0 {
			if tcp, ok := addrs[0].(interface{ String() string }); ok {
				if i := strings.LastIndexByte(tcp.String(), ':'); i >= 0 {
					if p, err := strconv.Atoi(tcp.String()[i+1:]); err == nil {
						port = p
					}
				}
			}
		}
		kv("tcp_port", port)
		kv("server_time_usec", now.UnixMicro())
		kv("uptime_in_seconds", int64(now.Sub(s.start).Seconds()))
		kv("uptime_in_days", int64(now.Sub(s.start).Hours()/24))
		kv("hz", s.cfg.Hz)
		kv("configured_hz", s.cfg.Hz)
		kv("lru_clock", s.lruClock)
		exe, _ := os.Executable()
		kv("executable", exe)
		kv("config_file", "")
		kv("io_threads_active", 0)
	}
	if sec("clients") {
		kv("connected_clients", s.nclients.Load())
		kv("cluster_connections", 0)
		kv("maxclients", s.cfg.MaxClients)
		kv("client_recent_max_input_buffer", 0)
		kv("client_recent_max_output_buffer", 0)
		kv("blocked_clients", s.blk.blocked)
		kv("tracking_clients", s.trk.clients)
		kv("clients_in_timeout_table", s.blk.timed)
	}
	if sec("memory") {
		used := s.usedMemory()
		r := rss()
		kv("used_memory", used)
		kv("used_memory_human", human(used))
		kv("used_memory_rss", r)
		kv("used_memory_rss_human", human(r))
		kv("used_memory_dataset", used)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		kv("go_heap_alloc", ms.HeapAlloc)
		kv("go_heap_sys", ms.HeapSys)
		kv("go_gc_count", ms.NumGC)
		kv("maxmemory", s.cfg.MaxMemory)
		kv("maxmemory_human", human(s.cfg.MaxMemory))
		kv("maxmemory_policy", s.cfg.MaxMemoryPolicy)
		ratio := 0.0
		if used > 0 {
			ratio = float64(r) / float64(used)
		}
		kv("mem_fragmentation_ratio", fmt.Sprintf("%.2f", ratio))
		kv("mem_allocator", "go")
	}
	if sec("persistence") {
		kv("loading", 0)
		kv("async_loading", 0)
		kv("rdb_changes_since_last_save", s.stats.dirty)
		kv("rdb_bgsave_in_progress", 0)
		kv("rdb_last_save_time", s.start.Unix())
		kv("rdb_last_bgsave_status", "ok")
		kv("aof_enabled", 0)
		kv("aof_rewrite_in_progress", 0)
	}
	if sec("stats") {
		st := &s.stats
		kv("total_connections_received", st.totalConnections)
		kv("total_commands_processed", st.totalCommands)
		kv("instantaneous_ops_per_sec", st.instantaneousOps())
		kv("total_net_input_bytes", st.netInput)
		kv("total_net_output_bytes", st.netOutput)
		kv("rejected_connections", st.rejectedConns)
		kv("expired_keys", st.expiredKeys)
		kv("evicted_keys", st.evictedKeys)
		kv("keyspace_hits", st.keyspaceHits)
		kv("keyspace_misses", st.keyspaceMisses)
		kv("pubsub_channels", len(s.ps.channels))
		kv("pubsub_patterns", len(s.ps.patterns))
		kv("tracking_total_keys", len(s.trk.table))
		kv("tracking_total_items", s.trk.items)
		kv("tracking_total_prefixes", len(s.trk.prefixes))
		kv("total_error_replies", st.totalErrors)
	}
	if sec("replication") {
		// A master without replicas or a backlog, as a fresh Redis
		// reports itself; the replication id is per start, as there.
		kv("role", "master")
		kv("connected_slaves", 0)
		kv("master_failover_state", "no-failover")
		kv("master_replid", fmt.Sprintf("%x", sha1.Sum([]byte("replid "+s.start.String()))))
		kv("master_replid2", strings.Repeat("0", 40))
		kv("master_repl_offset", 0)
		kv("second_repl_offset", -1)
		kv("repl_backlog_active", 0)
		kv("repl_backlog_size", 1048576)
		kv("repl_backlog_first_byte_offset", 0)
		kv("repl_backlog_histlen", 0)
	}
	if sec("cpu") {
		user, sys, _ := osproc.CPUTime()
		tv := func(d time.Duration) string {
			return fmt.Sprintf("%d.%06d", d/time.Second, d%time.Second/time.Microsecond)
		}
		kv("used_cpu_sys", tv(sys))
		kv("used_cpu_user", tv(user))
		kv("used_cpu_sys_children", "0.000000")
		kv("used_cpu_user_children", "0.000000")
	}
	if sec("modules") {
	}
	if sec("errorstats") {
		codes := make([]string, 0, len(s.stats.errorReplies))
		for k := range s.stats.errorReplies {
			codes = append(codes, k)
		}
		sort.Strings(codes)
		for _, k := range codes {
			kv("errorstat_"+k, fmt.Sprintf("count=%d", s.stats.errorReplies[k]))
		}
	}
	if sec("commandstats") {
		for _, cmd := range s.cmds.all {
			st := s.stats.cmd[cmd.id]
			if st.calls == 0 && st.rejected == 0 && st.failed == 0 {
				continue
			}
			per := 0.0
			if st.calls > 0 {
				per = float64(st.usec) / float64(st.calls)
			}
			kv("cmdstat_"+cmd.Name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d", st.calls, st.usec, per, st.rejected, st.failed))
		}
	}
	if sec("latencystats") {
		s.latencyStats(kv)
	}
	if sec("cluster") {
		kv("cluster_enabled", 0)
	}
	if sec("rdma") {
		// Asked for by name only: redis-server has no such section, and
		// INFO's default and everything stay as its.
		s.rdmaInfo(kv)
	}
	if sec("keyspace") {
		for i, d := range s.dbs {
			if len(d.keys) == 0 {
				continue
			}
			kv("db"+strconv.Itoa(i), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", len(d.keys), len(d.expires)))
		}
	}
	return b.String()
}
