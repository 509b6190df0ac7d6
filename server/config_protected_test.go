package server

import (
	"strings"
	"testing"
)

// TestEnableDebugCommand: DEBUG gets Redis's refusal unless
// enable-debug-command allows the client (yes, or local from loopback);
// then DEBUG SLEEP runs. The setting is
// read from the config file and reported by CONFIG GET.
func TestEnableDebugCommand(t *testing.T) {
	for _, tc := range []struct {
		setting, want string
	}{
		{"no", "(error) ERR DEBUG command not allowed."},
		{"local", `"OK"`},
		{"YES", `"OK"`},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			cfg := DefaultConfig()
			if err := cfg.LoadFile(writeConf(t, t.TempDir(), "redis.conf", "enable-debug-command "+tc.setting+"\n")); err != nil {
				t.Fatal(err)
			}
			c := dialTest(t, StartTest(t, cfg))
			if got := c.do("DEBUG", "sleep", "0"); !strings.HasPrefix(got, tc.want) {
				t.Errorf("DEBUG SLEEP 0: %s", got)
			}
			c.must(`*["enable-debug-command" "`+strings.ToLower(tc.setting)+`"]`, "CONFIG", "GET", "enable-debug-command")
			c.must(`"OK"`, "MULTI")
			if tc.setting == "no" {
				c.must("(error) "+errDebugRefused, "DEBUG", "SLEEP", "0")
				c.must("(error) EXECABORT Transaction discarded because of previous errors.", "EXEC")
			} else {
				c.must(`"QUEUED"`, "DEBUG", "SLEEP", "0")
				c.must(`*["OK"]`, "EXEC")
			}
		})
	}
}
