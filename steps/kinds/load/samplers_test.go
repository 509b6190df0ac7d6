package load

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/results"
)

// samplerHosts are fake hosts for the samplers: kindtest's targets, and
// a host that cannot be reached.
type samplerHosts struct {
	*kindtest.Env
	unreachable string
}

func (samplerHosts) Agent(h kind.Host) string { return "/opt/dpulab-on-" + h.Name }

func (f samplerHosts) Reached(_ context.Context, h kind.Host) (runner.Target, error) {
	if h.Name == f.unreachable {
		return nil, errors.New("no route to host")
	}
	return f.Target(h.Name), nil
}

// TestStartSamplers: each server host is asked its CPU count, then runs
// `dpulab sample` (its agent, its own name) whose
// stdout lines go to the board: a second's server CPU is the busy share
// of the sampled host's cores; a host that cannot be reached is not
// waited for and leaves the CPU of its own unknown; stop returns once
// every sampler has ended.
func TestStartSamplers(t *testing.T) {
	env := &kindtest.Env{Targets: map[string]*kindtest.Target{}}
	env.Handle = func(host, cmd string) ([]string, int) {
		switch {
		case cmd == "getconf _NPROCESSORS_ONLN":
			return []string{"4"}, 0
		case cmd == "exec /opt/dpulab-on-"+host+" sample --interval 1s --host "+host:
			return []string{`{"t":"` + time.Now().UTC().Format(time.RFC3339Nano) + `","host":"` + host + `","cpu":{"idle":75,"iowait":0},"net":{},"power_watts":null}`}, 0
		}
		return nil, 127
	}
	hosts := samplerHosts{Env: env, unreachable: "s2"}
	servers := []kind.Host{{Name: "s1", Role: "server"}, {Name: "s2", Role: "server"}}
	client := kind.Host{Name: "c1", Role: "client", Address: "192.0.2.30"}
	latest, stop := StartSamplers(t.Context(), hosts, servers, client, nil)
	latest.WaitReady(t.Context().Done(), SamplerStartTimeout)
	stop()

	var cmds []string
	for _, c := range env.Target("s1").Commands() {
		cmds = append(cmds, c.Cmd)
	}
	if len(cmds) != 2 || cmds[0] != "getconf _NPROCESSORS_ONLN" || cmds[1] != SamplerCommand("/opt/dpulab-on-s1", servers[0], client, nil) {
		t.Fatalf("s1 ran %q", cmds)
	}
	if _, ok := env.Targets["s2"]; ok {
		t.Error("the unreachable host's target was used")
	}
	if got := latest.Cores(); got != 4 {
		t.Errorf("%v cores, want s1's 4", got)
	}
	p := latest.Merge(results.Point{OpsPerSec: 1000}, time.Time{})
	if p.ServerCPU == nil || *p.ServerCPU != 25 {
		t.Errorf("server CPU %v, want s1's 25%% busy", p.ServerCPU)
	}
}
