package server

import (
	"strings"
	"testing"
)

// TestKeySpecsCoverKeys checks the key-spec table against the command
// table: every command with key positions has Redis's key-spec flags,
// none without, and a command with several specs has one key per spec.
func TestKeySpecsCoverKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, cmd := range table().all {
		flags, ok := keySpecFlags[cmd.Name]
		seen[cmd.Name] = true
		switch {
		case cmd.FirstKey > 0 && !ok:
			t.Errorf("%s: has keys but no entry in keySpecFlags", cmd.Name)
		case cmd.FirstKey == 0 && ok:
			t.Errorf("%s: has no keys but an entry in keySpecFlags", cmd.Name)
		case ok && strings.Contains(flags, "|") && cmd.LastKey >= 0:
			if n := strings.Count(flags, "|") + 1; cmd.LastKey-cmd.FirstKey+1 != n || cmd.Step != 1 {
				t.Errorf("%s: %d specs for keys %d..%d step %d", cmd.Name, n, cmd.FirstKey, cmd.LastKey, cmd.Step)
			}
		}
	}
	for name := range ownCategories {
		if !seen[name] {
			t.Errorf("%s: in ownCategories but not a command", name)
		}
	}
	for name := range movableKeySpecs {
		if !seen[name] {
			t.Errorf("%s: in movableKeySpecs but not a command", name)
		}
	}
	for _, m := range []map[string]string{keySpecFlags, keySpecNotes, commandTips, extraCategories} {
		for name := range m {
			if !seen[name] {
				t.Errorf("%s: in a COMMAND INFO table but not a command", name)
			}
		}
	}
}

func TestCategories(t *testing.T) {
	tests := []struct {
		cmd  *command
		want string
	}{
		{&command{Name: "get", Fn: cmdGet, Flags: flagReadonly | flagFast, Group: "string"}, "@read @string @fast"},
		{&command{Name: "object", Group: "generic", Subcommands: []*command{{}}}, "@slow"},
		{&command{Name: "client|kill", Fn: cmdClientKill, Flags: flagAdmin, Group: "connection"}, "@admin @slow @dangerous @connection"},
		{&command{Name: "zadd", Fn: cmdGet, Flags: flagWrite | flagFast, Group: "sorted-set"}, "@write @sortedset @fast"},
		{&command{Name: "lastsave", Fn: cmdGet, Flags: flagFast, Group: "server"}, "@admin @fast @dangerous"},
	}
	for _, tt := range tests {
		if got := strings.Join(categories(tt.cmd), " "); got != tt.want {
			t.Errorf("%s: categories %q, want %q", tt.cmd.Name, got, tt.want)
		}
	}
}
