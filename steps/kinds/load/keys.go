package load

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// This file is the bench and compare kinds' lab keys: the load profile
// (target, clients, ... capacity:), a compare's variants (with a deploy:
// override, settings: and an emulated netpath:) and its sweep: read,
// checked and written back here, registered with labs. What they are read
// into (labs.BenchSpec, CompareSpec, Variant, CapacitySpec, Sweep in
// labs.Step.Bench and Step.Compare) stays in labs: lint's transport notes,
// the time estimate, the tco step and the reports read them.
//
// The cross-step checks are here too: a target or a variant's group must
// be deployed by an earlier step (deploy.Groups of the steps parsed so
// far), and the group must offer the client's transport (checkReach).

// benchKeys are a bench step's keys beside the common ones; a compare
// step takes them and variants and sweep.
var benchKeys = []string{"target", "clients", "pipeline", "ratio", "data_size", "duration", "warmup", "requests", "rate", "runs", "key_maximum", "prefill", "transport", "clients_hosts", "capacity"}

// variantKeys are the keys of a compare variant.
var variantKeys = []string{"label", "description", "on", "group", "deploy", "transport", "settings", "netpath", "firewall_rules"}

// overrideKeys are the deploy keys a variant's deploy: may change.
var overrideKeys = slices.DeleteFunc(slices.Clone(deploy.Keys), func(k string) bool { return k == "group" })

func init() {
	labs.RegisterKind(labs.KindBench, labs.KindSyntax{Keys: benchKeys, OnHosts: true, OneRole: true, Parse: parseBench, Encode: encodeBench})
	labs.RegisterKind(labs.KindCompare, labs.KindSyntax{Keys: append(slices.Clone(benchKeys), "variants", "sweep"), OnHosts: true, OneRole: true,
		Parse: func(sp *labs.StepParser, s *labs.Step) {
			groups := deploy.Groups(sp.Lab())
			s.Bench = readBench(sp, groups)
			s.Compare = readCompare(sp, s, groups)
		},
		Encode: func(s *labs.Step, m *labs.StepEncoder) {
			encodeBench(s, m)
			encodeCompare(s, m)
		}})
}

func parseBench(sp *labs.StepParser, s *labs.Step) {
	sp.Require("target")
	groups := deploy.Groups(sp.Lab())
	s.Bench = readBench(sp, groups)
	at := sp.Node("transport")
	if !at.Present() {
		at = sp.Node("target")
	}
	checkReach(groups, at, sp.What(), s.On, s.Bench.Transport, s.Bench.Target, nil)
}

// readBench reads the load profile of a bench or compare step; groups are
// the lab's deploy groups so far (deploy.Groups).
func readBench(sp *labs.StepParser, groups map[string]*labs.Step) *labs.BenchSpec {
	what := sp.What()
	b := &labs.BenchSpec{
		Target:     sp.String("target"),
		Clients:    sp.Value("clients", labs.CheckIntMin(1)),
		Pipeline:   sp.Value("pipeline", labs.CheckIntMin(1)),
		Ratio:      sp.Value("ratio", labs.CheckRatio),
		DataSize:   sp.Value("data_size", labs.CheckSize),
		Duration:   sp.Value("duration", labs.CheckDuration),
		Warmup:     sp.Value("warmup", labs.CheckDuration),
		Requests:   sp.Value("requests", labs.CheckIntMin(0)),
		Rate:       sp.Value("rate", labs.CheckIntMin(0)),
		Runs:       sp.Value("runs", labs.CheckIntMin(1)),
		KeyMaximum: sp.Value("key_maximum", labs.CheckIntMin(1)),
		Prefill:    sp.Value("prefill", labs.CheckBool),
		Transport:  sp.Value("transport", labs.CheckTransport),
		// How many of the role's hosts share the load: checked against
		// the inventory by the engine.
		ClientsHosts: sp.Value("clients_hosts", labs.CheckIntMin(1)),
		Capacity:     readCapacity(sp.Node("capacity"), what+" capacity"),
	}
	if b.Target != "" {
		if _, ok := groups[b.Target]; !ok {
			sp.Node("target").Errorf("%s: target %q is not a group deployed by an earlier deploy step%s", what, b.Target, deploy.GroupList(groups))
		}
	}
	return b
}

