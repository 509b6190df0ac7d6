package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestAgentFinderOrder: the agent for a platform is taken from next to the
// controller first, then from the cache; without either (and without
// building) the error names the file and the command that makes it.
func TestAgentFinderOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plat := Platform{OS: "linux", Arch: "arm64"}
	exeDir, cache := t.TempDir(), t.TempDir()
	exe := filepath.Join(exeDir, "dpulab")
	write := func(p, body string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(exe, "controller")

	_, err := (&AgentFinder{Exe: exe, CacheDir: cache, SourceDir: "-"}).Find(ctx, plat)
	for _, want := range []string{
		"no dpulab agent for linux/arm64",
		filepath.Join(exeDir, "dpulab-agent-linux-arm64"),
		filepath.Join(cache, "dpulab-agent-linux-arm64"),
		"CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -ldflags=-s -w -o " + filepath.Join(exeDir, "dpulab-agent-linux-arm64") + " ./cmd/dpulab-agent",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("no agent anywhere: err = %v, want it to say %q", err, want)
		}
	}

	inCache := filepath.Join(cache, "dpulab-agent-linux-arm64")
	write(inCache, "cached")
	if p, err := (&AgentFinder{Exe: exe, CacheDir: cache, SourceDir: "-"}).Find(ctx, plat); err != nil || p != inCache {
		t.Errorf("cached agent: %q, %v; want %q", p, err, inCache)
	}
	beside := filepath.Join(exeDir, "dpulab-agent-linux-arm64")
	write(beside, "beside")
	if p, err := (&AgentFinder{Exe: exe, CacheDir: cache, SourceDir: "-"}).Find(ctx, plat); err != nil || p != beside {
		t.Errorf("agent next to dpulab: %q, %v; want %q", p, err, beside)
	}
	// Another platform is another file.
	if _, err := (&AgentFinder{Exe: exe, CacheDir: cache, SourceDir: "-"}).Find(ctx, Platform{OS: "linux", Arch: "amd64"}); err == nil {
		t.Error("the arm64 agent was taken for amd64")
	}
	if _, err := (&AgentFinder{Exe: exe, CacheDir: cache, SourceDir: "-"}).Find(ctx, Platform{}); err == nil {
		t.Error("an unknown platform found an agent")
	}
}

// TestAgentFinderBuildsFromSource: a program compiled from a checkout (as
// this test is, like `go run ./cmd/dpulab`) builds the agent for the
// platform asked with CGO_ENABLED=0 into its cache, says so, and the
// result runs; UploadAgent then puts it on a target once (same sha256:
// not sent again).
func TestAgentFinderBuildsFromSource(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds ./cmd/dpulab-agent")
	}
	if sourceDir() == "" {
		t.Fatal("this test binary was compiled from a checkout, yet sourceDir found none")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH")
	}
	ctx := context.Background()
	cache := t.TempDir()
	var notices []string
	f := &AgentFinder{Exe: filepath.Join(t.TempDir(), "dpulab"), CacheDir: cache, Notice: func(s string) { notices = append(notices, s) }}
	tg := NewLocal()
	remoteDir := filepath.Join(t.TempDir(), "work dir")
	remote, local, sum, err := UploadAgent(ctx, tg, f, remoteDir)
	if err != nil {
		t.Fatal(err)
	}
	here := Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	if local != filepath.Join(cache, AgentName(here)) || remote != filepath.Join(remoteDir, "dpulab-agent") || len(sum) != 64 {
		t.Errorf("UploadAgent = %q, %q, %q", remote, local, sum)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "building the dpulab agent for "+here.OS+"/"+here.Arch) {
		t.Errorf("notices %q: want one saying the agent is being built", notices)
	}
	out, err := exec.Command(remote, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "dpulab agent ") || !strings.Contains(string(out), here.OS+"/"+here.Arch) {
		t.Fatalf("%s version: %v\n%s", remote, err, out)
	}
	st1, _ := os.Stat(remote)
	// Found once per finder; uploaded again only when it differs.
	if _, _, _, err := UploadAgent(ctx, tg, f, remoteDir); err != nil {
		t.Fatal(err)
	}
	st2, _ := os.Stat(remote)
	if !os.SameFile(st1, st2) || len(notices) != 1 {
		t.Errorf("second upload: same file %v, notices %q", os.SameFile(st1, st2), notices)
	}
}
