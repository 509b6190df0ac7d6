package testpeer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

// Dpulab builds ./cmd/dpulab once per test binary and returns its path.
// The package's TestMain calls RemoveBuilds after m.Run.
func Dpulab(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		buildDir, err = os.MkdirTemp("", "dpulab-test-build-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(buildDir, "dpulab")
		cmd := exec.Command(goTool, "build", "-o", buildPath, "github.com/dpulab/dpulab/cmd/dpulab")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/dpulab: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// RemoveBuilds deletes what Dpulab built; call it from TestMain.
func RemoveBuilds() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}
