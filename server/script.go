package server

import (
	"crypto/sha1"
	"encoding/hex"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/dpulab/dpulab/server/resp"
)

// Scripting (EVAL, FCALL) runs Lua 5.1 as Redis 7.0 embeds it, on
// github.com/yuin/gopher-lua: a maintained, pure-Go Lua 5.1 VM, so the
// server stays one static binary without cgo.
//
// One Lua state per server, created on first use, as Redis has one. A
// script runs on the goroutine of the command that called it, with
// Server.mu held like any command; redis.call runs our commands through the
// dispatcher's checks on a scratch client (scriptEngine.w) and converts
// the RESP reply it wrote into Lua values, as Redis's scriptCall does.
//
// Time: every few thousand VM instructions scriptCtx.Done checks the
// clock. Past busy-reply-threshold the script is "busy": the event loop's
// other clients are served from inside the script (serveBusy) with BUSY
// errors, except SCRIPT KILL, FUNCTION KILL and SHUTDOWN NOSAVE; SCRIPT
// KILL marks the run killed and the next check raises the error that
// ends it.

// scriptEngine is the server's Lua state and script caches; guarded by
// Server.mu.
type scriptEngine struct {
	s *Server
	L *lua.LState
	// globals is the real global table; env, an empty table whose
	// metatable reads globals and refuses writes, is what scripts see as
	// their globals (Redis 7.0's readonly globals).
	globals *lua.LTable
	env     *lua.LTable
	redis   *lua.LTable // the real redis table (env's redis is a readonly proxy)

	scriptsBySha map[string]*luaScript   // EVAL's and SCRIPT LOAD's, by sha1 hex
	libs         map[string]*luaLibrary  // FUNCTION LOAD's, by library name
	funcs        map[string]*luaFunction // every library's functions, by name
	loadR        *lua.LTable             // redis as library code sees it at load time (loadRedis)

	denied  []bool // by command id: refused from scripts (scriptDenied)
	ctx     scriptCtx
	errFn   *lua.LFunction // error handler: adds source and line, as __redis__err__handler
	run     *scriptRun     // the script running, nil between scripts
	loading *luaLibrary    // the library FUNCTION LOAD is running, nil otherwise
	w       *Client        // the scripts' client, what redis.call runs commands as
	args    [][]byte
	slab    []resp.Value
}

// scriptRun is one script's execution.
type scriptRun struct {
	c         *Client // the caller
	name      string  // "f_<sha>" or the function's name, for error messages
	isFunc    bool
	loadOnly  bool     // FUNCTION LOAD running a library's code
	cmd       [][]byte // the EVAL or FCALL, for FUNCTION STATS (valid during the run)
	readOnly  bool     // EVAL_RO, FCALL_RO, no-writes
	wrote     bool
	resp      int // redis.setresp
	start     time.Time
	busy      bool // past busy-reply-threshold: other clients get BUSY
	killed    bool // SCRIPT KILL or SHUTDOWN NOSAVE asked it to stop
	shutdown  bool // SHUTDOWN NOSAVE arrived while busy
	lastServe time.Time
}

// Lua's messages for the sandbox, as Redis 7.0 words them.
const (
	errScriptBusy      = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errNoScript        = "NOSCRIPT No matching script. Please use EVAL."
	errScriptKilled    = "ERR Script killed by user with SCRIPT KILL..."
	errReadonlyTable   = "Attempt to modify a readonly table"
	errNonexistentVar  = "Script attempted to access nonexistent global variable '%s'"
	errCallOutsideRun  = "redis.call/pcall can only be called inside a script invocation"
	errScriptWriteRO   = "ERR Write commands are not allowed from read-only scripts."
	errScriptDeniedCmd = "ERR This Redis command is not allowed from script"
	maxLuaReplyDepth   = 7995    // where Redis's Lua runs out of C stack (LUAI_MAXCSTACK 8000)
	scriptCheckEvery   = 1 << 12 // VM instructions between clock checks
)

// scriptCtx is the context gopher-lua's VM consults before every
// instruction (mainLoopWithContext calls Done each time): it counts, and
// every scriptCheckEvery instructions checks the time limit and serves
// other clients while busy. Done returns a closed channel once the run is
// killed, so the VM raises Err's text, and keeps raising at every
// instruction: a pcall in the script cannot swallow the kill.
type scriptCtx struct {
	e    *scriptEngine
	n    uint32
	dead chan struct{}
}