// checkReach reports a client transport the servers of group cannot offer:
// a Unix socket needs servers deployed with transport unix on the client's
// own host, RDMA needs servers deployed with transport rdma. Only literal
// transports are checked; templated ones are the engine's to refuse.
func checkReach(groups map[string]*labs.Step, n labs.Node, what string, clientRoles []string, clientTransport labs.Value, group string, override *labs.DeploySpec) {
	ds, ok := groups[group]
	if !ok || ds.Deploy == nil {
		return
	}
	client := string(clientTransport)
	if client == "" {
		client = string(transport.TCP)
	}
	server := string(ds.Deploy.Transport)
	if override != nil && override.Transport != "" {
		server = string(override.Transport)
	}
	if server == "" {
		server = string(transport.TCP)
	}
	if strings.Contains(client, "{{") || strings.Contains(server, "{{") {
		return
	}
	switch transport.Name(client) {
	case transport.Unix:
		if server != string(transport.Unix) {
			n.Errorf("%s: transport unix needs group %q deployed with transport: unix (step %s deploys it with %s)", what, group, ds.ID, server)
		} else if len(clientRoles) > 0 && !slices.Equal(clientRoles, ds.On) {
			n.Errorf("%s: a Unix socket reaches servers on the same host only, but the client runs on %s and group %q on %s", what, strings.Join(clientRoles, ", "), group, strings.Join(ds.On, ", "))
		}
	case transport.RDMA:
		if server != string(transport.RDMA) {
			n.Errorf("%s: transport rdma needs group %q deployed with transport: rdma (step %s deploys it with %s)", what, group, ds.ID, server)
		}
	}
}

// readCompare reads a compare step's variants and sweep (its load profile
// is readBench's); groups are the lab's deploy groups so far.
func readCompare(sp *labs.StepParser, s *labs.Step, groups map[string]*labs.Step) *labs.CompareSpec {
	what := sp.What()
	lab := sp.Lab()
	c := &labs.CompareSpec{}
	vs := sp.Node("variants").Items()
	if len(vs) < 2 {
		sp.Errorf("", "a compare step needs variants: a list of at least two")
	}
	labels := map[string]int{}
	for _, vn := range vs {
		vm := vn.Map(what + " variant")
		if vm == nil {
			continue
		}
		vwhat := what + " variant"
		vm.Allow(variantKeys...)
		vm.Require("label")
		v := labs.Variant{Line: vn.Line()}
		v.Label = vm.Node("label").Text(vwhat + " label")
		if v.Label != "" {
			vwhat += " " + strconv.Quote(v.Label)
			if line, dup := labels[v.Label]; dup {
				vm.Node("label").Errorf("%s: label given twice (first on line %d)", vwhat, line)
			}
			labels[v.Label] = vn.Line()
		}
		v.Description = strings.TrimSpace(vm.Node("description").Text(vwhat + " description"))
		v.On = vm.Node("on").String(vwhat + " on")
		if v.On != "" && !slices.Contains(lab.RoleNames(), v.On) {
			vm.Node("on").Errorf("%s: unknown role %q (the lab's roles are: %s)", vwhat, v.On, strings.Join(lab.RoleNames(), ", "))
		}
		v.Group = vm.Node("group").String(vwhat + " group")
		if v.Group == "" {
			v.Group = s.Bench.Target
		}
		if v.Group == "" {
			vn.Errorf("%s: say which deployed group it uses (group: here, or target: on the step)", vwhat)
		} else if ds, ok := groups[v.Group]; !ok {
			gn := vm.Node("group")
			if !gn.Present() {
				gn = sp.Node("target")
			}
			gn.Errorf("%s: group %q is not deployed by an earlier deploy step%s", vwhat, v.Group, deploy.GroupList(groups))
		} else if v.On != "" && slices.Contains(lab.RoleNames(), v.On) && !slices.Contains(ds.On, v.On) {
			vm.Node("on").Errorf("%s: on %s, but group %q is deployed on %s (step %s)", vwhat, v.On, v.Group, strings.Join(ds.On, ", "), ds.ID)
		}
		if dn := vm.Node("deploy"); dn.Present() {
			if dm := dn.Map(vwhat + " deploy"); dm != nil {
				dm.Allow(overrideKeys...)
				v.Deploy = deploy.ReadKeys(dm, true)
			}
		}
		v.Transport = vm.Node("transport").Value(vwhat+" transport", labs.CheckTransport)
		v.Settings = deploy.ReadSettings(vm.Node("settings"), vwhat)
		readNetPath(vm, &v, s, vwhat)
		tr := v.Transport
		if tr == "" {
			tr = s.Bench.Transport
		}
		at := vm.Node("transport")
		if !at.Present() {
			at = vn
		}
		checkReach(groups, at, vwhat, s.On, tr, v.Group, v.Deploy)
		c.Variants = append(c.Variants, v)
	}
	if sn := sp.Node("sweep"); sn.Present() {
		if sm := sn.Map(what + " sweep"); sm != nil {
			c.Sweep = readSweep(sp, sn, sm)
		}
	}
	return c
}

