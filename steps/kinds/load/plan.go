package load

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// Plan is a bench or compare step resolved: every job in run order
// (sweep value, then variant), each with its variables, its deployment as
// planned, its transport and its bench configuration against the planned
// instances.
type Plan struct {
	// Env is the environment the plan was resolved in.
	Env      Env
	Step     *labs.Step
	Spec     *labs.BenchSpec
	Client   kind.Host
	Clients  []kind.Host // every client host (split.go); Client is the first
	SweepVar string
	Variants []labs.Variant
	Jobs     []Job
	// PerJob is how long one job should take, for progress.
	PerJob time.Duration
}

// Job is one job of a plan: a variant at a sweep value.
type Job struct {
	VI        int // index into variants
	Sweep     string
	Label     string
	Group     string
	Vars      map[string]string
	Deploy    deploy.Plan
	Transport string
	// Planned is the bench configuration against the planned instances;
	// the run builds it again against the instances that answer.
	Planned benchwire.Config
	// PathCfg and Path are the emulated network path the variant runs
	// over (netpath), as planned; nil otherwise.
	PathCfg *netpath.Config
	Path    *netpath.Path
	// NotBuilt says why the dpulab binary on one of the job's hosts (this
	// program here, the agent on a lab host) cannot run it: its transport
	// is not built in (Env.Lacks); the job is then listed as
	// unavailable, not run.
	NotBuilt string
	// NoHost says that no host plays the variant's optional role; the job
	// is then listed as unavailable, not run, and was not planned.
	NoHost string
}

// Resolve works out a bench or compare step with the run's variables:
// its client hosts, and one Job per sweep value and variant with its
// deployment as planned, transport, emulated path and bench configuration.
// It runs nothing on the hosts.
func Resolve(env Env, st *labs.Step, vars map[string]string) (*Plan, error) {
	spec := st.Bench
	if spec == nil {
		return nil, fmt.Errorf("step %s: no bench profile", st.ID)
	}
	variants := []labs.Variant{{Label: spec.Target, Transport: spec.Transport}}
	if st.Kind == labs.KindCompare {
		if st.Compare == nil || len(st.Compare.Variants) == 0 {
			return nil, fmt.Errorf("step %s: a compare step needs at least one variant", st.ID)
		}
		variants = st.Compare.Variants
	}
	clients, err := ClientHosts(env, st, vars)
	if err != nil {
		return nil, err
	}
	client := clients[0]
	p := &Plan{Env: env, Step: st, Spec: spec, Client: client, Clients: clients, Variants: variants}
	sweepVals := []string{""}
	if cs := st.Compare; cs != nil && cs.Sweep != nil {
		pts, err := cs.Sweep.Points(vars)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.ID, err)
		}
		p.SweepVar, sweepVals = cs.Sweep.Var, pts
		if def, ok := env.Lab().Var(p.SweepVar); ok {
			for _, v := range sweepVals {
				if err := def.Check(v); err != nil {
					return nil, fmt.Errorf("sweep value %s: %w", v, err)
				}
			}
		}
	}
	for _, sv := range sweepVals {
		pv := vars
		if p.SweepVar != "" {
			pv = maps.Clone(vars)
			pv[p.SweepVar] = sv
		}
		for vi := range variants {
			v := &variants[vi]
			j := Job{VI: vi, Sweep: sv, Label: v.Label, Group: v.Group, Vars: pv}
			if p.SweepVar != "" {
				j.Label = fmt.Sprintf("%s, %s=%s", v.Label, p.SweepVar, sv)
			}
			if j.Group == "" {
				j.Group = spec.Target
			}
			if v.On != "" {
				// A variant on an optional role no host plays is listed
				// as not run (optional_roles.go).
				if j.NoHost = env.NoHost([]string{v.On}); j.NoHost != "" {
					p.Jobs = append(p.Jobs, j)
					continue
				}
			}
			dst, err := env.DeployStep(j.Group)
			if err != nil {
				return nil, fmt.Errorf("step %s: %w", st.ID, err)
			}
			if j.Deploy, err = env.DeployPlan(dst, pv, v); err != nil {
				return nil, err
			}
			if v.Transport.IsSet() {
				if j.Transport, err = v.Transport.Resolve(pv); err != nil {
					return nil, fmt.Errorf("variant %s: transport: %w", v.Label, err)
				}
			} else if spec.Transport.IsSet() {
				if j.Transport, err = spec.Transport.Resolve(pv); err != nil {
					return nil, fmt.Errorf("bench transport: %w", err)
				}
			}
			if v.NetPath != "" {
				if err := resolvePath(env, &j, v, client, pv); err != nil {
					return nil, fmt.Errorf("step %s: %w", st.ID, err)
				}
			}
			if j.Planned, err = BenchConfig(spec, pv, j.Deploy.ClientSide(env.Workdir()), j.Transport, j.Deploy.Settings); err != nil {
				return nil, fmt.Errorf("step %s, variant %s: %w", st.ID, v.Label, err)
			}
			j.NotBuilt = env.Lacks(append(slices.Clone(clients), j.Deploy.Hosts...), j.Transport)
			p.Jobs = append(p.Jobs, j)
		}
	}
	for _, j := range p.Jobs {
		if j.NoHost == "" {
			p.PerJob = ExpectedDuration(j.Planned)
			break
		}
	}
	return p, nil
}

