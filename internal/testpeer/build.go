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

// build is one build of a main package with a set of build tags.
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
	b.once.Do(func() {
		b.path, b.err = buildMain("dpulab", tags)
		if b.err == nil && agentExists() {
			// The agent the controller uploads to SSH hosts, next to it
			// where it looks first (runner.AgentFinder): built here once,
			// not from source by every run a test starts.
			b.err = buildMainAs("dpulab-agent", tags, filepath.Join(filepath.Dir(b.path), "dpulab-agent-"+runtime.GOOS+"-"+runtime.GOARCH))
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Agent is the program lab hosts run (server, bench, sample): a build of
// ./cmd/dpulab-agent, a fraction of the controller's size and link time,
// for tests that only need those commands. Until that package exists it
// is the controller, which has the same commands; the test log says so.
func Agent(t testing.TB) string {
	t.Helper()
	return AgentTags(t, "")
}

// AgentTags is Agent built with -tags tags.
func AgentTags(t testing.TB, tags string) string {
	t.Helper()
	if !agentExists() {
		t.Logf("no ./cmd/dpulab-agent in this tree: using ./cmd/dpulab, which has the same server, bench and sample commands")
		return DpulabTags(t, tags)
	}
	key := "agent\x00" + tags
	buildsMu.Lock()
	b := builds[key]
	if b == nil {
		b = &build{}
		builds[key] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() { b.path, b.err = buildMain("dpulab-agent", tags) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// agentExists reports whether the module holds ./cmd/dpulab-agent, found
// from this file's place in it (internal/testpeer).
func agentExists() bool {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return false
	}
	st, err := os.Stat(filepath.Join(filepath.Dir(file), "..", "..", "cmd", "dpulab-agent", "main.go"))
	return err == nil && !st.IsDir()
}

// buildMain builds ./cmd/<name> with tags into this test binary's build
// directory.
func buildMain(name, tags string) (string, error) {
	var err error
	buildsMu.Lock()
	if buildDir == "" {
		buildDir, err = os.MkdirTemp("", "dpulab-test-build-")
	}
	dir := buildDir
	buildsMu.Unlock()
	if err != nil {
		return "", err
	}
	file := name
	if tags != "" {
		// Each tag set in a directory of its own, where the controller
		// and the agent built with those tags sit side by side.
		dir = filepath.Join(dir, "tags-"+tags)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, file)
	if err := buildMainAs(name, tags, path); err != nil {
		return "", err
	}
	return path, nil
}

// buildMainAs builds ./cmd/<name> with tags into path.
func buildMainAs(name, tags, path string) error {
	what := "go build ./cmd/" + name
	if tags != "" {
		what = "go build -tags " + tags + " ./cmd/" + name
	}
	// go test puts its own GOROOT/bin first in PATH (Go 1.19+).
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	cmd := exec.Command(goTool, "build", "-tags", tags, "-o", path, "github.com/dpulab/dpulab/cmd/"+name)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", what, err, out)
	}
	return nil
}

// RemoveBuilds deletes what Dpulab, Agent and their Tags variants built; call it from
// TestMain.
func RemoveBuilds() {
	buildsMu.Lock()
	defer buildsMu.Unlock()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}
