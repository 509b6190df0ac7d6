package server

import (
	"bytes"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// FUNCTION and FCALL: Lua libraries loaded with FUNCTION LOAD, run by the
// engine of script.go.

func init() { registerGroup(registerFunctionCommands) }

func registerFunctionCommands(t *commandTable) {
	const g = "scripting"
	ns := flagNoScript
	t.add(
		&command{Name: "fcall", Fn: cmdFCall, Arity: -3, Flags: ns | flagStale, Group: g, Summary: "Invoke a function", Since: "7.0.0"},
		&command{Name: "fcall_ro", Fn: cmdFCallRO, Arity: -3, Flags: flagReadonly | ns | flagStale, Group: g, Summary: "Invoke a read-only function", Since: "7.0.0"},
		&command{Name: "function", Arity: -2, Group: g, Summary: "A container for function commands", Since: "7.0.0",
			Subcommands: []*command{
				{Name: "function|flush", Fn: cmdFunctionFlush, Arity: -2, Flags: flagWrite | ns, Group: g, Summary: "Deleting all functions", Since: "7.0.0"},
				{Name: "function|list", Fn: cmdFunctionList, Arity: -2, Flags: ns, Group: g, Summary: "List information about all the functions", Since: "7.0.0"},
				{Name: "function|stats", Fn: cmdFunctionStats, Arity: 2, Flags: ns | flagAllowBusy, Group: g, Summary: "Return information about the function currently running (name, description, duration)", Since: "7.0.0"},
				{Name: "function|dump", Fn: cmdFunctionDump, Arity: 2, Flags: ns, Group: g, Summary: "Dump all functions into a serialized binary payload", Since: "7.0.0"},
				{Name: "function|restore", Fn: cmdFunctionRestore, Arity: -3, Flags: flagWrite | flagDenyOOM | ns, Group: g, Summary: "Restore all the functions on the given payload", Since: "7.0.0"},
				{Name: "function|load", Fn: cmdFunctionLoad, Arity: -3, Flags: flagWrite | flagDenyOOM | ns, Group: g, Summary: "Create a function with the given arguments (name, code, description)", Since: "7.0.0"},
				{Name: "function|delete", Fn: cmdFunctionDelete, Arity: 3, Flags: flagWrite | ns, Group: g, Summary: "Delete a function by name", Since: "7.0.0"},
				{Name: "function|kill", Fn: cmdFunctionKill, Arity: 2, Flags: ns | flagAllowBusy, Group: g, Summary: "Kill the function currently in execution.", Since: "7.0.0"},
				{Name: "function|help", Fn: cmdFunctionHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Show helpful text about the different subcommands", Since: "7.0.0"},
			}},
	)
}

// luaLibrary is one FUNCTION LOAD's library.
type luaLibrary struct {
	name  string
	code  string
	funcs map[string]*luaFunction
}

// luaFunction is one registered function.
type luaFunction struct {
	name  string
	desc  string
	hasD  bool
	flags scriptFlags
	fn    *lua.LFunction
	lib   *luaLibrary
}

// validName is Redis's rule for library and function names.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

const errBadName = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// loadRedis returns the redis table library code sees at load time: it
// only registers functions and logs (redis.call is a nonexistent field).
func (e *scriptEngine) loadRedis() *lua.LTable {
	if e.loadR != nil {
		return e.loadR
	}
	L := e.L
	r := L.NewTable()
	for _, name := range []string{"register_function", "log", "setresp", "set_repl", "sha1hex", "error_reply", "status_reply"} {
		r.RawSetString(name, e.redis.RawGetString(name))
	}
	e.redis.ForEach(func(k, v lua.LValue) {
		if s, ok := k.(lua.LString); ok && strings.ToUpper(string(s)) == string(s) {
			r.RawSetString(string(s), v)
		}
	})
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errNonexistentVar, lua.LVAsString(L.Get(2)))
		return 0
	}))
	L.SetMetatable(r, mt)
	e.loadR = readonlyProxy(L, r)
	return e.loadR
}

