package steps

// Several client hosts, one measurement (issue 17). No single client host
// can drive 80 instances on each of several server hosts at the rates the
// whitepaper measured, so a bench or compare step runs `dpulab bench` on
// every host of its role (or clients_hosts: N of them), each with a share
// of the load, started together; their per-second samples are merged into
// one series (multiclient_merge.go) and their clocks checked first
// (multiclient_clock.go). bench.go's runBench is the one path: one client
// host is the case n = 1 (no clock check, no common start, and the merge
// of one host's stream is that stream).

import (
	"fmt"
	"strings"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kinds/load"
)

// clientHosts are the hosts the load comes from: every host of the step's
// role, or the first clients_hosts of them.
func (e *Engine) clientHosts(st *labs.Step, vars map[string]string) ([]hostRef, error) {
	hs, err := e.hosts.hosts(st.On)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("no host plays role %s for the load generator", strings.Join(st.On, ", "))
	}
	if st.Bench == nil {
		return hs[:1], nil
	}
	n, err := st.Bench.ClientsHosts.Int(vars, len(hs))
	if err != nil {
		return nil, fmt.Errorf("step %s: clients_hosts: %w", st.ID, err)
	}
	switch {
	case n < 1:
		return nil, fmt.Errorf("step %s: clients_hosts is %d: give at least 1", st.ID, n)
	case n > len(hs):
		return nil, fmt.Errorf("step %s: clients_hosts is %d, but only %d hosts play role %s in the inventory: add hosts to the role or lower clients_hosts", st.ID, n, len(hs), strings.Join(st.On, ", "))
	}
	return hs[:n], nil
}

// benchCommands are a job's bench commands as a plan shows them: one per
// client host, each with its share.
func (p *loadPlan) benchCommands(j loadJob, at load.Placement) []PlannedCommand {
	hosts := p.clients
	if j.path != nil || len(hosts) == 0 {
		hosts = []hostRef{p.client}
	}
	shares, note := load.SplitLoad(j.planned, hosts)
	var out []PlannedCommand
	if note != "" {
		out = append(out, PlannedCommand{Host: hosts[0].Name, Cmd: "# " + note})
	}
	if len(shares) > 1 {
		out = append(out, PlannedCommand{Host: hosts[0].Name, Cmd: fmt.Sprintf("# %d client hosts share the load, started together after their clocks are checked (date +%%s.%%N over SSH)", len(shares))})
	}
	for _, s := range shares {
		out = append(out, PlannedCommand{Host: s.Host.Name, Cmd: p.e.benchCommand(s.Host, s.Config, load.Password(j.vars) != "", at)})
	}
	return out
}
