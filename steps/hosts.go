package steps

import (
	"context"
	"fmt"
	"sync"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	stepkind "github.com/dpulab/dpulab/steps/kind"
)

// hostRef is one host a step runs on, with the role it plays there.
type hostRef = stepkind.Host

// hostPool maps roles to hosts (inventory, or this machine for every role)
// and keeps one connected Target per host for the whole run.
type hostPool struct {
	lab  *labs.Lab
	inv  *runner.Inventory
	pool *runner.Pool
	pr   runner.Prompter

	// newTarget, when set, makes every host's Target (Options.Targets).
	newTarget func(host string) (runner.Target, error)

	mu      sync.Mutex
	targets map[string]runner.Target
}

func newHostPool(lab *labs.Lab, opts Options, pr runner.Prompter) (*hostPool, error) {
	h := &hostPool{lab: lab, inv: opts.Inventory, pr: pr, newTarget: opts.Targets, targets: map[string]runner.Target{}}
	if h.inv != nil && len(h.inv.Hosts) == 0 {
		h.inv = nil
	}
	if h.inv != nil {
		h.pool = runner.NewPool(h.inv, runner.SSHOptions{
			Prompter: pr,
			// dpulab's own rule decides about an unknown host key (ask in
			// the TUI, refuse headless unless --accept-new-host-keys, never
			// at a booth), not a StrictHostKeyChecking accept-new or no in
			// the person's ssh config; "yes" still refuses outright.
			PromptHostKeys: true,
			Warn:           opts.warn,
		})
		if err := h.checkRoles(); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// hosts lists the hosts of roles, each host once (with the first role that
// named it), in inventory order.
func (h *hostPool) hosts(roles []string) ([]hostRef, error) {
	if len(roles) == 0 {
		return nil, nil
	}
	if h.inv == nil {
		return []hostRef{{Name: runner.LocalName, Role: roles[0], Address: "127.0.0.1", Local: true}}, nil
	}
	return h.invHosts(roles)
}

// target returns the connected Target for a host, connecting on first use.
func (h *hostPool) target(ctx context.Context, name string) (runner.Target, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.targets[name]; ok {
		return t, nil
	}
	var t runner.Target
	switch {
	case h.newTarget != nil:
		var err error
		if t, err = h.newTarget(name); err != nil {
			return nil, fmt.Errorf("connect to %s: %w", name, err)
		}
	case h.inv == nil:
		t = runner.NewLocal(runner.WithLocalPrompter(h.pr))
	default:
		var err error
		t, err = h.invTarget(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", name, err)
		}
	}
	h.targets[name] = t
	return t, nil
}

func (h *hostPool) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for n, t := range h.targets {
		_ = t.Close()
		delete(h.targets, n)
	}
	if h.pool != nil {
		_ = h.pool.Close()
	}
}
