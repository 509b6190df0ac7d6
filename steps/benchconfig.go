package steps

// This file is where the engine judges the transports: whether the dpulab
// that runs on a host can speak one, before the host is reached (plan) and
// with the platform it reports (run, hostsLackNow: load.Running.LacksNow).

import (
	"context"
	"errors"

	"github.com/dpulab/dpulab/internal/wire/transportwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/server/transport"
)

// hostsLack says why a job over transport tr cannot run on hosts ("" when
// it can): the first host whose dpulab binary lacks tr (hostLacks), in
// that binary's words, with what to do. The job is then planned with the
// command it would run and listed as unavailable, not failed mid-run.
func (e *Engine) hostsLack(hosts []hostRef, tr string) string {
	for _, h := range hosts {
		if why := e.hostLacks(h, tr, runner.Platform{OS: "linux"}); why != "" {
			return why
		}
	}
	return ""
}

// hostLacks says why the dpulab binary that runs on h cannot use
// transport tr ("" when it can, or dpulab does not know tr: endpoints
// refuses that). The question is about that binary, not about this one's
// build: on this machine (a local host, or no inventory) it is this
// program (or Options.Binary, a test's build of it, judged as this one),
// asked with transport.Available; on a lab host it is the agent for plat,
// the host's platform (runner.AgentFinder.AgentLacks): linux/amd64 and
// linux/arm64 agents have RDMA whatever runs the controller. Before the
// host is reached plat is {linux, ""}, lab hosts being Linux; the run asks
// again with the platform the host reports (hostsLackNow).
func (e *Engine) hostLacks(h hostRef, tr string, plat runner.Platform) string {
	n := transport.Name(tr)
	if n == "" {
		n = transport.TCP
	}
	if !transportwire.IsKnown(n) {
		return ""
	}
	if h.Local || e.hosts == nil || e.hosts.inv == nil || e.opts.Binary != "" {
		if err := transport.Available(n); errors.Is(err, transport.ErrNotBuilt) {
			return err.Error()
		}
		return ""
	}
	return e.agentFinder().AgentLacks(plat, n)
}

// TransportJudge is labs.TransportJudge for a lab run with inv (nil or
// empty: every role on this machine) and agents (nil: the engine's
// default finder), by the rule the engine plans with (hostLacks), before
// any host is reached: a transport this program lacks cannot run on a
// host of inv that is this machine; one the Linux agent lacks cannot run
// on a lab host. A simulation this program has labels what runs here.
func TransportJudge(inv *runner.Inventory, agents *runner.AgentFinder) labs.TransportJudge {
	local, remote := inv == nil || len(inv.Hosts) == 0, false
	if !local {
		for _, h := range inv.Hosts {
			if h.IsLocal() {
				local = true
			} else {
				remote = true
			}
		}
	}
	return func(n transport.Name) (cannot, simulated string) {
		if local {
			if err := transport.Available(n); errors.Is(err, transport.ErrNotBuilt) {
				return err.Error(), ""
			}
			simulated = transport.Simulated(n)
		}
		if remote {
			if why := agents.AgentLacks(runner.Platform{OS: "linux"}, n); why != "" {
				return why, ""
			}
		}
		return "", simulated
	}
}

// hostsLackNow is hostsLack with each lab host's own platform, reached
// through its target: a host that turns out not to be a Linux amd64 or
// arm64 one (or cannot say) is refused before its agent is asked to speak
// a transport it lacks.
func (e *Engine) hostsLackNow(ctx context.Context, hosts []hostRef, tr string) (string, error) {
	for _, h := range hosts {
		plat := runner.Platform{OS: "linux"}
		if !h.Local && e.hosts != nil && e.hosts.inv != nil && e.opts.Binary == "" && tr != "" && tr != string(transport.TCP) {
			t, err := e.hosts.target(ctx, h.Name)
			if err != nil {
				return "", err
			}
			if plat, err = t.Platform(ctx); err != nil {
				return "", err
			}
		}
		if why := e.hostLacks(h, tr, plat); why != "" {
			return h.Name + ": " + why, nil
		}
	}
	return "", nil
}