// Commands lists the jobs of the first sweep value: the others differ
// only in the swept variable.
func (p *Plan) Commands() []kind.PlannedCommand {
	var out []kind.PlannedCommand
	for _, j := range p.Jobs {
		if j.Sweep != p.Jobs[0].Sweep {
			break
		}
		note := fmt.Sprintf("# variant %q", p.Variants[j.VI].Label)
		if p.Step.Kind == labs.KindBench {
			note = "# load against group " + j.Group
		}
		out = append(out, kind.PlannedCommand{Host: p.Client.Name, Cmd: note})
		if j.NoHost != "" {
			out = append(out, kind.PlannedCommand{Host: p.Client.Name, Cmd: "# not run: " + j.NoHost})
			continue
		}
		if j.NotBuilt != "" {
			out = append(out, kind.PlannedCommand{Host: p.Client.Name, Cmd: "# not run: " + j.NotBuilt})
		}
		at := Placement{}
		if j.Path != nil {
			out = append(out, kind.PlannedCommand{Host: p.Client.Name, Cmd: PathNote(j.Path)})
			at.NS = j.Path.ClientNS
			_, at.CPUs = SplitCPUs(p.Env.CPUs(p.Client.Name))
		}
		out = append(out, p.withCapacity(j, at, p.benchCommands(j, at))...)
		for _, h := range j.Deploy.Hosts {
			out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: SamplerCommand(p.Env.Agent(h), h, p.Client, j.Path)})
		}
	}
	return append(out, p.hostMetricsCommands()...)
}

