//go:build unix

package steps

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/runner"
)

// fakeTarget is a host that runs nothing: it records what the engine asks
// of it and answers commands through handle. Through Options.Targets it
// lets a step kind be tested in milliseconds, beside the real-process
// tests.
type fakeTarget struct {
	name string
	// handle answers a command: its output lines and exit status (nil:
	// every command succeeds silently).
	handle func(cmd string) (out []string, code int)

	mu      sync.Mutex
	runs    []string
	started []runner.ProcSpec
	stopped []runner.Proc
	files   map[string][]byte
}

func (f *fakeTarget) Name() string { return f.name }

func (f *fakeTarget) Run(ctx context.Context, c runner.Command) (runner.Result, error) {
	f.mu.Lock()
	f.runs = append(f.runs, c.Cmd)
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return runner.Result{}, err
	}
	var out []string
	code := 0
	if f.handle != nil {
		out, code = f.handle(c.Cmd)
	}
	var res runner.Result
	for _, l := range out {
		line := runner.Line{Host: f.name, Text: l, Time: time.Now()}
		if c.Output != nil {
			c.Output(line)
		}
		res.Tail = append(res.Tail, line)
	}
	res.ExitCode = code
	return res, nil
}

func (f *fakeTarget) Start(_ context.Context, p runner.ProcSpec) (runner.Proc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, p)
	return runner.Proc{Host: f.name, Name: p.Name, PID: 1000 + len(f.started), LogFile: p.LogFile}, nil
}

func (f *fakeTarget) Stop(_ context.Context, p runner.Proc, _ time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = append(f.stopped, p)
	return nil
}

func (f *fakeTarget) Upload(_ context.Context, localPath, remotePath string, _ fs.FileMode) error {
	b, err := os.ReadFile(localPath)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		f.files = map[string][]byte{}
	}
	f.files[remotePath] = b
	return nil
}

func (f *fakeTarget) ReadFile(_ context.Context, p string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.files[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return b, nil
}

func (f *fakeTarget) Platform(context.Context) (runner.Platform, error) {
	return runner.Platform{OS: "linux", Arch: "amd64"}, nil
}

func (f *fakeTarget) Close() error { return nil }

func (f *fakeTarget) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.runs...)
}

