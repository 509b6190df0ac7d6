package testpeer

import (
	"fmt"
	"os"
	"path/filepath"
)

// IsolateUserDirs points XDG_DATA_HOME, XDG_STATE_HOME and XDG_CONFIG_HOME
// at a fresh temporary directory for the whole test binary (and every
// process it starts), so that tests which run labs without naming their
// results or state folder leave nothing in the user's ~/.local and the
// user's own labs and progress cannot change a test. Call it from TestMain
// before m.Run, and the returned function after.
func IsolateUserDirs() (restore func()) {
	dir, err := os.MkdirTemp("", "dpulab-test-home-")
	if err != nil {
		panic(fmt.Sprintf("testpeer: temporary home: %v", err))
	}
	for env, sub := range map[string]string{"XDG_DATA_HOME": "share", "XDG_STATE_HOME": "state", "XDG_CONFIG_HOME": "config"} {
		os.Setenv(env, filepath.Join(dir, sub))
	}
	return func() { os.RemoveAll(dir) }
}
