package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/dpulab/dpulab"

// goListOutput runs `go list` in this module with env added.
func goListOutput(t *testing.T, env []string, args ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH for go list")
	}
	cmd := exec.Command(goTool, append([]string{"list"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return string(out)
}

// goList is goListOutput's fields (package paths).
func goList(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	return strings.Fields(goListOutput(t, env, args...))
}

// goListLines is goListOutput's lines (one per package with -f).
func goListLines(t *testing.T, args ...string) []string {
	t.Helper()
	return strings.Split(strings.TrimSpace(goListOutput(t, nil, args...)), "\n")
}

// matches reports the packages of deps that are one of banned or under it.
func matches(deps, banned []string) []string {
	var hit []string
	for _, d := range deps {
		for _, b := range banned {
			if d == b || strings.HasPrefix(d, b+"/") {
				hit = append(hit, d)
			}
		}
	}
	return hit
}

// TestAgentDependencies pins what the agent may link: none of the
// controller's world (TUI, Markdown, vSphere, charts and statistics, SSH
// and SFTP, YAML), for the hosts it is built for.
func TestAgentDependencies(t *testing.T) {
	banned := []string{
		"github.com/charmbracelet/bubbletea", "github.com/charmbracelet/bubbles", "github.com/charmbracelet/lipgloss",
		"github.com/charmbracelet/glamour", "github.com/alecthomas/chroma",
		"github.com/vmware/govmomi",
		"gonum.org/v1/gonum", "gonum.org/v1/plot",
		"github.com/pkg/sftp", "golang.org/x/crypto/ssh", "github.com/melbahja/goph",
		"go.yaml.in/yaml", "gopkg.in/yaml.v3", "gopkg.in/yaml.v2",
		module + "/steps", module + "/tui", module + "/labs", module + "/runner",
	}
	for _, arch := range []string{"amd64", "arm64"} {
		env := []string{"GOOS=linux", "GOARCH=" + arch, "CGO_ENABLED=0"}
		deps := goList(t, env, "-deps", module+"/cmd/dpulab-agent")
		if hit := matches(deps, banned); len(hit) > 0 {
			t.Errorf("linux/%s: dpulab-agent links %s", arch, strings.Join(hit, ", "))
		}
		if len(deps) > 300 {
			t.Errorf("linux/%s: dpulab-agent links %d packages; it linked 218 when this test was written: what came in?", arch, len(deps))
		}
		// and it speaks RDMA without cgo: the rdma-core provider (over
		// purego) is in the default build.
		if !slices.Contains(deps, module+"/server/rdma/internal/ibv") || !slices.Contains(deps, "github.com/ebitengine/purego") {
			t.Errorf("linux/%s: the CGO_ENABLED=0 agent lacks the RDMA provider (server/rdma/internal/ibv, purego)", arch)
		}
	}
}

// TestLayers pins the direction of the dependency graph where it used to
// run the wrong way. The controller's layers (the engine, its results, the
// lab parser, the TUI, the runner) read what the programs on lab hosts
// print through the wire packages, and link none of those programs: not
// the server, the load generator (and so go-redis) or the sampler. labs,
// a parser, does not link HdrHistogram either. The wire packages are
// leaves: the standard library, each other and internal/termtext (itself
// the standard library only); internal/benchhdr is benchwire plus
// HdrHistogram. server/transport stays allowed: the engine and labs ask
// it which transports this build has.
func TestLayers(t *testing.T) {
	banned := []string{module + "/server/bench", module + "/server/sample", "github.com/redis/go-redis"}
	layers := []string{module + "/steps/...", module + "/labs/...", module + "/tui/...", module + "/runner/..."}
	n := 0
	for _, line := range goListLines(t, append([]string{"-f", "{{.ImportPath}} {{join .Deps \" \"}}"}, layers...)...) {
		pkg, deps, _ := strings.Cut(line, " ")
		n++
		ds := strings.Fields(deps)
		for _, d := range ds {
			if d == module+"/server" {
				t.Errorf("%s links %s", pkg, d)
			}
		}
		if hit := matches(ds, banned); len(hit) > 0 {
			t.Errorf("%s links %s", pkg, strings.Join(hit, ", "))
		}
		if pkg == module+"/labs" || strings.HasPrefix(pkg, module+"/labs/") {
			if hit := matches(ds, []string{"github.com/HdrHistogram/hdrhistogram-go"}); len(hit) > 0 {
				t.Errorf("%s links %s (a parser needs no histograms)", pkg, strings.Join(hit, ", "))
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list gave %d packages for %s: the patterns match nothing?", n, strings.Join(layers, " "))
	}
	for _, d := range goList(t, nil, "-f", "{{join .Imports \"\\n\"}}", module+"/tui/components/dashboard") {
		if d == module+"/server/bench" || d == module+"/server" {
			t.Errorf("the dashboard widget imports %s (its constants are benchwire's)", d)
		}
	}
	leafOK := func(d string) bool {
		first, _, _ := strings.Cut(d, "/")
		return !strings.Contains(first, ".") || d == module+"/internal/termtext" || strings.HasPrefix(d, module+"/internal/wire/")
	}
	leaves := goList(t, nil, module+"/internal/wire/...")
	if len(leaves) < 4 {
		t.Fatalf("internal/wire/... lists %v: want benchwire, samplewire, serverwire, transportwire at least", leaves)
	}
	for _, leaf := range leaves {
		for _, d := range goList(t, nil, "-deps", leaf) {
			if !leafOK(d) {
				t.Errorf("%s is a leaf but links %s", leaf, d)
			}
		}
	}
	for _, d := range goList(t, nil, "-deps", module+"/internal/benchhdr") {
		if !leafOK(d) && d != module+"/internal/benchhdr" && d != "github.com/HdrHistogram/hdrhistogram-go" {
			t.Errorf("internal/benchhdr links %s: it is benchwire plus HdrHistogram only", d)
		}
	}
}
