package load

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// fakeEnv is a load.Env without an engine: kindtest's Env for the hosts,
// output and clock, deploy's own Resolve for the deployments, and a
// transport judge that says the hosts lack what lacks names.
type fakeEnv struct {
	*kindtest.Env
	// lacks maps a transport to why the hosts' dpulab cannot run it.
	lacks map[string]string
	// noHost maps a role to why no host plays it.
	noHost map[string]string
	cpus   map[string]int
	// metrics maps a host to the vSphere queries planned for it.
	metrics map[string][]string
}

var _ Env = fakeEnv{}

func (f fakeEnv) Agent(h kind.Host) string { return "/opt/dpulab-on-" + h.Name }
func (f fakeEnv) Password() string         { return "" }
func (f fakeEnv) CPUs(host string) int     { return f.cpus[host] }

func (f fakeEnv) HostMetricsPlan(h kind.Host) []string { return f.metrics[h.Name] }

func (f fakeEnv) Lacks(hosts []kind.Host, tr string) string {
	if why := f.lacks[tr]; why != "" && len(hosts) > 0 {
		return hosts[0].Name + ": " + why
	}
	return ""
}

func (f fakeEnv) NoHost(roles []string) string {
	for _, r := range roles {
		if why := f.noHost[r]; why != "" {
			return why
		}
	}
	return ""
}

func (f fakeEnv) DeployStep(group string) (*labs.Step, error) {
	for i := range f.L.Steps {
		if st := &f.L.Steps[i]; st.Kind == labs.KindDeploy && st.Deploy != nil && st.Deploy.Group == group {
			return st, nil
		}
	}
	return nil, fmt.Errorf("no deploy step has group %q", group)
}

func (f fakeEnv) DeployPlan(st *labs.Step, vars map[string]string, v *labs.Variant) (deploy.Plan, error) {
	return deploy.Resolve(f, st, vars, v)
}

const compareLab = `
id: cmp
title: Compare
summary: a compare with variants and a sweep
duration: 1m
roles:
  client: the load generators
  server: the servers
variables:
  instances:
    type: int
    default: 1
    min: 1
    max: 8
    description: servers
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [server]
    group: g
    instances: "{{.vars.instances}}"
    port: "7000"
    bind: 0.0.0.0
    transport: rdma
  - id: compare
    title: TCP against RDMA
    kind: compare
    on: [client]
    target: g
    clients: 4
    pipeline: 2
    duration: 2s
    warmup: 1s
    runs: 3
    sweep:
      var: instances
      values: ["1", "2", "4"]
    variants:
      - label: tcp
        transport: tcp
      - label: rdma
        transport: rdma
`

func newCompare(t *testing.T) (fakeEnv, *labs.Step) {
	t.Helper()
	ke := kindtest.New(kindtest.Lab(t, compareLab, nil), "h1")
	ke.Roles["client"] = []kind.Host{{Name: "c1", Role: "client", Address: "192.0.2.10"}}
	ke.Roles["server"] = []kind.Host{{Name: "s1", Role: "server", Address: "192.0.2.20"}}
	return fakeEnv{Env: ke}, ke.Step(t, "compare")
}

// TestResolveCompare: a compare with two variants swept over three values
// is six jobs in run order (sweep value, then variant), each with its
// sweep value in its variables, a deployment of that many instances, its
// transport and a bench against the planned instances; the commands show
// the first sweep value's jobs only, each bench run by the client host's
// agent and each sampler by the server host's.
func TestResolveCompare(t *testing.T) {
	env, st := newCompare(t)
	p, err := Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Client.Name != "c1" || len(p.Clients) != 1 || p.SweepVar != "instances" {
		t.Fatalf("client %v, clients %v, sweep %q", p.Client, p.Clients, p.SweepVar)
	}
	want := []struct {
		sweep, label, transport string
		instances               int
	}{
		{"1", "tcp, instances=1", "tcp", 1}, {"1", "rdma, instances=1", "rdma", 1},
		{"2", "tcp, instances=2", "tcp", 2}, {"2", "rdma, instances=2", "rdma", 2},
		{"4", "tcp, instances=4", "tcp", 4}, {"4", "rdma, instances=4", "rdma", 4},
	}
	if len(p.Jobs) != len(want) {
		t.Fatalf("%d jobs, want %d", len(p.Jobs), len(want))
	}
	for i, w := range want {
		j := p.Jobs[i]
		if j.Sweep != w.sweep || j.Label != w.label || j.Transport != w.transport || j.Group != "g" || j.VI != i%2 {
			t.Errorf("job %d: %+v, want %+v", i, j, w)
		}
		if j.Vars["instances"] != w.sweep {
			t.Errorf("job %d: variables %v, want instances=%s", i, j.Vars, w.sweep)
		}
		if j.Deploy.Instances != w.instances || len(j.Planned.Endpoints) != w.instances {
			t.Errorf("job %d: %d instances planned, %d endpoints; want %d", i, j.Deploy.Instances, len(j.Planned.Endpoints), w.instances)
		}
		if j.Planned.Clients != 4 || j.Planned.Pipeline != 2 || j.Planned.Runs != 3 || j.NotBuilt != "" || j.NoHost != "" {
			t.Errorf("job %d: bench %+v, not built %q, no host %q", i, j.Planned, j.NotBuilt, j.NoHost)
		}
	}
	if p.PerJob != 3*(2+1)*1e9 {
		t.Errorf("a job should take %s, want 9s (3 runs of 2s after 1s warmup)", p.PerJob)
	}
	var text []string
	for _, c := range p.Commands() {
		text = append(text, c.Host+": "+c.Cmd)
	}
	all := strings.Join(text, "\n")
	for _, w := range []string{
		`c1: # variant "tcp"`, `c1: # variant "rdma"`,
		"c1: exec /opt/dpulab-on-c1 bench --json",
		"s1: exec /opt/dpulab-on-s1 sample --interval 1s --host s1",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("commands lack %q:\n%s", w, all)
		}
	}
	if strings.Contains(all, "instances=2") || strings.Count(all, "bench --json") != 2 {
		t.Errorf("commands show more than the first sweep value:\n%s", all)
	}
}

