//go:build unix

package steps

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// TestDeployWaitsWhileTheStartProgresses drives deploy's wait for PING
// (deploy.Await, through the engine's kindEnv) with processes that behave as servers do on a
// saturated host, with its limits shortened so that each case takes
// seconds: a start that takes longer than the stall limit but keeps using
// CPU is awaited; a process that exits is reported as exited, with its
// log; one that sleeps is reported stuck; one that keeps starting past
// the overall limit is reported with what was waited for and the host's
// load, and a hint about overload instead of the lab's own.
func TestDeployWaitsWhileTheStartProgresses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs dpulab servers and busy processes")
	}
	bin := dpulabBinary(t)
	lab := loadLab(t, `
id: waits
title: Waits
summary: deploy's wait
duration: 1m
roles:
  local: this machine
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
    hint: the lab's own hint
`)
	h := hostRef{Name: "local", Address: "127.0.0.1", Local: true}
	cases := []struct {
		name string
		lim  waitLimits
		// cmd is instance 0's command (port given).
		cmd  func(port int) string
		want []string
		// hint is what the error's own hint says (none: the lab's hint
		// stays).
		hint string
	}{
		{
			name: "slow start keeps using CPU",
			lim:  waitLimits{Max: 5 * time.Minute, Stall: 3 * time.Second, Try: 2 * time.Second},
			cmd: func(port int) string {
				return fmt.Sprintf("sh -c 'while :; do :; done' & b=$!; sleep 8; kill $b; exec %s server --port %d --bind 127.0.0.1", runner.Quote(bin), port)
			},
		},
		{
			name: "exited",
			lim:  waitLimits{Max: 5 * time.Minute, Stall: time.Minute, Try: 2 * time.Second},
			cmd:  func(int) string { return "echo boom: cannot start; exit 3" },
			want: []string{"instance g:", "is not up", "exited before it answered PING"},
		},
		{
			name: "stuck",
			lim:  waitLimits{Max: 5 * time.Minute, Stall: 2 * time.Second, Try: time.Second},
			cmd:  func(int) string { return "echo boom: stuck; exec sleep 600" },
			want: []string{"still runs but has used no CPU and written nothing to its log for 2s"},
			hint: "stuck, not slow",
		},
		{
			name: "never up within the overall limit",
			lim:  waitLimits{Max: 3 * time.Second, Stall: time.Minute, Try: time.Second},
			cmd:  func(int) string { return "echo boom: busy; exec sh -c 'while :; do :; done'" },
			want: []string{"waited ", "for it to answer PING while its server process", "s of CPU so far", "load average of local is"},
			hint: "may be overloaded",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, lab, Options{Binary: bin}, nil)
			port := freePorts(t, 2)
			p := deployPlan{Step: "deploy", Group: "g", Hosts: []hostRef{h}, Instances: 2, Port: port, Bind: "127.0.0.1"}
			tg := runner.NewLocal()
			defer func() { _, _ = runner.StopMarked(context.Background(), tg, e.workdir(), time.Second, false) }()
			specs := []runner.ProcSpec{
				{Name: deploy.ProcName("g", port), Cmd: c.cmd(port), LogFile: path.Join(deploy.InstanceDir(e.workdir(), "g", port), "server.log")},
				// Instance 1 is a real server: it is up at once.
				{Name: deploy.ProcName("g", port+1), Cmd: fmt.Sprintf("exec %s server --port %d --bind 127.0.0.1", runner.Quote(bin), port+1), LogFile: path.Join(deploy.InstanceDir(e.workdir(), "g", port+1), "server.log")},
			}
			procs, errs := runner.StartAll(context.Background(), tg, specs, nil)
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			started := make([]deploy.Started, len(procs))
			for k, proc := range procs {
				started[k] = deploy.Started{At: p.HostSide(h, k), Proc: proc, Log: proc.LogFile, Cmd: specs[k].Cmd}
			}
			err := deploy.Await(testCtx(t, 5*time.Minute), kindEnv{e}, h, tg, p.Group, started, c.lim)
			if c.want == nil {
				if err != nil {
					t.Fatalf("a start that progressed was given up on: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("the wait passed")
			}
			t.Logf("error: %v\nhint: %s", err, ownHint(err))
			var se *StepError
			if !errors.As(err, &se) || se.Host != "local" || !strings.Contains(strings.Join(se.Tail, "\n"), "boom") {
				t.Errorf("error %#v: want a StepError on local with the log's tail", err)
			}
			for _, w := range append(c.want, fmt.Sprintf("g:%d", port)) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), fmt.Sprintf("g:%d", port+1)) {
				t.Errorf("error %q names the instance that is up", err)
			}
			if got := ownHint(err); (c.hint == "") != (got == "") || !strings.Contains(got, c.hint) {
				t.Errorf("own hint %q, want one with %q", got, c.hint)
			}
		})
	}
}
