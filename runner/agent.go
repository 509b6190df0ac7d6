package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/dpulab/dpulab/internal/wire/transportwire"
)

// The agent is what runs on lab hosts: cmd/dpulab-agent (server, bench,
// sample, version), a small CGO_ENABLED=0 program built per OS/arch. The
// controller never uploads itself: it finds the agent for the host's
// platform (its uname), in this order:
//
//  1. next to the controller: dpulab-agent-linux-amd64, ... (a release's
//     layout);
//  2. when the controller runs from source (go run, go test) and a Go
//     toolchain is at hand: built from that source into the cache, with
//     CGO_ENABLED=0 -trimpath -ldflags=-s -w, saying so (go build's own
//     cache makes a rebuild of unchanged source quick, and a cached agent
//     is never staler than the source it runs beside);
//  3. in the cache, os.UserCacheDir()/dpulab/agents/dpulab-agent-OS-ARCH
//     (put there by an earlier build, or by hand).
//
// Without one, the error says which file is missing and how to make it.

// AgentName is the agent's file name for plat: dpulab-agent-linux-arm64.
func AgentName(plat Platform) string {
	name := "dpulab-agent-" + plat.OS + "-" + plat.Arch
	if plat.OS == "windows" {
		name += ".exe"
	}
	return name
}

// AgentFinder finds (or builds) the agent for a platform. The zero value
// looks next to the running executable and in the user's cache, and
// builds from source when the running program was built from a checkout
// of this module. Safe for concurrent use; each platform is resolved once.
type AgentFinder struct {
	// Exe is the controller executable whose directory is searched first
	// (default: os.Executable()).
	Exe string
	// CacheDir holds built and downloaded agents (default:
	// os.UserCacheDir()/dpulab/agents).
	CacheDir string
	// SourceDir is the module to build the agent from (default: the
	// checkout this program was compiled from, when it still exists; none
	// for a -trimpath build). "-" disables building.
	SourceDir string
	// NoRDMA builds the agent with -tags nordma, without the rdma
	// transport. With it (the default) the agent's RDMA provider links it
	// against the host's dynamic loader, to open rdma-core at run time;
	// without it, it is fully static (qemu-user with no sysroot of the
	// target's libraries runs only that).
	NoRDMA bool
	// Notice receives what the finder did that the person should know
	// (an agent built from source).
	Notice func(string)

	mu    sync.Mutex
	found map[Platform]agentResult
}

type agentResult struct {
	path string
	err  error
}

// Build is the agent f gives a host of platform plat, as far as its
// transports go (transportwire.Build.Lacks says which it has): built for
// plat, with -tags nordma when f.NoRDMA. An empty plat.Arch is a Linux
// host not connected yet. This is what decides whether a lab's transport
// can run on a lab host, not the controller's own build: a controller on
// macOS or Windows has no RDMA, the linux/amd64 and linux/arm64 agents it
// sends do. (An agent put next to the controller or in the cache by hand
// is taken to be a release's, built without nordma; the agent itself
// refuses a transport it lacks when it runs.)
func (f *AgentFinder) Build(plat Platform) transportwire.Build {
	return transportwire.Build{OS: plat.OS, Arch: plat.Arch, NoRDMA: f != nil && f.NoRDMA}
}

// AgentLacks says why the agent for a host of platform plat cannot use
// transport n, with what to do, or "" when it can.
func (f *AgentFinder) AgentLacks(plat Platform, n transportwire.Name) string {
	b := f.Build(plat)
	why := b.Lacks(n)
	if why == "" {
		return ""
	}
	agent := "the dpulab agent for " + plat.OS
	if plat.Arch != "" {
		agent += "/" + plat.Arch
	}
	todo := "give this role a Linux amd64 or arm64 host, or use transport tcp"
	if b.NoRDMA && n == transportwire.RDMA {
		todo = "let dpulab build its agents without nordma, or use transport tcp"
	}
	return "transport " + string(n) + ": " + agent + " has no " + strings.ToUpper(string(n)) + ": it is " + why + "; " + todo
}