// TestResolveTransportTheHostsLack: a variant whose transport the hosts'
// dpulab lacks is planned, named unavailable with the judge's reason, and
// its command list says it will not run; the other variant is untouched.
func TestResolveTransportTheHostsLack(t *testing.T) {
	env, st := newCompare(t)
	env.lacks = map[string]string{"rdma": "transport rdma is not in this build"}
	p, err := Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range p.Jobs {
		switch j.Transport {
		case "rdma":
			if j.NotBuilt != "c1: transport rdma is not in this build" {
				t.Errorf("rdma job %s: not built %q", j.Label, j.NotBuilt)
			}
		default:
			if j.NotBuilt != "" {
				t.Errorf("tcp job %s: not built %q", j.Label, j.NotBuilt)
			}
		}
	}
	found := false
	for _, c := range p.Commands() {
		if c.Cmd == "# not run: c1: transport rdma is not in this build" {
			found = true
		}
	}
	if !found {
		t.Errorf("the commands do not say the rdma variant is not run: %v", p.Commands())
	}
}

// TestResolveRefuses: what a load step cannot be is refused before
// anything runs, saying what is wrong.
func TestResolveRefuses(t *testing.T) {
	env, st := newCompare(t)
	for _, tc := range []struct {
		name string
		edit func(st *labs.Step)
		vars map[string]string
		want string
	}{
		{"no variants", func(st *labs.Step) { st.Compare.Variants = nil }, nil, "needs at least one variant"},
		{"sweep value out of range", func(st *labs.Step) {
			sw := *st.Compare.Sweep
			sw.Values = []string{"1", "9"}
			st.Compare.Sweep = &sw
		}, nil, "sweep value 9"},
		{"unknown group", func(st *labs.Step) { st.Compare.Variants = []labs.Variant{{Label: "x", Group: "nope"}} }, nil, `no deploy step has group "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := *st
			b, c := *st.Bench, *st.Compare
			s.Bench, s.Compare = &b, &c
			if tc.edit != nil {
				tc.edit(&s)
			}
			vars := tc.vars
			if vars == nil {
				vars = map[string]string{"instances": "1"}
			}
			_, err := Resolve(env, &s, vars)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestClientHosts: the load comes from every host of the role, or the
// first clients_hosts of them; more than the role has is refused saying
// what to do.
func TestClientHosts(t *testing.T) {
	env, st := newCompare(t)
	env.Roles["client"] = []kind.Host{{Name: "c1"}, {Name: "c2"}, {Name: "c3"}}
	hs, err := ClientHosts(env, st, nil)
	if err != nil || len(hs) != 3 {
		t.Fatalf("every host of the role: %v, %v", hs, err)
	}
	b := *st.Bench
	s := *st
	s.Bench = &b
	b.ClientsHosts = labs.Value("2")
	if hs, err := ClientHosts(env, &s, nil); err != nil || len(hs) != 2 || hs[1].Name != "c2" {
		t.Errorf("clients_hosts 2: %v, %v", hs, err)
	}
	b.ClientsHosts = labs.Value("5")
	if _, err := ClientHosts(env, &s, nil); err == nil || !strings.Contains(err.Error(), "lower clients_hosts") {
		t.Errorf("clients_hosts 5 of 3: %v", err)
	}
}

// TestKindResolves: bench and compare are registered kinds with the
// dashboard view that ask for the variables; resolved through the
// registry with a load.Env they give a plan whose commands end with the
// vSphere queries of the server hosts; a bare kind.Env is refused.
func TestKindResolves(t *testing.T) {
	env, st := newCompare(t)
	env.metrics = map[string][]string{"s1": {"# vCenter: esxi-1 while a bench runs"}}
	for _, k := range []labs.Kind{labs.KindBench, labs.KindCompare} {
		d, ok := kind.Lookup(k)
		if !ok || d.View != kind.ViewDashboard || !d.AsksVars || d.Note == "" {
			t.Errorf("kind %s: %+v, registered %v", k, d, ok)
		}
	}
	d, _ := kind.Lookup(labs.KindCompare)
	p, err := d.Resolve(env, st, map[string]string{"instances": "1"})
	if err != nil {
		t.Fatal(err)
	}
	cmds := p.Commands()
	if last := cmds[len(cmds)-1]; last.Host != "s1" || last.Cmd != "# vCenter: esxi-1 while a bench runs" {
		t.Errorf("last planned command %+v, want s1's vSphere query", last)
	}
	n := 0
	for _, c := range cmds {
		if strings.Contains(c.Cmd, "vCenter") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d vSphere lines, want one per server host: %v", n, cmds)
	}
	if _, err := d.Resolve(env.Env, st, map[string]string{"instances": "1"}); err == nil || !strings.Contains(err.Error(), "needs a load.Env") {
		t.Errorf("a bare kind.Env: %v", err)
	}
}
