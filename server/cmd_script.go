package server

import (
	"bytes"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// EVAL, EVALSHA, their _RO forms and SCRIPT (script.go runs them).

func init() { registerGroup(registerScriptCommands) }

func registerScriptCommands(t *commandTable) {
	const g = "scripting"
	ev := flagNoScript | flagStale
	t.add(
		&command{Name: "eval", Fn: cmdEval, Arity: -3, Flags: ev, Group: g, Summary: "Execute a Lua script server side", Since: "2.6.0"},
		&command{Name: "evalsha", Fn: cmdEvalSha, Arity: -3, Flags: ev, Group: g, Summary: "Execute a Lua script server side", Since: "2.6.0"},
		&command{Name: "eval_ro", Fn: cmdEvalRO, Arity: -3, Flags: ev | flagReadonly, Group: g, Summary: "Execute a read-only Lua script server side", Since: "7.0.0"},
		&command{Name: "evalsha_ro", Fn: cmdEvalShaRO, Arity: -3, Flags: ev | flagReadonly, Group: g, Summary: "Execute a read-only Lua script server side", Since: "7.0.0"},
		&command{Name: "script", Arity: -2, Group: g, Summary: "A container for Lua scripts management commands", Since: "2.6.0",
			Subcommands: []*command{
				{Name: "script|load", Fn: cmdScriptLoad, Arity: 3, Flags: flagNoScript | flagStale, Group: g, Summary: "Load the specified Lua script into the script cache.", Since: "2.6.0"},
				{Name: "script|exists", Fn: cmdScriptExists, Arity: -3, Flags: flagNoScript, Group: g, Summary: "Check existence of scripts in the script cache.", Since: "2.6.0"},
				{Name: "script|flush", Fn: cmdScriptFlush, Arity: -2, Flags: flagNoScript, Group: g, Summary: "Remove all the scripts from the script cache.", Since: "2.6.0"},
				{Name: "script|kill", Fn: cmdScriptKill, Arity: 2, Flags: flagNoScript | flagAllowBusy, Group: g, Summary: "Kill the script currently in execution.", Since: "2.6.0"},
				{Name: "script|help", Fn: cmdScriptHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Show helpful text about the different subcommands", Since: "5.0.0"},
			}},
	)
}

// scriptFlags are a script's shebang flags (#!lua flags=...) or a
// function's flags.
type scriptFlags uint8

const (
	sfNoWrites scriptFlags = 1 << iota
	sfAllowOOM
	sfAllowStale
	sfNoCluster
	sfAllowCrossSlot
	sfShebang // the script declared flags (a shebang), so they apply
)

var scriptFlagNames = []struct {
	f    scriptFlags
	name string
}{{sfNoWrites, "no-writes"}, {sfAllowOOM, "allow-oom"}, {sfAllowStale, "allow-stale"}, {sfNoCluster, "no-cluster"}, {sfAllowCrossSlot, "allow-cross-slot-keys"}}

func parseScriptFlag(name string) (scriptFlags, bool) {
	for _, f := range scriptFlagNames {
		if f.name == name {
			return f.f, true
		}
	}
	return 0, false
}

// luaScript is a compiled EVAL script.
type luaScript struct {
	fn    *lua.LFunction
	flags scriptFlags
}

// parseShebang reads an EVAL script's "#!lua flags=..." line. It returns
// the flags and the body with the shebang line blanked (so line numbers
// stay), or Redis's error.
func parseShebang(body []byte) (scriptFlags, []byte, string) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return 0, body, ""
	}
	line := body
	if i := bytes.IndexByte(body, '\n'); i >= 0 {
		line = body[:i]
	}
	parts := strings.Split(string(line), " ")
	if parts[0] != "#!lua" {
		return 0, nil, "ERR Unexpected engine in script shebang: " + parts[0]
	}
	flags := sfShebang
	for _, p := range parts[1:] {
		if p == "" {
			continue
		}
		if !strings.HasPrefix(p, "flags=") {
			return 0, nil, "ERR Unknown lua shebang option: " + p
		}
		for _, name := range strings.Split(p[len("flags="):], ",") {
			if name == "" {
				continue
			}
			f, ok := parseScriptFlag(name)
			if !ok {
				return 0, nil, "ERR Unexpected flag in script shebang: " + name
			}
			flags |= f
		}
	}
	return flags, body[len(line):], ""
}