func (x *scriptCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (x *scriptCtx) Value(any) any               { return nil }
func (x *scriptCtx) Err() error {
	if r := x.e.run; r != nil && r.killed {
		return replyError("Script killed by user with SCRIPT KILL...")
	}
	return nil
}

func (x *scriptCtx) Done() <-chan struct{} {
	x.n++
	if x.n%scriptCheckEvery == 0 {
		x.e.tick()
	}
	if r := x.e.run; r != nil && r.killed {
		return x.dead
	}
	return nil
}

// tick checks the running script against busy-reply-threshold and, once
// past it, lets the event loop answer the other clients.
func (e *scriptEngine) tick() {
	r := e.run
	if r == nil {
		return
	}
	if r.loadOnly {
		// FUNCTION LOAD's code gets 500 ms, as in Redis.
		if time.Since(r.start) > 500*time.Millisecond {
			r.killed = true
		}
		return
	}
	if !r.busy {
		limit := e.s.cfg.Tuning.BusyReplyThreshold
		if limit <= 0 || time.Since(r.start) < time.Duration(limit)*time.Millisecond {
			return
		}
		r.busy = true
		e.s.logf('#', "Slow script detected: still in execution after %d milliseconds. You can try killing the script using the SCRIPT KILL command. Script name is: %s.", time.Since(r.start).Milliseconds(), r.name)
	}
	// Other clients are served at most once a millisecond.
	if now := time.Now(); now.Sub(r.lastServe) >= time.Millisecond {
		r.lastServe = now
		e.s.serveBusy(r.c)
	}
}

// scripting returns the server's Lua engine, creating it on first use.
func (s *Server) scripting() *scriptEngine {
	if s.lua == nil {
		s.lua = newScriptEngine(s)
	}
	return s.lua
}

func newScriptEngine(s *Server) *scriptEngine {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 256, RegistryMaxSize: 1 << 20})
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.CoroutineLibName, lua.OpenCoroutine}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	e := &scriptEngine{s: s, L: L, globals: L.G.Global,
		scriptsBySha: make(map[string]*luaScript), libs: make(map[string]*luaLibrary), funcs: make(map[string]*luaFunction)}
	e.ctx = scriptCtx{e: e, dead: make(chan struct{})}
	close(e.ctx.dead)
	g := e.globals
	// Redis 7.0 has neither files nor modules in the sandbox.
	for _, name := range []string{"dofile", "loadfile", "print", "module", "require", "_printregs", "package", "os", "io", "debug", "channel"} {
		g.RawSetString(name, lua.LNil)
	}
	g.RawSetString("pcall", L.NewFunction(luaPcall))
	// string.rep would allocate whatever a script asks: bounded by
	// proto-max-bulk-len, as a reply could not carry more anyway.
	if st, ok := g.RawGetString("string").(*lua.LTable); ok {
		st.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
			str, n := L.CheckString(1), L.CheckInt64(2)
			if n <= 0 || str == "" {
				L.Push(lua.LString(""))
				return 1
			}
			if n > s.maxBulk()/int64(len(str)) {
				L.RaiseError("resulting string too large")
			}
			L.Push(lua.LString(strings.Repeat(str, int(n))))
			return 1
		}))
	}
	g.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
	// unpack pushes every value in one Go call, beyond the VM's clock:
	// bounded as Lua 5.1's C stack bounds it.
	g.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int {
		tb := L.CheckTable(1)
		i, j := L.OptInt64(2, 1), L.OptInt64(3, int64(tb.Len()))
		if i > j {
			return 0
		}
		if j-i >= 7999 {
			L.RaiseError("too many results to unpack")
		}
		for k := i; k <= j; k++ {
			L.Push(tb.RawGetInt(int(k)))
		}
		return int(j - i + 1)
	}))
	e.patchCoroutines()
	openCJSON(L, g)
	openBit(L, g)

	r := L.NewTable()
	e.redis = r
	for name, fn := range map[string]lua.LGFunction{
		"call":               e.luaCall,
		"pcall":              e.luaPCall,
		"error_reply":        luaErrorReply,
		"status_reply":       luaStatusReply,
		"sha1hex":            luaSha1hex,
		"log":                e.luaLog,
		"setresp":            e.luaSetResp,
		"set_repl":           e.luaSetRepl,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"register_function":  e.luaRegisterFunction,
		"acl_check_cmd":      e.luaACLCheck,
	} {
		r.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3} {
		r.RawSetString(name, lua.LNumber(v))
	}
	r.RawSetString("REDIS_VERSION", lua.LString(Version))
	r.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(Version)))
	g.RawSetString("redis", readonlyProxy(L, r))

	// Reading a missing global is an error; the globals scripts see are
	// a readonly proxy of the real ones.
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errNonexistentVar, lua.LVAsString(L.Get(2)))
		return 0
	}))
	L.SetMetatable(g, mt)
	e.env = readonlyProxy(L, g)
	g.RawSetString("_G", e.env)
	e.errFn = L.NewFunction(e.errHandler)
	L.SetContext(&e.ctx)
	e.w = &Client{srv: s, authed: true, resp: 2, id: -1, name: "lua"}
	e.denied = make([]bool, len(s.cmds.all))
	for _, c := range s.cmds.all {
		e.denied[c.id] = scriptDenied[c.Name]
	}
	return e
}