// loadLibrary compiles and runs a library's code and returns the library
// with its functions, or Redis's error text. It does not install it.
func (e *scriptEngine) loadLibrary(code []byte) (*luaLibrary, string) {
	if !bytes.HasPrefix(code, []byte("#!")) {
		return nil, "ERR Missing library metadata"
	}
	line := code
	if i := bytes.IndexByte(code, '\n'); i >= 0 {
		line = code[:i]
	}
	parts := strings.Split(string(line[2:]), " ")
	if parts[0] != "lua" {
		return nil, "ERR Engine '" + parts[0] + "' not found"
	}
	name := ""
	for _, p := range parts[1:] {
		if p == "" {
			continue
		}
		if !strings.HasPrefix(p, "name=") {
			return nil, "ERR Invalid metadata value given: " + p
		}
		name = p[len("name="):]
	}
	if name == "" {
		return nil, "ERR Library name was not given"
	}
	if !validName(name) {
		return nil, "ERR " + errBadName
	}
	fn, err := e.L.Load(strings.NewReader(string(code[len(line):])), "user_function")
	if err != nil {
		return nil, "ERR Error compiling function: " + compileErrText(err)
	}
	fn.Env = e.env
	fn.Proto.IsVarArg &^= lua.VarArgNeedsArg
	lib := &luaLibrary{name: name, code: string(code), funcs: make(map[string]*luaFunction)}
	e.loading = lib
	// Library code runs under the same clock as scripts, so a loop in it
	// can be killed too.
	e.run = &scriptRun{name: name, isFunc: true, loadOnly: true, start: time.Now()}
	// The code and the functions it defines share the scripts' globals;
	// only while it loads is redis the restricted table.
	runtimeRedis := e.globals.RawGetString("redis")
	e.globals.RawSetString("redis", e.loadRedis())
	e.L.Push(fn)
	err = e.L.PCall(0, 0, nil)
	e.globals.RawSetString("redis", runtimeRedis)
	e.run = nil
	e.loading = nil
	if err != nil {
		msg := err.Error()
		if aerr, ok := err.(*lua.ApiError); ok {
			msg = lua.LVAsString(aerr.Object)
			if t, ok := aerr.Object.(*lua.LTable); ok {
				msg = lua.LVAsString(t.RawGetString("err"))
			} else {
				msg = "ERR " + msg
			}
		}
		return nil, "ERR Error registering functions: " + noCRLF(msg)
	}
	if len(lib.funcs) == 0 {
		return nil, "ERR No functions registered"
	}
	return lib, ""
}

// luaRegisterFunction is redis.register_function, in both forms.
func (e *scriptEngine) luaRegisterFunction(L *lua.LState) int {
	lib := e.loading
	if lib == nil {
		L.Error(luaError(L, "redis.register_function can only be called on FUNCTION LOAD command"), 1)
	}
	fail := func(msg string) { L.Error(luaError(L, msg), 1) }
	f := &luaFunction{lib: lib}
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			fail("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		var bad string
		t.ForEach(func(k, v lua.LValue) {
			if bad != "" {
				return
			}
			ks, ok := k.(lua.LString)
			if !ok {
				bad = "named argument key given to redis.register_function is not a string"
				return
			}
			switch ks {
			case "function_name":
				s, ok := v.(lua.LString)
				if !ok {
					bad = "function_name argument given to redis.register_function must be a string"
					return
				}
				f.name = string(s)
			case "description":
				s, ok := v.(lua.LString)
				if !ok {
					bad = "description argument given to redis.register_function must be a string"
					return
				}
				f.desc, f.hasD = string(s), true
			case "callback":
				fn, ok := v.(*lua.LFunction)
				if !ok {
					bad = "callback argument given to redis.register_function must be a function"
					return
				}
				f.fn = fn
			case "flags":
				ft, ok := v.(*lua.LTable)
				if !ok {
					bad = "flags argument to redis.register_function must be a table representing function flags"
					return
				}
				for i := 1; ; i++ {
					el := ft.RawGetInt(i)
					if el == lua.LNil {
						break
					}
					s, ok := el.(lua.LString)
					if !ok {
						bad = "unknown flag given"
						return
					}
					fl, ok := parseScriptFlag(string(s))
					if !ok {
						bad = "unknown flag given"
						return
					}
					f.flags |= fl
				}
			default:
				bad = "unknown argument given to redis.register_function"
			}
		})
		if bad != "" {
			fail(bad)
		}
		if f.name == "" {
			fail("redis.register_function must get a function name argument")
		}
		if f.fn == nil {
			fail("redis.register_function must get a callback argument")
		}
	case 2:
		s, ok := L.Get(1).(lua.LString)
		if !ok {
			fail("first argument to redis.register_function must be a string")
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			fail("second argument to redis.register_function must be a function")
		}
		f.name, f.fn = string(s), fn
	default:
		fail("wrong number of arguments to redis.register_function")
	}
	if !validName(f.name) {
		fail(errBadName)
	}
	if lib.funcs[f.name] != nil {
		fail("Function already exists in the library")
	}
	lib.funcs[f.name] = f
	return 0
}