// readSweep reads a compare's sweep: (sm, at sn): a variable and its
// values, a list or a template that lists them ("{{.vars.NAME}}").
func readSweep(sp *labs.StepParser, sn labs.Node, sm *labs.StepParser) *labs.Sweep {
	what := sp.What()
	sm.Allow("var", "values")
	sm.Require("var", "values")
	sw := &labs.Sweep{Line: sn.Line(), Var: sm.String("var")}
	sp.Sweeps(sw.Var, sm.Node("var"), what)
	v, ok := sp.Lab().Var(sw.Var)
	vals := sm.Node("values")
	if vals.IsScalar() {
		// values: "{{.vars.NAME}}": the list is a variable's.
		sw.From = vals.Value(what+" sweep values", func(s string) error {
			list, err := labs.SplitList(s)
			for _, val := range list {
				if err == nil && ok {
					err = v.Check(val)
				}
			}
			return err
		})
		return sw
	}
	sw.Values = vals.Strings(what + " sweep values")
	if sw.Var != "" && !ok {
		sm.Node("var").Errorf("%s: sweep over undefined variable %q", what, sw.Var)
	}
	if vals.Present() && len(sw.Values) == 0 {
		vals.Errorf("%s: sweep values must not be empty", what)
	}
	if ok {
		for i, val := range sw.Values {
			if err := v.Check(val); err != nil {
				vals.Item(i).Errorf("%s: sweep value: %v", what, err)
			}
		}
	}
	return sw
}

// readNetPath reads a compare variant's emulated network path (netpath,
// firewall_rules). The path joins two namespaces of one host, so the
// variant's servers must be reached over TCP from the same role.
func readNetPath(vm *labs.StepParser, v *labs.Variant, s *labs.Step, what string) {
	if n := vm.Node("netpath"); n.Present() {
		v.NetPath = n.String(what + " netpath")
		if _, err := netpath.ParseVariant(v.NetPath); err != nil {
			n.Errorf("%s: %v", what, err)
		}
		if v.Transport != "" && v.Transport != labs.Value(transport.TCP) {
			vm.Node("transport").Errorf("%s: an emulated network path carries TCP: leave transport out or set it to tcp", what)
		}
		if v.On != "" && len(s.On) > 0 && v.On != s.On[0] {
			vm.Node("on").Errorf("%s: an emulated network path joins two namespaces of one host: its servers must run on the load generator's role (%s)", what, s.On[0])
		}
	}
	if n := vm.Node("firewall_rules"); n.Present() {
		if v.NetPath == "" {
			n.Errorf("%s: firewall_rules needs netpath: firewall or overlay+firewall", what)
		}
		v.FirewallRules = n.Value(what+" firewall_rules", func(s string) error {
			k, err := strconv.Atoi(s)
			if err != nil || k < 1 || k > netpath.MaxFirewallRules {
				return fmt.Errorf("firewall_rules %q: want a number of rules from 1 to %d", s, netpath.MaxFirewallRules)
			}
			return nil
		})
	}
}

// capacityKeys are the keys of a capacity: mapping; a plain value is the
// objective alone.
var capacityKeys = []string{"objective", "precision", "start_rate", "max_rate", "mode"}