// scriptDenied are the commands Redis 7.0 flags noscript, refused from
// scripts whatever our command table's flags say.
var scriptDenied = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range strings.Fields(`auth bgrewriteaof bgsave blmove blpop brpop brpoplpush bzpopmax bzpopmin
		debug discard eval eval_ro evalsha evalsha_ro exec failover fcall fcall_ro hello monitor multi
		psubscribe psync punsubscribe quit replconf replicaof reset role save shutdown slaveof ssubscribe
		subscribe sunsubscribe sync unsubscribe unwatch wait watch
		acl|cat acl|deluser acl|dryrun acl|genpass acl|getuser acl|list acl|load acl|log acl|save acl|setuser
		acl|users acl|whoami client|caching client|getname client|getredir client|id client|info client|kill
		client|list client|no-evict client|pause client|reply client|setname client|setinfo client|tracking
		client|trackinginfo client|unblock client|unpause cluster|reset config|get config|resetstat
		config|rewrite config|set function|delete function|dump function|flush function|kill function|list
		function|load function|restore function|stats latency|doctor latency|graph latency|histogram
		latency|history latency|latest latency|reset module|list module|load module|loadex module|unload
		script|debug script|exists script|flush script|kill script|load`) {
		m[name] = true
	}
	return m
}()

// patchCoroutines makes coroutines run under the scripts' context:
// gopher-lua gives a new thread a context derived from its creator's,
// whose Done our clock checks and SCRIPT KILL would never reach, so a
// loop inside a coroutine could hold the server forever.
func (e *scriptEngine) patchCoroutines() {
	L := e.L
	co, ok := e.globals.RawGetString("coroutine").(*lua.LTable)
	if !ok {
		return
	}
	create := co.RawGetString("create")
	co.RawSetString("create", L.NewFunction(func(L *lua.LState) int {
		L.CheckFunction(1)
		L.Push(create)
		L.Push(L.Get(1))
		L.Call(1, 1)
		if th, ok := L.Get(-1).(*lua.LState); ok {
			th.SetContext(&e.ctx)
		}
		return 1
	}))
	// wrap, over the create above (gopher-lua's calls its own).
	wrap, err := L.LoadString(`local create, resume, select, unpack, error = coroutine.create, coroutine.resume, select, unpack, error
local function pass(ok, ...)
  if not ok then error((...), 2) end
  return ...
end
return function(f)
  local co = create(f)
  return function(...) return pass(resume(co, ...)) end
end`)
	if err != nil {
		panic("server: coroutine.wrap: " + err.Error())
	}
	L.Push(wrap)
	L.Call(0, 1)
	co.RawSetString("wrap", L.Get(-1))
	L.Pop(1)
}

// versionNum is Redis's REDIS_VERSION_NUM: 0x00MMmmpp.
func versionNum(v string) int {
	n := 0
	for _, p := range strings.SplitN(v, ".", 3) {
		x, _ := strconv.Atoi(p)
		n = n<<8 | x&0xff
	}
	return n
}

// readonlyProxy returns an empty table that reads t and refuses writes.
func readonlyProxy(L *lua.LState, t *lua.LTable) *lua.LTable {
	p := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonlyTable)
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(p, mt)
	return p
}