// script returns the compiled script for body, compiling and caching it
// on first use; errText is Redis's error reply when it does not compile.
func (e *scriptEngine) script(body []byte) (sha string, sc *luaScript, errText string) {
	sha = sha1hex(body)
	if sc := e.scriptsBySha[sha]; sc != nil {
		return sha, sc, ""
	}
	flags, code, errText := parseShebang(body)
	if errText != "" {
		return sha, nil, errText
	}
	fn, err := e.compile(code, "user_script")
	if err != nil {
		return sha, nil, "ERR Error compiling script (new function): " + compileErrText(err)
	}
	sc = &luaScript{fn: fn, flags: flags}
	e.scriptsBySha[sha] = sc
	return sha, sc, ""
}

// compileErrText is a compile error's text on one line.
func compileErrText(err error) string {
	if aerr, ok := err.(*lua.ApiError); ok {
		return noCRLF(strings.TrimSpace(lua.LVAsString(aerr.Object)))
	}
	return noCRLF(strings.TrimSpace(err.Error()))
}

func cmdEval(c *Client, args [][]byte)      { evalGeneric(c, args, false, false) }
func cmdEvalSha(c *Client, args [][]byte)   { evalGeneric(c, args, true, false) }
func cmdEvalRO(c *Client, args [][]byte)    { evalGeneric(c, args, false, true) }
func cmdEvalShaRO(c *Client, args [][]byte) { evalGeneric(c, args, true, true) }

// parseNumKeys reads numkeys of EVAL and FCALL and splits the keys from
// the arguments after it.
func parseNumKeys(c *Client, args [][]byte) (keys, argv [][]byte, ok bool) {
	n, isInt := parseInt(args[2])
	switch {
	case !isInt:
		c.writeError(errNotInt)
	case n > int64(len(args)-3):
		c.writeError("ERR Number of keys can't be greater than number of args")
	case n < 0:
		c.writeError("ERR Number of keys can't be negative")
	default:
		return args[3 : 3+n], args[3+n:], true
	}
	return nil, nil, false
}

func evalGeneric(c *Client, args [][]byte, bySha, ro bool) {
	keys, argv, ok := parseNumKeys(c, args)
	if !ok {
		return
	}
	e := c.srv.scripting()
	var sha string
	var sc *luaScript
	if bySha {
		sha = strings.ToLower(string(args[1]))
		sc = e.scriptsBySha[sha]
		if sc == nil {
			c.writeError(errNoScript)
			return
		}
	} else {
		var errText string
		if sha, sc, errText = e.script(args[1]); sc == nil {
			c.writeError(errText)
			return
		}
	}
	run := &scriptRun{name: sha, readOnly: ro, cmd: args}
	if sc.flags&sfShebang != 0 {
		if ro && sc.flags&sfNoWrites == 0 {
			c.writeError("ERR Can not execute a script with write flag using *_ro command.")
			return
		}
		if sc.flags&sfNoWrites != 0 {
			run.readOnly = true
		}
	}
	e.call(c, sc.fn, run, keys, argv)
}

func cmdScriptLoad(c *Client, args [][]byte) {
	sha, sc, errText := c.srv.scripting().script(args[2])
	if sc == nil {
		c.writeError(errText)
		return
	}
	c.writeBulkString(sha)
}

func cmdScriptExists(c *Client, args [][]byte) {
	e := c.srv.scripting()
	c.writeArray(len(args) - 2)
	for _, a := range args[2:] {
		if e.scriptsBySha[strings.ToLower(string(a))] != nil {
			c.writeInt(1)
		} else {
			c.writeInt(0)
		}
	}
}

func cmdScriptFlush(c *Client, args [][]byte) {
	if len(args) > 3 || len(args) == 3 && !equalFold(args[2], "sync") && !equalFold(args[2], "async") {
		c.writeError("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	e := c.srv.scripting()
	clear(e.scriptsBySha)
	c.writeOK()
}

func cmdScriptKill(c *Client, args [][]byte) { scriptKill(c, false) }

// scriptKill is SCRIPT KILL (fn false) and FUNCTION KILL (fn true).
func scriptKill(c *Client, fn bool) {
	e := c.srv.lua
	if e == nil || e.run == nil || e.run.isFunc != fn {
		c.writeError("NOTBUSY No scripts in execution right now.")
		return
	}
	if e.run.wrote {
		c.writeError("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
		return
	}
	e.run.killed = true
	c.writeOK()
}

func cmdScriptHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.",
		"HELP",
		"    Print this help.",
	})
}
