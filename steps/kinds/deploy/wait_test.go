package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
)

// fakeEnv is kindtest's Env with deploy's capabilities.
type fakeEnv struct {
	*kindtest.Env
	password string
}

func (fakeEnv) Agent(h kind.Host) string { return "/opt/dpulab-on-" + h.Name }
func (f fakeEnv) Password() string       { return f.password }

const waitLab = `
id: waits
title: Waits
summary: deploy's wait
duration: 1m
roles:
  server: the servers
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
`

// host is a fake host's servers as the wait sees them: its status
// command's answers and its PINGs, round by round (one status per round).
type host struct {
	mu     sync.Mutex
	rounds int
	// upAt is the round from which instance port answers PING (0: never).
	upAt map[int]int
	// live says whether pid's process group still runs at a round;
	// ticks its CPU time then.
	live  func(pid, round int) bool
	ticks func(pid, round int) int64
	cmds  []string
}

func (h *host) handle(_, cmd string) ([]string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cmds = append(h.cmds, cmd)
	switch {
	case strings.Contains(cmd, "dpulab-status"):
		h.rounds++
		out := []string{"load 37.52", "cpus 2", "hz 100"}
		for pid := 100; pid < 110; pid++ {
			if strings.Contains(cmd, fmt.Sprint(pid)) {
				live := 0
				if h.live(pid, h.rounds) {
					live = 1
				}
				out = append(out, fmt.Sprintf("group %d %d %d", pid, live, h.ticks(pid, h.rounds)))
			}
		}
		return append(out, "end"), 0
	case strings.Contains(cmd, " bench "):
		for port, at := range h.upAt {
			if strings.Contains(cmd, fmt.Sprintf("127.0.0.1:%d", port)) && at > 0 && h.rounds >= at {
				return nil, 0
			}
		}
		return []string{"connection refused"}, 1
	}
	return nil, 0
}

// started is instances on ports 7000.. of h1, pids 100..
func started(n int) []Started {
	out := make([]Started, n)
	for k := range out {
		port := 7000 + k
		log := fmt.Sprintf("/wd/g-%d/server.log", port)
		out[k] = Started{
			At:   Instance{Host: "h1", Port: port, Address: fmt.Sprintf("127.0.0.1:%d", port)},
			Proc: runner.Proc{Name: fmt.Sprintf("server:g:%d", port), Host: "h1", PID: 100 + k, LogFile: log},
			Log:  log,
			Cmd:  fmt.Sprintf("exec dpulab server --port %d", port),
		}
	}
	return out
}

// TestAwait drives deploy's wait against a fake host and clock: a start
// that takes longer than the stall limit while it uses CPU is awaited; a
// process that exits fails at once with its log's end; one that uses no
// CPU is stuck; one that never answers within the overall limit is
// reported with the host's load and a hint about overload.
func TestAwait(t *testing.T) {
	t.Parallel()
	lim := Limits{Max: 10 * time.Minute, Stall: 5 * time.Second, Try: time.Second, CmdTry: time.Second}
	progressing := func(_, round int) int64 { return int64(10 * round) }
	always := func(int, int) bool { return true }
	cases := []struct {
		name string
		lim  Limits
		h    *host
		// want are parts of the error (none: the wait passes).
		want []string
		// hint is what the error's own hint says ("": none).
		hint string
	}{
		{
			name: "slow start keeps using CPU",
			lim:  lim,
			h:    &host{upAt: map[int]int{7000: 40, 7001: 1}, live: always, ticks: progressing},
		},
		{
			name: "exited",
			lim:  lim,
			h:    &host{upAt: map[int]int{7001: 1}, live: func(pid, round int) bool { return pid != 100 || round < 3 }, ticks: progressing},
			want: []string{"instance g:7000 on h1 is not up", "the server process (pid 100) exited before it answered PING", "its log is /wd/g-7000/server.log"},
		},
		{
			name: "stuck",
			lim:  lim,
			h:    &host{upAt: map[int]int{7001: 1}, live: always, ticks: func(int, int) int64 { return 7 }},
			want: []string{"instance g:7000 on h1 is not up", "still runs but has used no CPU and written nothing to its log for 5s"},
			hint: "stuck, not slow",
		},
		{
			name: "never up within the overall limit",
			lim:  Limits{Max: time.Minute, Stall: time.Hour, Try: time.Second},
			h:    &host{upAt: map[int]int{7001: 1}, live: always, ticks: progressing},
			want: []string{"instance g:7000 on h1 is not up", "waited 1m", "s of CPU so far", "The load average of h1 is 37.52 on 2 cores (18.8 per core): it looks overloaded."},
			hint: "h1 may be overloaded",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ke := kindtest.New(kindtest.Lab(t, waitLab, nil), "h1")
			ke.Ticking = true
			ke.Handle = c.h.handle
			tg := ke.Target("h1")
			tg.Files = map[string]fstest.MapFile{"/wd/g-7000/server.log": {Data: []byte("starting\nboom: cannot start\n")}}
			h, _ := ke.HostsOf([]string{"server"})
			err := Await(context.Background(), fakeEnv{Env: ke}, h[0], tg, "g", started(2), c.lim)
			if c.want == nil {
				if err != nil {
					t.Fatalf("a start that progressed was given up on: %v", err)
				}
				if c.h.rounds < 40 {
					t.Errorf("passed after %d rounds, before instance 0 answered", c.h.rounds)
				}
				if w := ke.Waited(); len(w) == 0 || w[len(w)-1] != time.Second {
					t.Errorf("waits %v: want them to grow to a second", w)
				}
				return
			}
			if err == nil {
				t.Fatal("the wait passed")
			}
			var se *kind.StepError
			if !errors.As(err, &se) || se.Host != "h1" || se.Cmd != "exec dpulab server --port 7000" || strings.Join(se.Tail, "\n") != "starting\nboom: cannot start" {
				t.Errorf("error %#v: want a StepError on h1 with instance 0's command and its log's end", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "g:7001") {
				t.Errorf("error %q names the instance that is up", err)
			}
			var hint interface{ Hint() string }
			got := ""
			if errors.As(err, &hint) {
				got = hint.Hint()
			}
			if (c.hint == "") != (got == "") || !strings.Contains(got, c.hint) {
				t.Errorf("own hint %q, want one with %q", got, c.hint)
			}
		})
	}
}

