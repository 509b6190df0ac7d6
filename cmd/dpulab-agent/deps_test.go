package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/dpulab/dpulab"

// goList runs `go list` in this module with env added and returns its
// lines.
func goList(t *testing.T, env []string, args ...string) []string {
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
	return strings.Fields(string(out))
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
// run the wrong way: labs is a parser (no load generator, so no go-redis
// or HdrHistogram); the engine does not link the server; the dashboard
// widget takes the bench's constants from benchwire; the wire packages
// are leaves (the standard library only).
func TestLayers(t *testing.T) {
	heavy := []string{module + "/server/bench", "github.com/redis/go-redis", "github.com/HdrHistogram/hdrhistogram-go"}
	labsDeps := goList(t, nil, "-deps", module+"/labs")
	if hit := matches(labsDeps, heavy); len(hit) > 0 {
		t.Errorf("labs links %s", strings.Join(hit, ", "))
	}
	for _, d := range labsDeps {
		if d == module+"/server" {
			t.Errorf("labs links %s", d)
		}
	}
	for _, d := range goList(t, nil, "-deps", module+"/steps") {
		if d == module+"/server" {
			t.Errorf("steps links %s (the server's defaults and RDMA settings are serverwire's)", d)
		}
	}
	for _, d := range goList(t, nil, "-f", "{{join .Imports \"\\n\"}}", module+"/tui/components/dashboard") {
		if d == module+"/server/bench" || d == module+"/server" {
			t.Errorf("the dashboard widget imports %s (its constants are benchwire's)", d)
		}
	}
	for _, leaf := range goList(t, nil, module+"/internal/wire/...") {
		for _, d := range goList(t, nil, "-deps", leaf) {
			first, _, _ := strings.Cut(d, "/")
			if d != leaf && (strings.Contains(first, ".") || strings.HasPrefix(d, module+"/")) {
				t.Errorf("%s is a leaf but links %s", leaf, d)
			}
		}
	}
}
