package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
)

// fakeRunner is the engine's side of a deploy run, recorded.
type fakeRunner struct {
	fakeEnv
	mu         sync.Mutex
	stopped    []string
	recorded   []runner.Proc
	deployed   []Plan
	unrecorded map[string]int
}

func (f *fakeRunner) Prepared(_ context.Context, h kind.Host) (runner.Target, error) {
	return f.Target(h.Name), nil
}

func (f *fakeRunner) StopGroup(_ context.Context, group string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = append(f.stopped, group)
	return nil
}

func (f *fakeRunner) ProcRecorder() func(...runner.Proc) error {
	return func(ps ...runner.Proc) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.recorded = append(f.recorded, ps...)
		return nil
	}
}

func (f *fakeRunner) StopUnrecorded(_ context.Context, _ runner.Target, marker string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unrecorded[marker]
}

func (*fakeRunner) Confirm(context.Context, string, string, string) error {
	return errors.New("not confirmed")
}

func (f *fakeRunner) Deployed(_ context.Context, _ string, p Plan, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deployed = append(f.deployed, p)
	return nil
}

func (*fakeRunner) WaitLimits() Limits { return DefaultLimits }

// servers answers a deploy's commands on fake hosts: every instance's
// process runs and uses CPU, and each instance answers PING once up says
// so (ports that answer before the start are busy).
type servers struct {
	mu     sync.Mutex
	rounds map[string]int  // status rounds by host
	busy   map[string]bool // "host port" answering before the start
	exited map[string]bool // "host pid" whose process exited
	down   map[string]bool // "host port" never answering
}

func (s *servers) handle(host, cmd string) ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.Contains(cmd, "dpulab-status"):
		if s.rounds == nil {
			s.rounds = map[string]int{}
		}
		s.rounds[host]++
		out := []string{"load 0.5", "cpus 2", "hz 100"}
		for pid := 100; pid < 120; pid++ {
			if strings.Contains(cmd, fmt.Sprint(pid)) && !s.exited[fmt.Sprintf("%s %d", host, pid)] {
				out = append(out, fmt.Sprintf("group %d 1 %d", pid, s.rounds[host]))
			}
		}
		return append(out, "end"), 0
	case strings.Contains(cmd, " bench "):
		for hp := range s.busy {
			h, port, _ := strings.Cut(hp, " ")
			if h == host && strings.Contains(cmd, ":"+port+" ") {
				return nil, 0
			}
		}
		for hp := range s.down {
			h, port, _ := strings.Cut(hp, " ")
			if h == host && strings.Contains(cmd, ":"+port+" ") {
				return []string{"connection refused"}, 1
			}
		}
		if s.rounds[host] >= 2 {
			return nil, 0
		}
		return []string{"connection refused"}, 1
	}
	return nil, 0
}