// readCapacity reads a bench or compare step's capacity: key, either the
// objective ("p99<=1ms") or a mapping of capacityKeys. Literal values are
// checked with the load generator's own rules (benchwire.ParseCapacity and
// its range checks), so lint says what the bench would refuse.
func readCapacity(n labs.Node, what string) *labs.CapacitySpec {
	if !n.Present() {
		return nil
	}
	c := &labs.CapacitySpec{}
	if n.IsScalar() {
		c.Objective = n.Value(what, checkObjective)
		if !c.Objective.IsSet() {
			n.Errorf("%s: give an objective such as 'p99<=1ms', or remove capacity:", what)
		}
		return c
	}
	m := n.Map(what)
	if m == nil {
		return nil
	}
	m.Allow(capacityKeys...)
	c.Objective = m.Value("objective", checkObjective)
	c.Precision = m.Value("precision", checkFloatIn(0.001, 0.5))
	c.StartRate = m.Value("start_rate", checkFloatIn(1, 1e12))
	c.MaxRate = m.Value("max_rate", checkFloatIn(1, 1e12))
	if mn := m.Node("mode"); mn.Present() {
		switch mode := m.String("mode"); mode {
		case "after", "":
		case "instead":
			c.Instead = true
		default:
			mn.Errorf("%s mode: %q: want after (the flat-out runs, then the search) or instead (the search only)", what, mode)
		}
	}
	start, err1 := strconv.ParseFloat(string(c.StartRate), 64)
	hi, err2 := strconv.ParseFloat(string(c.MaxRate), 64)
	if err1 == nil && err2 == nil && hi < start {
		m.Node("max_rate").Errorf("%s: max_rate %g is below start_rate %g", what, hi, start)
	}
	return c
}

func checkObjective(s string) error {
	_, err := benchwire.ParseCapacity(s)
	return err
}

func checkFloatIn(lo, hi float64) func(string) error {
	return func(s string) error {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		if f < lo || f > hi {
			return fmt.Errorf("%g is outside %g..%g", f, lo, hi)
		}
		return nil
	}
}

// encodeBench writes back the load profile readBench read.
func encodeBench(s *labs.Step, m *labs.StepEncoder) {
	b := s.Bench
	if b == nil {
		return
	}
	m.Opt("target", b.Target)
	for _, f := range []struct {
		key string
		v   labs.Value
	}{
		{"clients", b.Clients}, {"pipeline", b.Pipeline}, {"ratio", b.Ratio}, {"data_size", b.DataSize},
		{"duration", b.Duration}, {"warmup", b.Warmup}, {"requests", b.Requests}, {"rate", b.Rate},
		{"runs", b.Runs}, {"key_maximum", b.KeyMaximum}, {"prefill", b.Prefill}, {"transport", b.Transport},
		{"clients_hosts", b.ClientsHosts},
	} {
		m.Opt(f.key, string(f.v))
	}
	if c := b.Capacity; c != nil {
		encodeCapacity(m, c)
	}
}

// encodeCapacity writes a capacity search as the objective alone when
// that is all it says, else as a mapping.
func encodeCapacity(m *labs.StepEncoder, c *labs.CapacitySpec) {
	if !c.Precision.IsSet() && !c.StartRate.IsSet() && !c.MaxRate.IsSet() && !c.Instead && c.Objective.IsSet() {
		m.String("capacity", string(c.Objective))
		return
	}
	cm := m.Map("capacity")
	cm.Opt("objective", string(c.Objective))
	cm.Opt("precision", string(c.Precision))
	cm.Opt("start_rate", string(c.StartRate))
	cm.Opt("max_rate", string(c.MaxRate))
	if c.Instead {
		cm.String("mode", "instead")
	}
}

// encodeCompare writes back the variants and sweep readCompare read.
func encodeCompare(s *labs.Step, m *labs.StepEncoder) {
	c := s.Compare
	if c == nil {
		return
	}
	add := m.MapList("variants")
	for _, v := range c.Variants {
		vm := add()
		vm.String("label", v.Label)
		vm.Opt("description", v.Description)
		vm.Opt("on", v.On)
		vm.Opt("group", v.Group)
		if v.Deploy != nil {
			deploy.EncodeKeys(vm.Map("deploy"), v.Deploy)
		}
		vm.Opt("transport", string(v.Transport))
		deploy.EncodeSettings(vm, v.Settings)
		vm.Opt("netpath", v.NetPath)
		vm.Opt("firewall_rules", string(v.FirewallRules))
	}
	if sw := c.Sweep; sw != nil {
		sm := m.Map("sweep")
		sm.String("var", sw.Var)
		if sw.From != "" {
			sm.String("values", string(sw.From))
		} else {
			sm.Strings("values", sw.Values)
		}
	}
}