// sha1hex is the hex SHA1 of b, as scripts are named.
func sha1hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// compile compiles a script body into a function whose globals are the
// sandbox's. chunk is the name errors carry ("user_script",
// "user_function").
func (e *scriptEngine) compile(body []byte, chunk string) (*lua.LFunction, error) {
	fn, err := e.L.Load(strings.NewReader(string(body)), chunk)
	if err != nil {
		return nil, err
	}
	fn.Env = e.env
	// The chunk's vararg "arg" table (Lua 5.0 compatibility) cannot be
	// named from a main chunk; gopher-lua would build it on every call.
	fn.Proto.IsVarArg &^= lua.VarArgNeedsArg
	return fn, nil
}

// errHandler is the error handler a script runs under (Redis's
// __redis__err__handler): the error becomes a table {err=..., source=...,
// line=...} with the position of the Lua code that raised it.
func (e *scriptEngine) errHandler(L *lua.LState) int {
	obj := L.Get(1)
	t, ok := obj.(*lua.LTable)
	if r := e.run; r != nil && r.killed {
		t, ok = L.NewTable(), true
		t.RawSetString("err", lua.LString(errScriptKilled))
	}
	if !ok {
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+lua51Message(lua.LVAsString(obj))))
	}
	for level := 1; level < 4; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
			continue
		}
		t.RawSetString("source", lua.LString("@"+dbg.Source))
		t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
		break
	}
	L.Push(t)
	return 1
}

// call runs fn as the script named name for c, with keys and argv as KEYS
// and ARGV, and writes its result (or error) to c.
func (e *scriptEngine) call(c *Client, fn *lua.LFunction, run *scriptRun, keys, argv [][]byte) {
	L := e.L
	if run.isFunc {
		L.Push(fn)
		L.Push(luaStrings(L, keys))
		L.Push(luaStrings(L, argv))
	} else {
		e.globals.RawSetString("KEYS", luaStrings(L, keys))
		e.globals.RawSetString("ARGV", luaStrings(L, argv))
		L.Push(fn)
	}
	w := e.w
	w.resp, w.db, w.dbIndex, w.now, w.loop = 2, c.db, c.dbIndex, c.now, c.loop
	w.multi = nil
	run.c, run.resp, run.start = c, 2, time.Now()
	e.run = run
	nargs := 0
	if run.isFunc {
		nargs = 2
	}
	err := L.PCall(nargs, 1, e.errFn)
	e.run = nil
	w.loop = nil
	if err != nil {
		c.writeError(scriptErrorText(err, run.name))
	} else {
		e.writeReply(c, L.Get(-1), run.resp, 0)
		L.Pop(1)
	}
	if !run.isFunc {
		e.globals.RawSetString("KEYS", lua.LNil)
		e.globals.RawSetString("ARGV", lua.LNil)
	}
}

// gopherArith matches gopher-lua's message for arithmetic and
// concatenation on a wrong type.
var gopherArith = regexp.MustCompile(`cannot perform (\w+) operation between (\w+) and (\w+)`)

// lua51Message rewrites gopher-lua's runtime error texts that Lua 5.1
// words differently, for the ones scripts commonly hit.
func lua51Message(msg string) string {
	m := gopherArith.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	op, a, b := msg[m[2]:m[3]], msg[m[4]:m[5]], msg[m[6]:m[7]]
	// Lua 5.1 names the first operand that cannot take part: for
	// arithmetic, a string that is no number counts.
	bad := a
	if a == "number" {
		bad = b
	}
	text := "attempt to perform arithmetic on a " + bad + " value"
	if op == "concat" {
		if a == "string" || a == "number" {
			bad = b
		}
		text = "attempt to concatenate a " + bad + " value"
	}
	return msg[:m[0]] + text + msg[m[1]:]
}

// scriptErrorText is the error reply for a script that raised err:
// the error's text, then where it was raised.
func scriptErrorText(err error, name string) string {
	aerr, ok := err.(*lua.ApiError)
	if !ok {
		return "ERR " + err.Error()
	}
	t, ok := aerr.Object.(*lua.LTable)
	if !ok {
		return "ERR Error running script " + name + ", " + truncate([]byte(lua.LVAsString(aerr.Object)), 100)
	}
	msg, ok := t.RawGetString("err").(lua.LString)
	if !ok {
		return "ERR Error running script " + name + ", execution failure"
	}
	text := string(msg)
	if src, ok := t.RawGetString("source").(lua.LString); ok {
		if line, ok := t.RawGetString("line").(lua.LNumber); ok {
			text += " script: " + name + ", on " + string(src) + ":" + strconv.FormatInt(int64(line), 10) + "."
		}
	}
	return text
}