// Find returns the path of an agent built for plat.
func (f *AgentFinder) Find(ctx context.Context, plat Platform) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.found[plat]; ok {
		return r.path, r.err
	}
	p, err := f.find(ctx, plat)
	if ctx.Err() == nil {
		// A cancelled build is tried again next time.
		if f.found == nil {
			f.found = map[Platform]agentResult{}
		}
		f.found[plat] = agentResult{p, err}
	}
	return p, err
}

func (f *AgentFinder) find(ctx context.Context, plat Platform) (string, error) {
	if plat.OS == "" || plat.Arch == "" {
		return "", errors.New("find the dpulab agent: the host's OS and architecture are unknown")
	}
	name := AgentName(plat)
	exe := f.Exe
	if exe == "" {
		if p, err := os.Executable(); err == nil {
			exe = p
		}
	}
	var looked []string
	if exe != "" {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		cand := filepath.Join(filepath.Dir(exe), name)
		if isFile(cand) {
			return cand, nil
		}
		looked = append(looked, cand)
	}
	cache := f.CacheDir
	if cache == "" {
		if d, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(d, "dpulab", "agents")
		}
	}
	src := f.SourceDir
	if src == "" {
		src = sourceDir()
	}
	if src != "-" && src != "" && cache != "" {
		goTool, err := exec.LookPath("go")
		if err == nil {
			return f.build(ctx, goTool, src, plat, filepath.Join(cache, name))
		}
	}
	if cache != "" {
		cand := filepath.Join(cache, name)
		if isFile(cand) {
			return cand, nil
		}
		looked = append(looked, cand)
	}
	return "", fmt.Errorf("no dpulab agent for %s/%s (looked for %s): put the release's %s next to dpulab, or build it from a checkout of dpulab with `CGO_ENABLED=0 GOOS=%s GOARCH=%s go build -trimpath -ldflags=-s -w -o %s ./cmd/dpulab-agent`",
		plat.OS, plat.Arch, strings.Join(looked, " and "), name, plat.OS, plat.Arch, filepath.Join(dirOf(exe), name))
}

// build builds the agent for plat from the module at src into out.
func (f *AgentFinder) build(ctx context.Context, goTool, src string, plat Platform, out string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("build the dpulab agent for %s/%s: %w", plat.OS, plat.Arch, err)
	}
	if f.Notice != nil {
		f.Notice(fmt.Sprintf("building the dpulab agent for %s/%s from %s into %s (dpulab runs from source)", plat.OS, plat.Arch, src, out))
	}
	// Into a temporary name, renamed over: a dpulab killed mid-build, or
	// two building at once, never leave half an agent to be uploaded.
	tmp := out + ".tmp-" + fmt.Sprint(os.Getpid())
	args := []string{"build", "-trimpath", "-ldflags=-s -w"}
	if f.NoRDMA {
		args = append(args, "-tags", "nordma")
	}
	cmd := exec.CommandContext(ctx, goTool, append(args, "-o", tmp, "./cmd/dpulab-agent")...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS="+plat.OS, "GOARCH="+plat.Arch, "CGO_ENABLED=0", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build the dpulab agent for %s/%s in %s: %v\n%s", plat.OS, plat.Arch, src, err, strings.TrimSpace(string(b)))
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build the dpulab agent for %s/%s: %w", plat.OS, plat.Arch, err)
	}
	return out, nil
}

// sourceDir is the root of the checkout this program was compiled from,
// when it is still there: the directory holding this package's go.mod, as
// the compiler recorded this file's path (a -trimpath build records none,
// and so never builds from source).
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	root := filepath.Dir(filepath.Dir(file))
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.Contains(string(b), "module github.com/dpulab/dpulab\n") {
		return ""
	}
	if !isFile(filepath.Join(root, "cmd", "dpulab-agent", "main.go")) {
		return ""
	}
	return root
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func dirOf(exe string) string {
	if exe == "" {
		return "."
	}
	return filepath.Dir(exe)
}
