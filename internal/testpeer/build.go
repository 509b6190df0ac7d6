package testpeer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
		// go test puts its own GOROOT/bin first in PATH (Go 1.19+).
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("build ./cmd/dpulab: %w", err)
			return
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