// TestAwaitStopsWithItsContext: a cancelled wait says so, naming what it
// waited for.
func TestAwaitStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ke := kindtest.New(kindtest.Lab(t, waitLab, nil), "h1")
	ke.Hold = true
	h := &host{upAt: map[int]int{}, live: func(int, int) bool { return true }, ticks: func(_, r int) int64 { return int64(r) }}
	ke.Handle = h.handle
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	hs, _ := ke.HostsOf([]string{"server"})
	go func() { done <- Await(ctx, fakeEnv{Env: ke}, hs[0], ke.Target("h1"), "g", started(1), DefaultLimits) }()
	cancel()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "instance g:7000 on h1 is not up: stopped waiting") || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v: want the wait stopped by its context", err)
	}
}

// TestPingByCommandKeepsThePasswordOffArgv: a host that cannot be dialled
// is pinged by dpulab bench there, in the instance's namespace when it
// has one, the password read from stdin.
func TestPingByCommandKeepsThePasswordOffArgv(t *testing.T) {
	t.Parallel()
	ke := kindtest.New(kindtest.Lab(t, waitLab, nil), "h1")
	h := &host{upAt: map[int]int{7000: 0}}
	ke.Handle = func(host, cmd string) ([]string, int) { h.handle(host, cmd); return nil, 0 }
	hs, _ := ke.HostsOf([]string{"server"})
	inst := Instance{Host: "h1", Port: 7000, Address: "10.9.0.1:7000", NetNS: "dpulab-srv"}
	if !PingsByCommand(hs[0], ke.Target("h1"), inst) {
		t.Fatal("a namespace's instance is not pinged by command")
	}
	if err := Ping(context.Background(), fakeEnv{Env: ke, password: "s3cret pw"}, hs[0], ke.Target("h1"), inst); err != nil {
		t.Fatal(err)
	}
	cmds := ke.Target("h1").Commands()
	if len(cmds) != 1 {
		t.Fatalf("commands %v: want one", cmds)
	}
	c := cmds[0].Cmd
	for _, w := range []string{"IFS= read -r ", "ip netns exec dpulab-srv ", "/opt/dpulab-on-h1 bench --json --target 10.9.0.1:7000"} {
		if !strings.Contains(c, w) {
			t.Errorf("command %q lacks %q", c, w)
		}
	}
	if strings.Contains(c, "s3cret") {
		t.Errorf("command %q carries the password", c)
	}
}

// TestParseHostStatus: the status command's output, including the lines
// of a cut-short one, which must not read as every server gone.
func TestParseHostStatus(t *testing.T) {
	t.Parallel()
	s, err := parseHostStatus([]string{"load 37.52", "cpus 2", "hz 100", "group 123 2 456", "group 77 0 3", "   12 /tmp/d/a/server.log", "0 /tmp/d/b/server.log", "12 total", "end"})
	if err != nil {
		t.Fatal(err)
	}
	if s.groups[123] != (groupStatus{live: 2, ticks: 456}) || s.groups[77].live != 0 || s.sizes["/tmp/d/a/server.log"] != 12 || len(s.sizes) != 2 {
		t.Errorf("status = %+v", s)
	}
	if got := s.loadSentence("h"); !strings.Contains(got, "37.52 on 2 cores") || !strings.Contains(got, "overloaded") {
		t.Errorf("load sentence %q", got)
	}
	if _, err := parseHostStatus([]string{"load 1", "group 123 1 4"}); err == nil {
		t.Error("a status without its end line was taken as whole")
	}
}