// luaStrings makes a Lua array of strings.
func luaStrings(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for _, it := range items {
		t.Append(lua.LString(it))
	}
	return t
}

// luaPcall is Redis's pcall: an error that is a table with an err field
// comes back as that text, as in Redis before 7.
func luaPcall(L *lua.LState) int {
	L.CheckAny(1)
	v := L.Get(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	if err := L.PCall(L.GetTop()-1, lua.MultRet, nil); err != nil {
		L.Push(lua.LFalse)
		aerr, ok := err.(*lua.ApiError)
		if !ok {
			L.Push(lua.LString(err.Error()))
			return 2
		}
		obj := aerr.Object
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		}
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// luaError makes the {err=...} table Redis's luaPushError makes: the
// message's first word is its code when it starts with '-', else ERR.
func luaError(L *lua.LState, msg string) *lua.LTable {
	code := "ERR"
	if strings.HasPrefix(msg, "-") {
		if i := strings.IndexByte(msg, ' '); i >= 0 {
			code, msg = msg[1:i], msg[i+1:]
		} else {
			msg = msg[1:]
		}
	}
	msg = strings.Trim(msg, "\r\n")
	t := L.NewTable()
	t.RawSetString("err", lua.LString(code+" "+msg))
	return t
}

func luaErrorReply(L *lua.LState) int {
	if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
		L.Push(luaError(L, "wrong number or type of arguments"))
		return 1
	}
	msg := L.ToString(1)
	if !strings.HasPrefix(msg, "-") {
		msg = "-" + msg
	}
	L.Push(luaError(L, msg))
	return 1
}

func luaStatusReply(L *lua.LState) int {
	if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
		L.Push(luaError(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.NewTable()
	t.RawSetString("ok", L.Get(1))
	L.Push(t)
	return 1
}

func luaSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("wrong number of arguments")
	}
	L.Push(lua.LString(sha1hex([]byte(L.ToString(1)))))
	return 1
}

func (e *scriptEngine) luaLog(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		L.Error(luaError(L, "redis.log() requires two arguments or more."), 1)
	}
	lvl, ok := L.Get(1).(lua.LNumber)
	if !ok {
		L.Error(luaError(L, "First argument must be a number (log level)."), 1)
	}
	if lvl < 0 || lvl > 3 {
		L.Error(luaError(L, "Invalid debug level."), 1)
	}
	var b strings.Builder
	for i := 2; i <= n; i++ {
		if i > 2 {
			b.WriteByte(' ')
		}
		b.WriteString(L.ToString(i))
	}
	e.s.logf(".-*#"[int(lvl)], "%s", b.String())
	return 0
}

func (e *scriptEngine) luaSetResp(L *lua.LState) int {
	if e.run == nil {
		L.Error(luaError(L, "redis.setresp can only be called inside a script invocation"), 1)
	}
	if L.GetTop() != 1 {
		L.Error(luaError(L, "redis.setresp() requires one argument."), 1)
	}
	v, ok := L.Get(1).(lua.LNumber)
	if !ok || v != 2 && v != 3 {
		L.Error(luaError(L, "RESP version must be 2 or 3."), 1)
	}
	e.run.resp = int(v)
	return 0
}