// install adds lib, replacing a library of the same name when replace is
// set; it returns Redis's error text on a conflict.
func (e *scriptEngine) install(lib *luaLibrary, replace bool) string {
	old := e.libs[lib.name]
	if old != nil && !replace {
		return "ERR Library '" + lib.name + "' already exists"
	}
	for name := range lib.funcs {
		if f := e.funcs[name]; f != nil && f.lib != old {
			return "ERR Function " + name + " already exists"
		}
	}
	if old != nil {
		e.removeLibrary(old)
	}
	e.libs[lib.name] = lib
	for name, f := range lib.funcs {
		e.funcs[name] = f
	}
	return ""
}

func (e *scriptEngine) removeLibrary(lib *luaLibrary) {
	for name := range lib.funcs {
		delete(e.funcs, name)
	}
	delete(e.libs, lib.name)
}

func cmdFunctionLoad(c *Client, args [][]byte) {
	replace := false
	for _, a := range args[2 : len(args)-1] {
		if !equalFold(a, "replace") {
			c.writeError("ERR Unknown option given: " + string(a))
			return
		}
		replace = true
	}
	e := c.srv.scripting()
	lib, errText := e.loadLibrary(args[len(args)-1])
	if lib == nil {
		c.writeError(errText)
		return
	}
	if errText := e.install(lib, replace); errText != "" {
		c.writeError(errText)
		return
	}
	c.srv.stats.dirty++
	c.writeBulkString(lib.name)
}

func cmdFCall(c *Client, args [][]byte)   { fcallGeneric(c, args, false) }
func cmdFCallRO(c *Client, args [][]byte) { fcallGeneric(c, args, true) }

func fcallGeneric(c *Client, args [][]byte, ro bool) {
	e := c.srv.scripting()
	f := e.funcs[string(args[1])]
	if f == nil {
		c.writeError("ERR Function not found")
		return
	}
	if _, ok := parseInt(args[2]); !ok {
		c.writeError("ERR Bad number of keys provided")
		return
	}
	keys, argv, ok := parseNumKeys(c, args)
	if !ok {
		return
	}
	if ro && f.flags&sfNoWrites == 0 {
		c.writeError("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	run := &scriptRun{name: f.name, isFunc: true, readOnly: ro || f.flags&sfNoWrites != 0, cmd: args}
	e.call(c, f.fn, run, keys, argv)
}

func cmdFunctionDelete(c *Client, args [][]byte) {
	e := c.srv.scripting()
	lib := e.libs[string(args[2])]
	if lib == nil {
		c.writeError("ERR Library not found")
		return
	}
	e.removeLibrary(lib)
	c.srv.stats.dirty++
	c.writeOK()
}

func cmdFunctionFlush(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.writeSubcommandArityError(args)
		return
	}
	if flushMode(c, args, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option") {
		if e := c.srv.lua; e != nil {
			clear(e.libs)
			clear(e.funcs)
		}
		c.srv.stats.dirty++
		c.writeOK()
	}
}

func cmdFunctionKill(c *Client, args [][]byte) { scriptKill(c, true) }

// sortedLibs lists the libraries by name.
func (e *scriptEngine) sortedLibs() []*luaLibrary {
	libs := make([]*luaLibrary, 0, len(e.libs))
	for _, l := range e.libs {
		libs = append(libs, l)
	}
	sort.Slice(libs, func(i, j int) bool { return libs[i].name < libs[j].name })
	return libs
}

func cmdFunctionList(c *Client, args [][]byte) {
	withCode, pattern, hasPattern := false, []byte(nil), false
	for i := 2; i < len(args); i++ {
		switch {
		case !withCode && equalFold(args[i], "withcode"):
			withCode = true
		case !hasPattern && equalFold(args[i], "libraryname"):
			if i >= len(args)-1 {
				c.writeError("ERR library name argument was not given")
				return
			}
			hasPattern = true
			pattern = args[i+1]
			i++
		default:
			c.writeError("ERR Unknown argument " + string(args[i]))
			return
		}
	}
	e := c.srv.scripting()
	var libs []*luaLibrary
	for _, l := range e.sortedLibs() {
		if !hasPattern || globMatch(pattern, []byte(l.name), false) {
			libs = append(libs, l)
		}
	}
	c.writeArray(len(libs))
	for _, l := range libs {
		n := 3
		if withCode {
			n++
		}
		c.writeMap(n)
		c.writeBulkString("library_name")
		c.writeBulkString(l.name)
		c.writeBulkString("engine")
		c.writeBulkString("LUA")
		c.writeBulkString("functions")
		names := make([]string, 0, len(l.funcs))
		for name := range l.funcs {
			names = append(names, name)
		}
		sort.Strings(names)
		c.writeArray(len(names))
		for _, name := range names {
			f := l.funcs[name]
			c.writeMap(3)
			c.writeBulkString("name")
			c.writeBulkString(f.name)
			c.writeBulkString("description")
			if f.hasD {
				c.writeBulkString(f.desc)
			} else {
				c.writeNull()
			}
			c.writeBulkString("flags")
			var fl []string
			for _, sf := range scriptFlagNames {
				if f.flags&sf.f != 0 {
					fl = append(fl, sf.name)
				}
			}
			c.writeSet(len(fl))
			for _, s := range fl {
				c.writeSimple(s)
			}
		}
		if withCode {
			c.writeBulkString("library_code")
			c.writeBulkString(l.code)
		}
	}
}

// cmdFunctionStats: the running script is never seen by another client
// here unless busy (the lock is held), which is when Redis shows it too.
func cmdFunctionStats(c *Client, args [][]byte) {
	e := c.srv.scripting()
	c.writeMap(2)
	c.writeBulkString("running_script")
	if r := e.run; r != nil && r.c != c && !r.loadOnly {
		c.writeMap(3)
		c.writeBulkString("name")
		c.writeBulkString(r.name)
		c.writeBulkString("command")
		c.writeArray(len(r.cmd))
		for _, a := range r.cmd {
			c.writeBulk(a)
		}
		c.writeBulkString("duration_ms")
		c.writeInt(time.Since(r.start).Milliseconds())
	} else {
		c.writeNull()
	}
	c.writeBulkString("engines")
	c.writeMap(1)
	c.writeBulkString("LUA")
	c.writeMap(2)
	c.writeBulkString("libraries_count")
	c.writeInt(int64(len(e.libs)))
	c.writeBulkString("functions_count")
	c.writeInt(int64(len(e.funcs)))
}

func cmdFunctionHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Library description",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
		"HELP",
		"    Print this help.",
	})
}