// ClientHosts are the hosts the load comes from: every host of the step's
// role, or the first clients_hosts of them.
func ClientHosts(env kind.Hosts, st *labs.Step, vars map[string]string) ([]kind.Host, error) {
	hs, err := env.HostsOf(st.On)
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
func (p *Plan) benchCommands(j Job, at Placement) []kind.PlannedCommand {
	hosts := p.Clients
	if j.Path != nil || len(hosts) == 0 {
		hosts = []kind.Host{p.Client}
	}
	shares, note := SplitLoad(j.Planned, hosts)
	var out []kind.PlannedCommand
	if note != "" {
		out = append(out, kind.PlannedCommand{Host: hosts[0].Name, Cmd: "# " + note})
	}
	if len(shares) > 1 {
		out = append(out, kind.PlannedCommand{Host: hosts[0].Name, Cmd: fmt.Sprintf("# %d client hosts share the load, started together after their clocks are checked (date +%%s.%%N over SSH)", len(shares))})
	}
	for _, s := range shares {
		out = append(out, kind.PlannedCommand{Host: s.Host.Name, Cmd: BenchCommand(p.Env.Agent(s.Host), s.Config, Password(j.Vars) != "", at)})
	}
	return out
}

// withCapacity is a job's planned commands: the flat-out bench's (flat)
// unless the search replaces it, then the search's.
func (p *Plan) withCapacity(j Job, at Placement, flat []kind.PlannedCommand) []kind.PlannedCommand {
	if p.Spec.Capacity == nil {
		return flat
	}
	var out []kind.PlannedCommand
	if !p.Spec.Capacity.Instead {
		out = append(out, flat...)
	}
	return append(out, p.capacityCommands(j, at)...)
}

// capacityCommands is what a job's capacity search runs, for the plan and
// the dry run (the flat-out bench's command is planned beside it unless the
// search replaces it).
func (p *Plan) capacityCommands(j Job, at Placement) []kind.PlannedCommand {
	spec := p.Spec.Capacity
	if spec == nil {
		return nil
	}
	c, err := CapacityConfig(spec, j.Vars, j.Planned)
	if err != nil {
		return []kind.PlannedCommand{{Host: p.Client.Name, Cmd: "# capacity search refused: " + err.Error()}}
	}
	note := "# then the capacity search (" + c.Capacity.Objective() + ")"
	if spec.Instead {
		note = "# the capacity search (" + c.Capacity.Objective() + "), instead of the flat-out runs"
	}
	if len(p.Clients) > 1 && j.Path == nil {
		shares, weights, split := CapacityShares(c, p.Clients)
		if len(shares) > 1 {
			out := []kind.PlannedCommand{{Host: p.Client.Name, Cmd: note + ", driven by the engine from " + strconv.Itoa(len(shares)) +
				" client hosts: each probe runs on every host at its share of the rate, stopped after its first probe; the first probe:"}}
			if split != "" {
				out = append(out, kind.PlannedCommand{Host: p.Client.Name, Cmd: "# " + split})
			}
			spec := *c.Capacity
			d := ProbeLength(c, spec, shares, weights, spec.StartRate)
			for i, s := range shares {
				hc := HostProbeConfig(s.Config, spec, spec.StartRate*weights[i], d, true)
				out = append(out, kind.PlannedCommand{Host: s.Host.Name, Cmd: BenchCommand(p.Env.Agent(s.Host), hc, Password(j.Vars) != "", at)})
			}
			return out
		}
	}
	return []kind.PlannedCommand{
		{Host: p.Client.Name, Cmd: note},
		{Host: p.Client.Name, Cmd: BenchCommand(p.Env.Agent(p.Client), c, Password(j.Vars) != "", at)},
	}
}

// resolvePath plans job j's emulated path: both namespaces on the load
// generator's host, which must also be the servers' host.
func resolvePath(env Env, j *Job, v *labs.Variant, client kind.Host, vars map[string]string) error {
	if len(j.Deploy.Hosts) != 1 || j.Deploy.Hosts[0].Name != client.Name {
		var on []string
		for _, h := range j.Deploy.Hosts {
			on = append(on, h.Name)
		}
		return fmt.Errorf("variant %s: an emulated network path joins two namespaces of one host, so the load generator (on %s) and the servers (on %s) must share it", v.Label, client.Name, strings.Join(on, ", "))
	}
	cfg, err := PathConfig(env.Workdir(), v, vars)
	if err != nil {
		return err
	}
	path, err := netpath.Plan(client.Name, &cfg)
	if err != nil {
		return err
	}
	j.PathCfg, j.Path = &cfg, &path
	if j.Transport == "" {
		j.Transport = "tcp"
	}
	return nil
}

// PathConfig is the netpath configuration of a variant (workdir: the
// run's working directory): its run id comes
// from the run's unique working directory and the variant's label, so two
// runs on one host do not share a name, and a plan names exactly what the
// run makes.
func PathConfig(workdir string, v *labs.Variant, vars map[string]string) (netpath.Config, error) {
	pv, err := netpath.ParseVariant(v.NetPath)
	if err != nil {
		return netpath.Config{}, fmt.Errorf("variant %s: %w", v.Label, err)
	}
	cfg := netpath.Config{Variant: pv}
	if v.FirewallRules.IsSet() {
		if cfg.FirewallRules, err = v.FirewallRules.Int(vars, 0); err != nil {
			return cfg, fmt.Errorf("variant %s: firewall_rules: %w", v.Label, err)
		}
	}
	sum := sha256.Sum256([]byte(workdir + "\x00" + v.Label))
	const digits = "abcdefghijklmnopqrstuvwxyz0123456789"
	var id [5]byte
	for i := range id {
		id[i] = digits[int(sum[i])%len(digits)]
	}
	cfg.RunID = string(id[:])
	return cfg, cfg.Validate()
}

// BenchCommand is the client side of a job, run by agent (dpulab on the
// client host).
func BenchCommand(agent string, c benchwire.Config, password bool, at Placement) string {
	args := append([]string{agent, "bench", "--json"}, c.Args()...)
	cmd := at.Wrap("exec " + runner.QuoteAll(args...))
	if password {
		// The password comes on stdin into the environment, never argv.
		cmd = "IFS= read -r " + benchwire.PasswordEnv + " && export " + benchwire.PasswordEnv + " && " + cmd
	}
	return cmd
}

// SamplerCommand is the server side of a job, run by agent on h. When the load comes from
// the same machine (a local lab), the traffic is on the loopback
// interface, which the sampler leaves out by default: ask for it.
// Over an emulated path it runs in the path's server namespace, where the
// traffic crosses the path's veth end (CPU figures are the host's either
// way: /proc/stat is not per namespace).
func SamplerCommand(agent string, h, client kind.Host, path *netpath.Path) string {
	args := []string{agent, "sample", "--interval", "1s", "--host", h.Name}
	switch {
	case path != nil:
		args = append(args, "--iface", path.ServerLink)
	case h.Local && client.Local:
		args = append(args, "--iface", "lo")
	}
	cmd := "exec " + runner.QuoteAll(args...)
	if path != nil {
		cmd = Placement{NS: path.ServerNS}.Wrap(cmd)
	}
	return cmd
}
