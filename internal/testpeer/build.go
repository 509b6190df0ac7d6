package testpeer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// build is one build of ./cmd/dpulab with a set of build tags.
type build struct {
	once sync.Once
	path string
	err  error
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*build{}
	buildDir string
)

// Dpulab builds ./cmd/dpulab once per test binary and returns its path.
// The package's TestMain calls RemoveBuilds after m.Run.
func Dpulab(t testing.TB) string {
	t.Helper()
	return DpulabTags(t, "")
}

// DpulabTags is Dpulab built with -tags tags (comma-separated, as go
// build takes them; "" for none), once per test binary and tags.
func DpulabTags(t testing.TB, tags string) string {
	t.Helper()
	buildsMu.Lock()
	b := builds[tags]
	if b == nil {
		b = &build{}
		builds[tags] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() { b.path, b.err = buildDpulab(tags) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func buildDpulab(tags string) (string, error) {
	what := "go build ./cmd/dpulab"
	if tags != "" {
		what = "go build -tags " + tags + " ./cmd/dpulab"
	}
	// go test puts its own GOROOT/bin first in PATH (Go 1.19+).
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	buildsMu.Lock()
	if buildDir == "" {
		buildDir, err = os.MkdirTemp("", "dpulab-test-build-")
	}
	dir := buildDir
	buildsMu.Unlock()
	if err != nil {
		return "", err
	}
	name := "dpulab"
	if tags != "" {
		name += "-" + tags
	}
	path := filepath.Join(dir, name)
	cmd := exec.Command(goTool, "build", "-tags", tags, "-o", path, "github.com/dpulab/dpulab/cmd/dpulab")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", what, err, out)
	}
	return path, nil
}

// RemoveBuilds deletes what Dpulab and DpulabTags built; call it from
// TestMain.
func RemoveBuilds() {
	buildsMu.Lock()
	defer buildsMu.Unlock()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}
