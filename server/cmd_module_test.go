package server

import "testing"

// TestModuleCommands: LIST is empty; LOAD and UNLOAD are refused under
// enable-module-command no (the default) and fail as Redis's do when
// allowed.
func TestModuleCommands(t *testing.T) {
	c, _ := newTestServer(t)
	c.must("*[]", "MODULE", "LIST")
	c.must("(error) "+errModuleRefused, "MODULE", "LOAD", "/x.so")

	cfg := DefaultConfig()
	cfg.Protected.Module = "local"
	a := dialTest(t, StartTest(t, cfg))
	a.must("(error) ERR Error loading the extension. Please check the server logs.", "MODULE", "LOAD", "/x.so")
	a.must("(error) ERR Error loading the extension. Please check the server logs.", "MODULE", "LOADEX", "/x.so")
	a.must("(error) ERR Error unloading module: no such module with that name", "MODULE", "UNLOAD", "m")
	a.must("*[]", "MODULE", "LIST")
}