// ---- FUNCTION DUMP / RESTORE ----

// rdbOpFunction2 is RDB_OPCODE_FUNCTION2: a library's code follows.
const rdbOpFunction2 = 245

// cmdFunctionDump writes every library as RDB_OPCODE_FUNCTION2 and its
// code as an RDB string (LZF-compressed when that saves, as Redis's
// rdbSaveRawString does: rdb.go), then the RDB version and the CRC64.
func cmdFunctionDump(c *Client, args [][]byte) {
	var w rdbWriter
	if e := c.srv.lua; e != nil {
		for _, l := range e.sortedLibs() {
			w.byte(rdbOpFunction2)
			w.str([]byte(l.code))
		}
	}
	c.writeBulk(dumpTrailer(w.b))
}

func cmdFunctionRestore(c *Client, args [][]byte) {
	if len(args) > 4 {
		c.writeSubcommandArityError(args)
		return
	}
	policy := "append"
	if len(args) == 4 {
		switch {
		case equalFold(args[3], "replace"):
			policy = "replace"
		case equalFold(args[3], "append"):
		case equalFold(args[3], "flush"):
			policy = "flush"
		default:
			c.writeError("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	p, ok := verifyDumpPayload(args[2])
	if !ok {
		c.writeError("ERR DUMP payload version or checksum are wrong")
		return
	}
	e := c.srv.scripting()
	r := rdbReader{b: p[:len(p)-10]}
	var libs []*luaLibrary
	for r.left() > 0 {
		if op, _ := r.byte(); op != rdbOpFunction2 {
			c.writeError("ERR given type is not a function")
			return
		}
		code, err := r.str()
		if err != nil {
			c.writeError("ERR payload is not a valid functions dump")
			return
		}
		lib, errText := e.loadLibrary(code)
		if lib == nil {
			c.writeError(errText)
			return
		}
		libs = append(libs, lib)
	}
	// Check every conflict before changing anything.
	seen := map[string]bool{}
	for _, lib := range libs {
		if seen[lib.name] {
			c.writeError("ERR Library '" + lib.name + "' already exists")
			return
		}
		seen[lib.name] = true
		if policy == "append" && e.libs[lib.name] != nil {
			c.writeError("ERR Library '" + lib.name + "' already exists")
			return
		}
		for name := range lib.funcs {
			if f := e.funcs[name]; f != nil && policy != "flush" && (policy == "append" || f.lib.name != lib.name) {
				c.writeError("ERR Function " + name + " already exists")
				return
			}
		}
	}
	if policy == "flush" {
		clear(e.libs)
		clear(e.funcs)
	}
	for _, lib := range libs {
		if errText := e.install(lib, true); errText != "" {
			c.writeError(errText)
			return
		}
	}
	c.srv.stats.dirty++
	c.writeOK()
}