func newRun(t *testing.T, s *servers) (*fakeRunner, Plan) {
	t.Helper()
	ke := kindtest.New(kindtest.Lab(t, twoHostsLab, map[string]string{"redis.conf.tmpl": "port {{.port}}\n"}), "h1", "h2")
	ke.Ticking = true
	ke.Handle = s.handle
	f := &fakeRunner{fakeEnv: fakeEnv{Env: ke}, unrecorded: map[string]int{}}
	p, err := Resolve(f, ke.Step(t, "deploy"), map[string]string{"instances": "2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, p
}

// TestRun: a deploy on two hosts stops the group's earlier servers, makes
// the instances' directories, writes each config, starts each instance
// recorded in saved progress, waits until all answer and records the
// deployment.
func TestRun(t *testing.T) {
	t.Parallel()
	f, p := newRun(t, &servers{})
	if err := Run(context.Background(), f, "deploy", p, nil); err != nil {
		t.Fatal(err)
	}
	if len(f.stopped) != 1 || f.stopped[0] != "g" {
		t.Errorf("stopped groups %v, want g first", f.stopped)
	}
	for _, h := range []string{"h1", "h2"} {
		tg := f.Target(h)
		started := tg.Started()
		if len(started) != 2 {
			t.Fatalf("%s: %d started, want 2", h, len(started))
		}
		for k, sp := range started {
			port := 7000 + k
			if sp.Name != fmt.Sprintf("server:g:%d", port) || sp.Cmd != p.ServerCmd("/opt/dpulab-on-"+h, f.Workdir(), port) || sp.LogFile != fmt.Sprintf("/tmp/dpulab-test-wd/g-%d/server.log", port) {
				t.Errorf("%s: started %+v", h, sp)
			}
			if got := string(tg.Files[fmt.Sprintf("/tmp/dpulab-test-wd/g-%d/redis.conf", port)].Data); !strings.HasPrefix(got, fmt.Sprintf("port %d\n", port)) {
				t.Errorf("%s: config of instance %d is %q", h, k, got)
			}
		}
		if cmds := tg.Commands(); !containsCmd(cmds, "mkdir -p -m 700 /tmp/dpulab-test-wd/g-7000 /tmp/dpulab-test-wd/g-7001 && rm -f ") {
			t.Errorf("%s: no mkdir of the instances' directories in %v", h, cmds)
		}
	}
	if len(f.recorded) != 4 || len(f.deployed) != 1 || f.deployed[0].Key() != p.Key() {
		t.Errorf("recorded %d processes and %d deployments, want 4 and the plan", len(f.recorded), len(f.deployed))
	}
	said := false
	for _, l := range f.Lines() {
		said = said || strings.Contains(l.Text, "group g: 2 instances on 2 host(s) answer PING (ports 7000-7001)")
	}
	if !said {
		t.Errorf("no summary line in %v", f.Lines())
	}
}

func containsCmd(cmds []runner.Command, prefix string) bool {
	for _, c := range cmds {
		if strings.HasPrefix(c.Cmd, prefix) {
			return true
		}
	}
	return false
}

// TestRunServerExitsAtOnce: an instance whose process exits fails the
// step with its log's end, after it was recorded (so cleanup stops the
// others), and nothing is recorded as deployed.
func TestRunServerExitsAtOnce(t *testing.T) {
	t.Parallel()
	s := &servers{exited: map[string]bool{"h2 101": true}, down: map[string]bool{"h2 7001": true}}
	f, p := newRun(t, s)
	f.Target("h2").Files = map[string]fstest.MapFile{"/tmp/dpulab-test-wd/g-7001/server.log": {Data: []byte("oops\nFATAL: bad config line 3\n")}}
	err := Run(context.Background(), f, "deploy", p, nil)
	var se *kind.StepError
	if !errors.As(err, &se) || se.Host != "h2" || !strings.Contains(err.Error(), "instance g:7001 on h2 is not up: the server process (pid 101) exited before it answered PING") || se.Tail[len(se.Tail)-1] != "FATAL: bad config line 3" {
		t.Fatalf("error %v: want instance g:7001 on h2 exited, with its log's end", err)
	}
	if len(f.recorded) != 4 || len(f.deployed) != 0 {
		t.Errorf("recorded %d processes and %d deployments, want 4 and none", len(f.recorded), len(f.deployed))
	}
}

// TestRunRefusesABusyPort: a port where something already answers PING is
// refused before anything starts there, unless it is a server of this lab
// that no progress recorded, which is stopped.
func TestRunRefusesABusyPort(t *testing.T) {
	t.Parallel()
	f, p := newRun(t, &servers{busy: map[string]bool{"h1 7001": true}})
	err := Run(context.Background(), f, "deploy", p, nil)
	if err == nil || !strings.Contains(err.Error(), "port 7001 already answers PING") {
		t.Fatalf("error %v: want port 7001 refused", err)
	}
	if n := len(f.Target("h1").Started()); n != 0 {
		t.Errorf("%d instances started on h1 beside a busy port", n)
	}
}

// TestKindResolves: the registered deploy kind resolves a step into a
// plan that shows its commands and files, and refuses an environment that
// cannot start servers.
func TestKindResolves(t *testing.T) {
	t.Parallel()
	k, ok := kind.Lookup("deploy")
	if !ok || !k.AsksVars || !k.WritesFiles {
		t.Fatalf("deploy kind %+v, registered %v", k, ok)
	}
	f, _ := newRun(t, &servers{})
	st := f.Step(t, "deploy")
	if _, err := k.Resolve(f.Env, st, nil); err == nil || !strings.Contains(err.Error(), "cannot start servers") {
		t.Errorf("a bare kind.Env: error %v", err)
	}
	p, err := k.Resolve(f, st, map[string]string{"instances": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Commands()); n != 4 {
		t.Errorf("%d commands, want 4", n)
	}
	files, err := p.(kind.Renderer).Rendered()
	if err != nil || len(files) != 4 || !strings.HasPrefix(files[3].Content, "port 7001\n") {
		t.Errorf("files %+v, %v", files, err)
	}
	if err := p.Run(context.Background()); err != nil || len(f.deployed) != 1 {
		t.Errorf("run: %v, %d deployed", err, len(f.deployed))
	}
}