// fakeLab sets up an inventory of the named hosts (all in role "web"), a
// fake target for each, and an engine over lab.
func fakeLab(t *testing.T, labYAML string, hosts map[string]*fakeTarget, rec *recorder) *Engine {
	t.Helper()
	dir := t.TempDir()
	var inv strings.Builder
	inv.WriteString("hosts:\n")
	for n := range hosts {
		fmt.Fprintf(&inv, "  - name: %s\n    address: 192.0.2.1\n    roles: [web]\n", n)
	}
	invPath := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(invPath, []byte(inv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dpulab")
	if err := os.WriteFile(bin, []byte("not really dpulab"), 0o755); err != nil {
		t.Fatal(err)
	}
	targets := func(name string) (runner.Target, error) {
		if f, ok := hosts[name]; ok {
			return f, nil
		}
		return nil, fmt.Errorf("no fake for %s", name)
	}
	return newEngine(t, loadLab(t, labYAML), Options{Inventory: in, Targets: targets, Binary: bin, Yes: true}, rec)
}

const fakeRunLab = `
id: fakerun
title: Fake run
summary: a run step on two hosts
duration: 1m
roles:
  web: web servers
variables:
  msg:
    type: string
    default: hello
    description: what to say
steps:
  - id: say
    title: Say
    kind: run
    on: [web]
    run:
      - echo {{.vars.msg}}
      - echo "in quotes {{.vars.msg}}"
      - touch done
    verify:
      run: cat done
      expect: '^ok$'
      retries: 2
      interval: 1ms
    hint: the lab's hint
`

func TestKindRunOnFakeTargets(t *testing.T) {
	ok := &fakeTarget{name: "a", handle: func(cmd string) ([]string, int) {
		if cmd == "cat done" {
			return []string{"ok"}, 0
		}
		return nil, 0
	}}
	bad := &fakeTarget{name: "b", handle: func(cmd string) ([]string, int) {
		if strings.HasPrefix(cmd, "echo \"in quotes") {
			return []string{"disk full", "giving up"}, 3
		}
		return nil, 0
	}}
	rec := &recorder{}
	e := fakeLab(t, fakeRunLab, map[string]*fakeTarget{"a": ok, "b": bad}, rec)
	e.opts.Vars = nil
	if err := e.SetVars(map[string]string{"msg": "it's $(id)"}); err != nil {
		t.Fatal(err)
	}
	if st := e.RunStep(testCtx(t, 10*time.Second), 0); st != results.Failed {
		t.Fatalf("status %v, want failed (host b's second command fails)", st)
	}
	// Host a ran every command, quoted for its context, then verify.
	want := []string{`echo 'it'\''s $(id)'`, `echo "in quotes it's \$(id)"`, "touch done", "cat done"}
	if got := userCommands(ok.commands()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("host a ran:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Host b stopped at its failing command.
	if got := userCommands(bad.commands()); len(got) != 2 {
		t.Errorf("host b ran %q, want it to stop after the failing command", got)
	}
	f := rec.finished()["say"]
	if f.Host != "b" || !strings.Contains(f.Err, "exit status 3") || strings.Join(f.Tail, "|") != "disk full|giving up" || f.Hint != "the lab's hint" {
		t.Errorf("finished = %+v", f)
	}
}

func TestKindCheckRetriesOnFakeTarget(t *testing.T) {
	var tries int
	h := &fakeTarget{name: "a", handle: func(cmd string) ([]string, int) {
		if cmd == "cat done" {
			tries++
			return []string{"not yet"}, 0
		}
		return nil, 0
	}}
	rec := &recorder{}
	e := fakeLab(t, fakeRunLab, map[string]*fakeTarget{"a": h}, rec)
	if st := e.RunStep(testCtx(t, 10*time.Second), 0); st != results.Failed {
		t.Fatalf("status %v, want failed", st)
	}
	if tries != 3 {
		t.Errorf("verify ran %d times, want 3 (retries: 2)", tries)
	}
	if f := rec.finished()["say"]; !strings.Contains(f.Err, "after 3 tries") {
		t.Errorf("error %q does not count the tries", f.Err)
	}
}

// userCommands drops the engine's own housekeeping (working directory,
// dpulab upload check) from a fake's command log.
func userCommands(cmds []string) []string {
	var out []string
	for _, c := range cmds {
		if strings.HasPrefix(c, "mkdir -p -m 700 ") || strings.HasPrefix(c, "f=") {
			continue
		}
		out = append(out, c)
	}
	return out
}

// serverFake is a fake host on which a started `dpulab server` answers
// PING on its port, and the engine's housekeeping scripts succeed.
func serverFake(name string) *fakeTarget {
	f := &fakeTarget{name: name}
	portRE := regexp.MustCompile(`--target 127\.0\.0\.1:(\d+) `)
	f.handle = func(cmd string) ([]string, int) {
		switch {
		case strings.Contains(cmd, "dpulab-stop-marked"):
			return []string{"0"}, 0
		case strings.Contains(cmd, " bench --json "):
			m := portRE.FindStringSubmatch(cmd)
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, p := range f.started {
				if m != nil && strings.Contains(p.Cmd, "--port "+m[1]) && !f.stoppedLocked(p.Name) {
					return nil, 0
				}
			}
			return []string{"connection refused"}, 1
		}
		return nil, 0
	}
	return f
}

func (f *fakeTarget) stoppedLocked(name string) bool {
	for _, p := range f.stopped {
		if p.Name == name {
			return true
		}
	}
	return false
}

func TestKindDeployOnFakeTargets(t *testing.T) {
	a, b := serverFake("a"), serverFake("b")
	rec := &recorder{}
	e := fakeLab(t, `
id: fakedeploy
title: Fake deploy
summary: three instances on each of two hosts
duration: 1m
roles:
  web: web servers
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [web]
    group: g
    instances: "3"
    port: "7000"
    bind: 0.0.0.0
`, map[string]*fakeTarget{"a": a, "b": b}, rec)
	ctx := testCtx(t, 30*time.Second)
	if st := e.RunStep(ctx, 0); st != results.Done {
		t.Fatalf("deploy: %v: %s", st, rec.finished()["deploy"].Err)
	}
	for _, f := range []*fakeTarget{a, b} {
		if len(f.started) != 3 {
			t.Fatalf("%s: %d servers started, want 3", f.name, len(f.started))
		}
		// Several start at once: in any order.
		var ports []string
		for _, p := range f.started {
			if !strings.HasPrefix(p.LogFile, e.workdir()+"/") {
				t.Errorf("%s: %s logs to %s, outside the working directory %s (cleanup finds processes by it)", f.name, p.Name, p.LogFile, e.workdir())
			}
			ports = append(ports, strings.TrimPrefix(p.Name, "server:g:"))
		}
		if slices.Sort(ports); strings.Join(ports, ",") != "7000,7001,7002" {
			t.Errorf("%s: started ports %v, want 7000..7002", f.name, ports)
		}
		// One command makes every instance's directory; each config is
		// written straight into its own (through a temporary file renamed
		// over it, runner.WriteFile).
		mkdirs := 0
		for _, c := range f.commands() {
			if strings.HasPrefix(c, "mkdir -p -m 700 ") && strings.Contains(c, runner.Quote(e.workdir()+"/g-7002")) {
				mkdirs++
			}
		}
		if mkdirs != 1 {
			t.Errorf("%s: %d commands made the instances' directories, want one:\n%s", f.name, mkdirs, strings.Join(f.commands(), "\n"))
		}
		for _, port := range []string{"7000", "7001", "7002"} {
			conf := e.workdir() + "/g-" + port + "/redis.conf"
			if b, err := f.ReadFile(ctx, conf); err != nil || !strings.Contains(string(b), "port "+port) {
				t.Errorf("%s: config %s not written (%v): %q", f.name, conf, err, b)
			}
		}
	}
	e.mu.Lock()
	insts := e.state.Deployments["g"].Instances
	nprocs := len(e.state.Procs)
	e.mu.Unlock()
	if len(insts) != 6 || nprocs != 6 || insts[0].Address != "192.0.2.1:7000" {
		t.Errorf("deployment %+v with %d recorded processes, want 6 instances at the hosts' addresses", insts, nprocs)
	}
	if err := e.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*fakeTarget{a, b} {
		if len(f.stopped) != 3 {
			t.Errorf("%s: %d servers stopped by cleanup, want 3", f.name, len(f.stopped))
		}
		cmds := f.commands()
		if last := cmds[len(cmds)-1]; last != "rm -rf -- "+runner.Quote(e.workdir()) {
			t.Errorf("%s: cleanup's last command %q, want the working directory removed", f.name, last)
		}
	}
}

func TestInventoryWarningsAreSaid(t *testing.T) {
	dir := t.TempDir()
	invPath := filepath.Join(dir, "hosts.ini")
	ini := "[web]\nw1 ansible_host=192.0.2.10 ansible_password=hunter2 ansible_become=yes\n"
	if err := os.WriteFile(invPath, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	f := &fakeTarget{name: "w1", handle: func(cmd string) ([]string, int) {
		if cmd == "cat done" {
			return []string{"ok"}, 0
		}
		return nil, 0
	}}
	bin := filepath.Join(dir, "dpulab")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, loadLab(t, fakeRunLab), Options{Inventory: in, Binary: bin, Targets: func(string) (runner.Target, error) { return f, nil }}, rec)
	if err := e.Run(testCtx(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(rec.output(), "\n")
	if !strings.Contains(out, "ansible_password") || !strings.Contains(out, "ansible_become") {
		t.Errorf("the inventory's unmapped settings were not said:\n%s", out)
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("a password from the inventory reached the output:\n%s", out)
	}
}
