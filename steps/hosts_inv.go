package steps

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/runner"
)

// checkRoles fails early when the inventory lacks a host for a role the
// lab needs, naming the role and the file.
func (h *hostPool) checkRoles() error {
	var missing []string
	for _, r := range h.lab.RoleNames() {
		if h.lab.OptionalRole(r) {
			continue
		}
		if hs, err := h.inv.HostsFor(r); err != nil || len(hs) == 0 {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("inventory %s has no host for role %s that lab %s needs (it has roles: %s): add the role to a host's roles",
			h.inv.Path, strings.Join(missing, ", "), h.lab.ID, strings.Join(h.inv.Roles(), ", "))
	}
	return nil
}

func (h *hostPool) invHosts(roles []string) ([]hostRef, error) {
	seen := map[string]bool{}
	var out []hostRef
	for _, r := range roles {
		if h.lab.OptionalRole(r) && !h.inv.HasRole(r) {
			continue // an optional role no host plays (optional_roles.go)
		}
		hs, err := h.inv.HostsFor(r)
		if err != nil {
			return nil, err
		}
		for _, host := range hs {
			if seen[host.Name] {
				continue
			}
			seen[host.Name] = true
			addr := host.Address
			if addr == "" {
				addr = host.Name
			}
			if host.IsLocal() {
				addr = "127.0.0.1"
			}
			out = append(out, hostRef{Name: host.Name, Role: r, Address: addr, Local: host.IsLocal()})
		}
	}
	return out, nil
}

func (h *hostPool) invTarget(ctx context.Context, name string) (runner.Target, error) {
	host, ok := h.inv.Host(name)
	if !ok {
		return nil, fmt.Errorf("host %s is not in inventory %s", name, h.inv.Path)
	}
	return h.pool.Target(host)
}

// hostInfos lists the hosts taking part, for results.
func (h *hostPool) hostInfos() []results.HostInfo {
	if h.inv == nil || len(h.inv.Hosts) == 0 {
		return []results.HostInfo{{Name: runner.LocalName, Address: runner.LocalName, Roles: h.lab.RoleNames(), OS: runtime.GOOS, Arch: runtime.GOARCH}}
	}
	need := map[string]bool{}
	for _, r := range h.lab.RoleNames() {
		need[r] = true
	}
	var out []results.HostInfo
	for _, host := range h.inv.Hosts {
		var roles []string
		for _, r := range host.Roles {
			if need[r] {
				roles = append(roles, r)
			}
		}
		if len(roles) == 0 {
			continue
		}
		out = append(out, results.HostInfo{Name: host.Name, Address: host.Address, Roles: roles, Labels: host.Labels})
	}
	// The role "local" that no host takes is this machine.
	if need[runner.LocalName] && !h.inv.HasRole(runner.LocalName) {
		out = append(out, results.HostInfo{Name: runner.LocalName, Address: runner.LocalName, Roles: []string{runner.LocalName}, OS: runtime.GOOS, Arch: runtime.GOARCH})
	}
	return out
}

// hostBinary returns the path of dpulab on a host: this executable on this
// machine; on a lab host, the dpulab agent for the host's platform
// (runner.AgentFinder: next to this executable, built from source, or in
// the cache), uploaded under the lab's working directory, and what it says
// of its version (for results). With Options.Binary set (tests), that file
// is uploaded instead, as it is.
func (e *Engine) hostBinary(ctx context.Context, h hostRef, t runner.Target) (string, agentInfo, error) {
	bin, err := e.binaryPath()
	if err != nil {
		return "", agentInfo{}, err
	}
	if h.Local || e.hosts.inv == nil {
		return bin, agentInfo{}, nil
	}
	if e.opts.Binary != "" {
		p, err := runner.UploadBinary(ctx, t, bin, runner.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}, e.workdir())
		if err != nil {
			return "", agentInfo{}, err
		}
		e.opts.Emit(Output{Line: runner.Line{Host: h.Name, Text: "dpulab is at " + p, Time: time.Now()}})
		return p, agentInfo{}, nil
	}
	p, _, sum, err := runner.UploadAgent(ctx, t, e.agentFinder(), e.workdir())
	if err != nil {
		return "", agentInfo{}, err
	}
	info := agentInfo{sha256: sum}
	// The agent's own account of itself: its version and build, recorded
	// with the results. A host where it cannot even print that cannot run
	// it (a wrong architecture, a noexec /tmp): said now, not mid-bench.
	res, err := t.Run(ctx, runner.Command{Cmd: runner.QuoteAll(p, "version"), Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		return "", agentInfo{}, &StepError{Host: h.Name, Cmd: p + " version", Tail: tailText(res.Tail), Err: fmt.Errorf("the dpulab agent uploaded to %s does not run there: %v", p, errOr(err, res))}
	}
	for _, l := range res.Tail {
		if l.Stream == runner.Stdout && strings.HasPrefix(l.Text, "dpulab agent ") {
			info.version = strings.TrimSpace(l.Text)
			break
		}
	}
	e.opts.Emit(Output{Line: runner.Line{Host: h.Name, Text: "dpulab agent is at " + p + ": " + info.version, Time: time.Now()}})
	return p, info, nil
}

// agentInfo is what results record of the agent uploaded to a host.
type agentInfo struct {
	version, sha256 string
}

// agentFinder is the engine's runner.AgentFinder (Options.Agents, or one
// looking next to this executable and in the user's cache), whose notices
// (an agent built from source) are output lines.
func (e *Engine) agentFinder() *runner.AgentFinder {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.agents == nil {
		e.agents = e.opts.Agents
		if e.agents == nil {
			e.agents = &runner.AgentFinder{}
		}
		if e.agents.Notice == nil {
			e.agents.Notice = func(msg string) {
				e.opts.Emit(Output{Line: runner.Line{Host: runner.LocalName, Text: msg, Time: time.Now()}})
			}
		}
	}
	return e.agents
}