func (e *scriptEngine) luaSetRepl(L *lua.LState) int {
	if e.run == nil {
		L.Error(luaError(L, "redis.set_repl can only be called inside a script invocation"), 1)
	}
	if L.GetTop() != 1 {
		L.Error(luaError(L, "redis.set_repl() requires one argument."), 1)
	}
	v, ok := L.Get(1).(lua.LNumber)
	if !ok || v < 0 || v > 3 {
		L.Error(luaError(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."), 1)
	}
	return 0
}

func (e *scriptEngine) luaACLCheck(L *lua.LState) int {
	if e.run == nil {
		L.Error(luaError(L, "redis.acl_check_cmd can only be called inside a script invocation"), 1)
	}
	if L.GetTop() < 1 {
		L.Error(luaError(L, "Please specify at least one argument for this redis lib call"), 1)
	}
	if e.s.cmds.lookup([]byte(L.ToString(1))) == nil {
		L.Error(luaError(L, "Invalid command passed to redis.acl_check_cmd()"), 1)
	}
	L.Push(lua.LTrue)
	return 1
}

func (e *scriptEngine) luaCall(L *lua.LState) int  { return e.redisCall(L, true) }
func (e *scriptEngine) luaPCall(L *lua.LState) int { return e.redisCall(L, false) }

// redisCall is redis.call (raise) and redis.pcall: it runs a command as
// the script's client and returns its reply converted to Lua.
func (e *scriptEngine) redisCall(L *lua.LState, raise bool) int {
	fail := func(msg string) int {
		t := luaError(L, msg)
		if raise {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	r := e.run
	if r == nil {
		return fail(errCallOutsideRun)
	}
	n := L.GetTop()
	if n == 0 {
		return fail("Please specify at least one argument for this redis lib call")
	}
	args := e.args[:0]
	var num [32]byte
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			args = append(args, []byte(v))
		case lua.LNumber:
			args = append(args, strconv.AppendFloat(num[:0:0], float64(v), 'g', 17, 64))
		default:
			e.args = args[:0]
			return fail("Lua redis lib command arguments must be strings or integers")
		}
	}
	e.args = args
	L.SetTop(0)
	s := e.s
	cmd := s.cmds.lookup(args[0])
	if cmd != nil && cmd.Subcommands != nil {
		cmd = nil
		if len(args) >= 2 {
			cmd = findSub(s.cmds.lookup(args[0]), args[1])
		}
	}
	switch {
	case cmd == nil:
		return fail("Unknown Redis command called from script")
	case cmd.Arity > 0 && len(args) != cmd.Arity || cmd.Arity < 0 && len(args) < -cmd.Arity:
		return fail("Wrong number of args calling Redis command from script")
	case cmd.Flags&flagNoScript != 0 || e.denied[cmd.id]:
		return fail("This Redis command is not allowed from script")
	case cmd.Flags&flagWrite != 0 && r.readOnly:
		return fail("Write commands are not allowed from read-only scripts.")
	case s.cfg.MaxMemory > 0 && cmd.Flags&flagDenyOOM != 0 && !r.wrote && !s.freeMemory(r.c.now):
		return fail("-" + errOOM)
	}
	if cmd.Flags&flagWrite != 0 {
		r.wrote = true
	}
	w := e.w
	w.out = w.out[:0]
	w.resp = r.resp
	w.denyBlocking = true
	w.call(cmd, args)
	w.denyBlocking = false
	clear(e.args)
	v, _, slab, err := resp.ParseReply(w.out, e.slab)
	e.slab = slab
	if cap(w.out) > maxIdleOut {
		w.out = nil
	}
	if err != nil {
		return fail("internal error: unreadable reply from " + cmd.Name)
	}
	lv := respToLua(L, v, 0)
	if raise && v.IsError() {
		L.Error(lv, 0)
	}
	L.Push(lv)
	return 1
}

// respToLua converts a command's reply as Redis's redisProtocolToLuaType
// does.
func respToLua(L *lua.LState, v resp.Value, depth int) lua.LValue {
	switch v.Type {
	case resp.Integer:
		return lua.LNumber(v.Int)
	case resp.BulkString:
		if v.Null {
			return lua.LFalse
		}
		return lua.LString(v.Str)
	case resp.Null:
		return lua.LNil
	case resp.SimpleString:
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(v.Str))
		return t
	case resp.Error, resp.BlobError:
		return luaError(L, "-"+string(v.Str))
	case resp.Boolean:
		return lua.LBool(v.Int != 0)
	case resp.Double:
		f, _ := v.Float()
		t := L.NewTable()
		t.RawSetString("double", lua.LNumber(f))
		return t
	case resp.BigNumber:
		t := L.NewTable()
		t.RawSetString("big_number", lua.LString(v.Str))
		return t
	case resp.Verbatim:
		format, text := "txt", string(v.Str)
		if len(text) >= 4 && text[3] == ':' {
			format, text = text[:3], text[4:]
		}
		vt := L.NewTable()
		vt.RawSetString("format", lua.LString(format))
		vt.RawSetString("string", lua.LString(text))
		t := L.NewTable()
		t.RawSetString("verbatim_string", vt)
		return t
	case resp.Map:
		m := L.NewTable()
		for i := 0; i+1 < len(v.Elems); i += 2 {
			m.RawSet(respToLua(L, v.Elems[i], depth+1), respToLua(L, v.Elems[i+1], depth+1))
		}
		t := L.NewTable()
		t.RawSetString("map", m)
		return t
	case resp.Set:
		m := L.NewTable()
		for _, el := range v.Elems {
			m.RawSet(respToLua(L, el, depth+1), lua.LTrue)
		}
		t := L.NewTable()
		t.RawSetString("set", m)
		return t
	case resp.Array, resp.Push:
		if v.Null {
			return lua.LFalse
		}
		t := L.CreateTable(len(v.Elems), 0)
		for i, el := range v.Elems {
			t.RawSetInt(i+1, respToLua(L, el, depth+1))
		}
		return t
	}
	return lua.LNil
}

// writeReply writes a script's result to c as Redis's luaReplyToRedisReply
// does; scriptResp is the script's redis.setresp, which decides how
// booleans are sent.
func (e *scriptEngine) writeReply(c *Client, v lua.LValue, scriptResp, depth int) {
	if depth >= maxLuaReplyDepth {
		c.writeError("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		c.writeBulkString(string(v))
	case lua.LBool:
		switch {
		case scriptResp == 3:
			c.writeBool(bool(v))
		case bool(v):
			c.writeInt(1)
		default:
			c.writeNull()
		}
	case lua.LNumber:
		c.writeInt(luaToInt(float64(v)))
	case *lua.LTable:
		if s, ok := v.RawGetString("err").(lua.LString); ok {
			c.writeError(noCRLF(string(s)))
			return
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			c.writeSimple(noCRLF(string(s)))
			return
		}
		if f, ok := v.RawGetString("double").(lua.LNumber); ok {
			c.writeDouble(float64(f))
			return
		}
		if s, ok := v.RawGetString("big_number").(lua.LString); ok {
			if c.resp == 3 {
				c.out = append(c.out, '(')
				c.out = append(c.out, noCRLF(string(s))...)
				c.out = append(c.out, '\r', '\n')
			} else {
				c.writeBulkString(noCRLF(string(s)))
			}
			return
		}
		if vt, ok := v.RawGetString("verbatim_string").(*lua.LTable); ok {
			format, ok1 := vt.RawGetString("format").(lua.LString)
			str, ok2 := vt.RawGetString("string").(lua.LString)
			if ok1 && ok2 {
				if c.resp == 3 && len(format) == 3 {
					c.out = append(c.out, '=')
					c.out = strconv.AppendInt(c.out, int64(len(str)+4), 10)
					c.out = append(c.out, "\r\n"...)
					c.out = append(c.out, format...)
					c.out = append(c.out, ':')
					c.out = append(c.out, str...)
					c.out = append(c.out, '\r', '\n')
				} else {
					c.writeBulkString(string(str))
				}
				return
			}
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			n := 0
			m.ForEach(func(lua.LValue, lua.LValue) { n++ })
			c.writeMap(n)
			m.ForEach(func(k, val lua.LValue) {
				e.writeReply(c, k, scriptResp, depth+1)
				e.writeReply(c, val, scriptResp, depth+1)
			})
			return
		}
		if m, ok := v.RawGetString("set").(*lua.LTable); ok {
			n := 0
			m.ForEach(func(lua.LValue, lua.LValue) { n++ })
			c.writeSet(n)
			m.ForEach(func(k, _ lua.LValue) { e.writeReply(c, k, scriptResp, depth+1) })
			return
		}
		n := 0
		for v.RawGetInt(n+1) != lua.LNil {
			n++
		}
		c.writeArray(n)
		for i := 1; i <= n; i++ {
			e.writeReply(c, v.RawGetInt(i), scriptResp, depth+1)
		}
	default:
		c.writeNull()
	}
}

// luaToInt is C's (long long) cast of a Lua number, as Redis converts:
// truncation toward zero; out of range and NaN give LLONG_MIN, as x86
// does.
func luaToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775807 || f < -9223372036854775808 {
		return math.MinInt64
	}
	return int64(f)
}

// noCRLF replaces \r and \n with spaces, as Redis does for status and
// error texts from scripts.
func noCRLF(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}
