package server

// MODULE: dpulab's server loads no modules. LIST is empty and HELP is
// Redis's; LOAD, LOADEX and UNLOAD are protected commands, refused as
// Redis refuses them under enable-module-command (default no), and when
// allowed they fail as Redis's do for a library that cannot be loaded or
// a module that is not loaded.

func init() {
	registerGroup(registerModuleCommands)
	// COMMAND DOCS' argument syntax (command_docs.go's usages) for this
	// group and the other commands of this branch.
	for name, u := range map[string]string{
		"module|load": "path [arg [arg ...]]", "module|unload": "name",
		"module|loadex":  "path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]",
		"client|caching": "YES|NO", "client|reply": "ON|OFF|SKIP",
		"latency|histogram": "[command [command ...]]",
	} {
		if _, ok := usages[name]; !ok {
			usages[name] = u
		}
	}
}

func registerModuleCommands(t *commandTable) {
	const g = "server"
	adm := flagAdmin | flagNoScript
	t.add(
		&command{Name: "module", Arity: -2, Group: g, Summary: "A container for module commands", Since: "4.0.0",
			Subcommands: []*command{
				{Name: "module|list", Fn: cmdModuleList, Arity: 2, Flags: adm, Group: g, Summary: "List all modules loaded by the server", Since: "4.0.0"},
				{Name: "module|load", Fn: cmdModuleLoad, Arity: -3, Flags: adm, Group: g, Summary: "Load a module", Since: "4.0.0"},
				{Name: "module|loadex", Fn: cmdModuleLoad, Arity: -3, Flags: adm, Group: g, Summary: "Load a module with extended parameters", Since: "7.0.0"},
				{Name: "module|unload", Fn: cmdModuleUnload, Arity: 3, Flags: adm, Group: g, Summary: "Unload a module", Since: "4.0.0"},
				{Name: "module|help", Fn: cmdModuleHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Show helpful text about the different subcommands", Since: "5.0.0"},
			}},
	)
}

// errModuleRefused is Redis 7.0's refusal of a protected MODULE
// subcommand under enable-module-command.
const errModuleRefused = "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

// moduleAllowed is Redis's allowProtectedAction for enable-module-command.
func (c *Client) moduleAllowed() bool { return c.protectedAllowed(c.srv.cfg.Protected.Module) }

func cmdModuleList(c *Client, args [][]byte) { c.writeArray(0) }

func cmdModuleLoad(c *Client, args [][]byte) {
	if !c.moduleAllowed() {
		c.writeError(errModuleRefused)
		return
	}
	c.writeError("ERR Error loading the extension. Please check the server logs.")
}

func cmdModuleUnload(c *Client, args [][]byte) {
	if !c.moduleAllowed() {
		c.writeError(errModuleRefused)
		return
	}
	c.writeError("ERR Error unloading module: no such module with that name")
}

func cmdModuleHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]",
		"    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>",
		"    Unload a module.",
		"HELP",
		"    Prints this help.",
	})
}
