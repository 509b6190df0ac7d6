package labs

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/internal/suggest"
	"github.com/dpulab/dpulab/server/transport"
	"go.yaml.in/yaml/v3"
)

// This file reads the steps: the keys every step has and those of each
// kind. parse.go holds the parser's helpers and the lab's other keys.

// The keys every step takes, and those the command kinds share.
var (
	commonKeys      = []string{"id", "title", "kind", "on", "doc", "hint", "confirm", "timeout"}
	commandStepKeys = []string{"run", "sudo", "skip_if", "verify"}
	benchKeys       = []string{"target", "clients", "pipeline", "ratio", "data_size", "duration", "warmup", "requests", "rate", "runs", "key_maximum", "prefill", "transport", "clients_hosts", "capacity"}
)

// The syntax of the kinds whose keys are the command keys, each
// registered through RegisterKind as a kind from another package registers
// its own, and of deploy, bench and compare, whose keys are a vocabulary
// the kinds, lint and the estimate share (see KindSyntax). The keys only
// one kind reads are its package's (template, tco; run's record: and
// check's vsphere: through WrapKind).
func init() {
	RegisterKind(KindRead, KindSyntax{Parse: builtin(func(p *parser, s *Step, m *mapping, what string) {
		if m.get("doc") == nil {
			p.errf(m.node, "%s: a read step needs doc: (the markdown file it shows)", what)
		}
	})})
	RegisterKind(KindRun, KindSyntax{Keys: commandStepKeys, OnHosts: true, Parse: builtin(needRun)})
	RegisterKind(KindCleanup, KindSyntax{Keys: commandStepKeys, OnHosts: true, Parse: builtin(needRun)})
	RegisterKind(KindCheck, KindSyntax{Keys: []string{"verify", "sudo", "skip_if", "hardware"}, OnHosts: true, Parse: builtin(func(p *parser, s *Step, m *mapping, what string) {
		if s.Verify == nil {
			p.errf(m.node, "%s: a check step needs verify: {run: COMMAND, ...}", what)
		}
	})})
	RegisterKind(KindTask, KindSyntax{Keys: commandStepKeys, OnHosts: true, Parse: builtin(func(p *parser, s *Step, m *mapping, what string) {
		if s.Verify == nil {
			p.errf(m.node, "%s: a task step needs verify: (how dpulab checks the trainee's work)", what)
		}
		if len(s.Run) == 0 {
			p.errf(m.node, "%s: a task step needs run: (what \"do it for me\", booth mode and headless runs do)", what)
		}
	})})
	RegisterKind(KindBench, KindSyntax{Keys: benchKeys, OnHosts: true, OneRole: true, Parse: builtin((*parser).benchStep)})
	RegisterKind(KindCompare, KindSyntax{Keys: append(slices.Clone(benchKeys), "variants", "sweep"), OnHosts: true, OneRole: true, Parse: builtin((*parser).compareStep)})
}

func needRun(p *parser, s *Step, m *mapping, what string) {
	if len(s.Run) == 0 {
		p.errf(m.node, "%s: a %s step needs run: (one command or a list)", what, s.Kind)
	}
}

func (p *parser) steps(n *yaml.Node) {
	n = deref(n)
	if n == nil {
		return
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errf(n, "steps must be a non-empty list")
		return
	}
	seen := map[string]int{}
	for _, c := range n.Content {
		m := p.mapOf(c, "step")
		if m == nil {
			continue
		}
		s := Step{Line: c.Line}
		s.ID = p.id(m.get("id"), "step id")
		what := "step"
		if s.ID != "" {
			what = "step " + s.ID
			if line, dup := seen[s.ID]; dup {
				p.errf(m.get("id"), "duplicate step id %q (first on line %d)", s.ID, line)
			} else {
				seen[s.ID] = c.Line
			}
		}
		p.require(m, what, "id", "title", "kind")
		s.Title = p.text(m.get("title"), what+" title")
		s.Kind = Kind(p.str(m.get("kind"), what+" kind"))
		syn, known := syntaxOf(s.Kind)
		if !known {
			if slices.Contains(Kinds, s.Kind) {
				p.errf(m.get("kind"), "%s: kind %q is dpulab's, but this program does not link its package (steps/kinds/%s): import github.com/dpulab/dpulab/steps, which links every kind", what, s.Kind, s.Kind)
			} else if s.Kind != "" {
				msg := fmt.Sprintf("%s: unknown kind %q", what, s.Kind)
				if c := suggest.Closest(string(s.Kind), kindNames()); c != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", c)
				} else {
					msg += " (use " + strings.Join(kindNames(), ", ") + ")"
				}
				p.errf(m.get("kind"), "%s", msg)
			}
			p.lab.Steps = append(p.lab.Steps, s)
			continue
		}
		p.allow(m, what, append(slices.Clone(commonKeys), syn.Keys...)...)
		p.step(&s, m, what, syn)
		p.lab.Steps = append(p.lab.Steps, s)
	}
}

func kindNames() []string {
	ks := RegisteredKinds()
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = string(k)
	}
	return names
}

// step fills the common and kind-specific fields of s.
func (p *parser) step(s *Step, m *mapping, what string, syn KindSyntax) {
	s.On = p.strList(m.get("on"), what+" on")
	for i, r := range s.On {
		if !slices.Contains(p.lab.RoleNames(), r) {
			node := deref(m.get("on"))
			if node.Kind == yaml.SequenceNode && i < len(node.Content) {
				node = node.Content[i]
			}
			p.errf(node, "%s: unknown role %q (the lab's roles are: %s)", what, r, strings.Join(p.lab.RoleNames(), ", "))
		}
	}
	runsOnHosts := syn.OnHosts
	if len(s.On) == 0 && runsOnHosts {
		if len(p.lab.Roles) == 1 {
			s.On = []string{p.lab.Roles[0].Name}
		} else if len(p.lab.Roles) > 1 {
			p.errf(m.node, "%s: say which role(s) it runs on with on: (one of %s)", what, strings.Join(p.lab.RoleNames(), ", "))
		}
	}
	if !runsOnHosts && m.get("on") != nil {
		p.errf(m.get("on"), "%s: a %s step runs on no host; remove on:", what, s.Kind)
	}
	if syn.OneRole && len(s.On) > 1 {
		p.errf(m.get("on"), "%s: the load generator runs on one role (the client); got %s", what, strings.Join(s.On, ", "))
	}

	if n := m.get("doc"); n != nil {
		s.Doc = p.str(n, what+" doc")
		if s.Doc != "" {
			if b, err := readLabFile(p.fsys, p.dir, s.Doc); err != nil {
				p.errf(n, "%s: doc %q: %v", what, s.Doc, cleanFSErr(err))
			} else {
				p.checkDocText(s.Doc, b)
			}
		}
	}
	s.Hint = strings.TrimSpace(p.text(m.get("hint"), what+" hint"))
	if n := m.get("confirm"); n != nil {
		v := p.text(n, what+" confirm")
		if b, err := ParseBool(v); err == nil {
			if b {
				s.Confirm = "Run step " + s.ID + "?"
			}
		} else {
			s.Confirm = strings.TrimSpace(v)
		}
	}
	s.Timeout = p.value(m.get("timeout"), what+" timeout", checkDuration)
	s.Sudo = p.boolean(m.get("sudo"), what+" sudo")
	s.Hardware = p.boolean(m.get("hardware"), what+" hardware")

	if n := m.get("run"); n != nil {
		s.Run = p.strList(n, what+" run")
		node := deref(n)
		for i, c := range s.Run {
			cn := node
			if node.Kind == yaml.SequenceNode && i < len(node.Content) {
				cn = node.Content[i]
			}
			p.checkTemplate(p.file, blockLine(cn), c, true, commandKeys, what+" run")
		}
	}
	if n := m.get("skip_if"); n != nil {
		s.SkipIf = p.str(n, what+" skip_if")
		p.checkTemplate(p.file, blockLine(n), s.SkipIf, true, commandKeys, what+" skip_if")
	}
	if n := m.get("verify"); n != nil {
		s.Verify = p.verify(n, what)
	}

	if syn.Parse != nil {
		syn.Parse(&StepParser{p: p, m: m, what: what}, s)
	}
}

func (p *parser) benchStep(s *Step, m *mapping, what string) {
	p.require(m, what, "target")
	s.Bench = p.bench(m, what)
	at := m.get("transport")
	if at == nil {
		at = m.get("target")
	}
	p.checkReach(at, what, s.On, s.Bench.Transport, s.Bench.Target, nil)
}

func (p *parser) compareStep(s *Step, m *mapping, what string) {
	s.Bench = p.bench(m, what)
	s.Compare = p.compare(m, s, what)
}

// blockLine is the first line of a scalar's text: one below the key for a
// literal (|) or folded (>) block.
func blockLine(n *yaml.Node) int {
	n = deref(n)
	if n == nil {
		return 0
	}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Line + 1
	}
	return n.Line
}

func (p *parser) verify(n *yaml.Node, what string) *Verify {
	what += " verify"
	m := p.mapOf(n, what)
	if m == nil {
		return nil
	}
	p.allow(m, what, "run", "expect_exit", "expect", "retries", "interval")
	p.require(m, what, "run")
	v := &Verify{Line: n.Line}
	v.Run = p.str(m.get("run"), what+" run")
	p.checkTemplate(p.file, blockLine(m.get("run")), v.Run, true, commandKeys, what+" run")
	v.ExpectExit = p.integer(m.get("expect_exit"), what+" expect_exit")
	if en := m.get("expect"); en != nil {
		v.Expect = p.str(en, what+" expect")
		if _, err := regexp.Compile(v.Expect); err != nil {
			p.errf(en, "%s: expect is not a valid regular expression: %v", what, err)
		}
	}
	v.Retries = p.integer(m.get("retries"), what+" retries")
	if v.Retries < 0 {
		p.errf(m.get("retries"), "%s: retries must be 0 or more", what)
	}
	v.Interval = 1e9
	if in := m.get("interval"); in != nil {
		d, err := ParseDuration(p.str(in, what+" interval"))
		if err != nil {
			p.errf(in, "%s interval: %v", what, err)
		}
		v.Interval = d
	}
	return v
}

// deploy reads the keys of a deploy step, or of a variant's deploy override
// (override: group not allowed, nothing required).
func (p *parser) deploy(m *mapping, what string, override bool) *DeploySpec {
	d := &DeploySpec{}
	if !override {
		d.Group = p.id(m.get("group"), what+" group")
	}
	d.Instances = p.value(m.get("instances"), what+" instances", checkIntMin(1))
	d.Port = p.value(m.get("port"), what+" port", checkPort)
	if n := m.get("config"); n != nil {
		d.Config = p.str(n, what+" config")
		if d.Config != "" {
			p.checkTemplateFile(n, d.Config, configKeys, what)
		}
	}
	d.Transport = p.value(m.get("transport"), what+" transport", checkTransport)
	d.Bind = p.value(m.get("bind"), what+" bind", nil)
	d.Settings = p.settings(m.get("settings"), what)
	d.Server = p.value(m.get("server"), what+" server", func(s string) error {
		if slices.Contains(ServerNames, s) {
			return nil
		}
		return fmt.Errorf("server %q: use %s", s, strings.Join(ServerNames, ", "))
	})
	if n := m.get("server"); n != nil && d.Server.IsSet() && !strings.Contains(string(d.Server), "{{") {
		// What can be told from the file alone; the engine checks the
		// resolved step with its variant's overrides again.
		if err := ServerAccepts(string(d.Server), string(d.Transport), settingNames(d.Settings)); err != nil {
			p.errf(n, "%s: %v", what, err)
		}
	}
	return d
}

func settingNames(ss []Setting) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// The servers a deploy step can start: the bundled one (the default), or
// the distribution's Redis or Valkey, found on the host or installed by
// the lab after a confirmation.
const (
	ServerBundled = "bundled"
	ServerRedis   = "redis-server"
	ServerValkey  = "valkey-server"
)

// ServerNames lists the values of a deploy step's server key.
var ServerNames = []string{ServerBundled, ServerRedis, ServerValkey}

// ServerAccepts reports why server cannot run a deployment over transport
// (empty means tcp) with the named redis.conf settings, or nil. Redis has
// no RDMA at all; Valkey's depends on how it was built, which only the
// host can tell (the engine asks it), so only the bundled server's
// article-only rdma-* names are refused for Valkey here. Values that are
// templates ({{...}}) are not judged.
func ServerAccepts(server, tr string, settings []string) error {
	if server == "" || server == ServerBundled || strings.Contains(server, "{{") {
		return nil
	}
	if server == ServerRedis && tr == string(transport.RDMA) {
		return fmt.Errorf("server redis-server cannot serve transport rdma: Redis has no RDMA transport (use the bundled server, or valkey-server built with RDMA)")
	}
	for _, name := range settings {
		n := strings.ToLower(name)
		if !strings.HasPrefix(n, "rdma-") {
			continue
		}
		if server == ServerRedis {
			return fmt.Errorf("setting %s is the bundled server's (RDMA); redis-server does not accept it: remove it or use server: bundled", name)
		}
		if !slices.Contains(valkeyRDMASettings, n) {
			return fmt.Errorf("setting %s exists in the bundled server only (from the article, in no released Valkey); valkey-server does not accept it: remove it or use server: bundled", name)
		}
	}
	return nil
}

// valkeyRDMASettings are the rdma-* names Valkey 8.1 built with RDMA reads.
var valkeyRDMASettings = []string{"rdma-port", "rdma-bind", "rdma-rx-size", "rdma-completion-vector"}

func (p *parser) settings(n *yaml.Node, what string) []Setting {
	m := p.mapOf(n, what+" settings")
	if m == nil {
		return nil
	}
	var out []Setting
	for _, k := range m.keys {
		if strings.ContainsAny(k.Value, " \t\n") || k.Value == "" {
			p.errf(k, "%s settings: %q is not a redis.conf directive name", what, k.Value)
		}
		v := p.value(m.values[k.Value], what+" settings "+k.Value, nil)
		if strings.Contains(string(v), "\n") {
			p.errf(m.values[k.Value], "%s settings %s: a directive's value must fit on one line", what, k.Value)
		}
		out = append(out, Setting{Name: k.Value, Value: v})
	}
	return out
}

func (p *parser) bench(m *mapping, what string) *BenchSpec {
	b := &BenchSpec{
		Target:     p.str(m.get("target"), what+" target"),
		Clients:    p.value(m.get("clients"), what+" clients", checkIntMin(1)),
		Pipeline:   p.value(m.get("pipeline"), what+" pipeline", checkIntMin(1)),
		Ratio:      p.value(m.get("ratio"), what+" ratio", checkRatio),
		DataSize:   p.value(m.get("data_size"), what+" data_size", checkSize),
		Duration:   p.value(m.get("duration"), what+" duration", checkDuration),
		Warmup:     p.value(m.get("warmup"), what+" warmup", checkDuration),
		Requests:   p.value(m.get("requests"), what+" requests", checkIntMin(0)),
		Rate:       p.value(m.get("rate"), what+" rate", checkIntMin(0)),
		Runs:       p.value(m.get("runs"), what+" runs", checkIntMin(1)),
		KeyMaximum: p.value(m.get("key_maximum"), what+" key_maximum", checkIntMin(1)),
		Prefill:    p.value(m.get("prefill"), what+" prefill", checkBool),
		Transport:  p.value(m.get("transport"), what+" transport", checkTransport),
		// How many of the role's hosts share the load: checked against
		// the inventory by the engine.
		ClientsHosts: p.value(m.get("clients_hosts"), what+" clients_hosts", checkIntMin(1)),
		Capacity:     p.capacity(m.get("capacity"), what+" capacity"),
	}
	if b.Target != "" {
		if _, ok := p.deployed()[b.Target]; !ok {
			p.errf(m.get("target"), "%s: target %q is not a group deployed by an earlier deploy step%s", what, b.Target, p.groupList())
		}
	}
	return b
}

// checkReach reports a client transport the servers of group cannot offer:
// a Unix socket needs servers deployed with transport unix on the client's
// own host, RDMA needs servers deployed with transport rdma. Only literal
// transports are checked; templated ones are the engine's to refuse.
func (p *parser) checkReach(n *yaml.Node, what string, clientRoles []string, clientTransport Value, group string, override *DeploySpec) {
	ds, ok := p.deployed()[group]
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
			p.errf(n, "%s: transport unix needs group %q deployed with transport: unix (step %s deploys it with %s)", what, group, ds.ID, server)
		} else if len(clientRoles) > 0 && !slices.Equal(clientRoles, ds.On) {
			p.errf(n, "%s: a Unix socket reaches servers on the same host only, but the client runs on %s and group %q on %s", what, strings.Join(clientRoles, ", "), group, strings.Join(ds.On, ", "))
		}
	case transport.RDMA:
		if server != string(transport.RDMA) {
			p.errf(n, "%s: transport rdma needs group %q deployed with transport: rdma (step %s deploys it with %s)", what, group, ds.ID, server)
		}
	}
}

func (p *parser) groupList() string {
	if len(p.deployed()) == 0 {
		return " (this lab deploys none yet)"
	}
	names := make([]string, 0, len(p.deployed()))
	for g := range p.deployed() {
		names = append(names, g)
	}
	sort.Strings(names)
	return " (deployed so far: " + strings.Join(names, ", ") + ")"
}

func (p *parser) compare(m *mapping, s *Step, what string) *CompareSpec {
	c := &CompareSpec{}
	n := deref(m.get("variants"))
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) < 2 {
		p.errf(m.node, "%s: a compare step needs variants: a list of at least two", what)
	}
	labels := map[string]int{}
	if n != nil && n.Kind == yaml.SequenceNode {
		for _, vn := range n.Content {
			vm := p.mapOf(vn, what+" variant")
			if vm == nil {
				continue
			}
			vwhat := what + " variant"
			p.allow(vm, vwhat, "label", "description", "on", "group", "deploy", "transport", "settings", "netpath", "firewall_rules")
			p.require(vm, vwhat, "label")
			v := Variant{Line: vn.Line}
			v.Label = p.text(vm.get("label"), vwhat+" label")
			if v.Label != "" {
				vwhat += " " + strconv.Quote(v.Label)
				if line, dup := labels[v.Label]; dup {
					p.errf(vm.get("label"), "%s: label given twice (first on line %d)", vwhat, line)
				}
				labels[v.Label] = vn.Line
			}
			v.Description = strings.TrimSpace(p.text(vm.get("description"), vwhat+" description"))
			v.On = p.str(vm.get("on"), vwhat+" on")
			if v.On != "" && !slices.Contains(p.lab.RoleNames(), v.On) {
				p.errf(vm.get("on"), "%s: unknown role %q (the lab's roles are: %s)", vwhat, v.On, strings.Join(p.lab.RoleNames(), ", "))
			}
			v.Group = p.str(vm.get("group"), vwhat+" group")
			if v.Group == "" {
				v.Group = s.Bench.Target
			}
			if v.Group == "" {
				p.errf(vn, "%s: say which deployed group it uses (group: here, or target: on the step)", vwhat)
			} else if ds, ok := p.deployed()[v.Group]; !ok {
				gn := vm.get("group")
				if gn == nil {
					gn = m.get("target")
				}
				p.errf(gn, "%s: group %q is not deployed by an earlier deploy step%s", vwhat, v.Group, p.groupList())
			} else if v.On != "" && slices.Contains(p.lab.RoleNames(), v.On) && !slices.Contains(ds.On, v.On) {
				p.errf(vm.get("on"), "%s: on %s, but group %q is deployed on %s (step %s)", vwhat, v.On, v.Group, strings.Join(ds.On, ", "), ds.ID)
			}
			if dn := vm.get("deploy"); dn != nil {
				dm := p.mapOf(dn, vwhat+" deploy")
				if dm != nil {
					p.allow(dm, vwhat+" deploy", "instances", "port", "config", "transport", "bind", "settings", "server")
					v.Deploy = p.deploy(dm, vwhat+" deploy", true)
				}
			}
			v.Transport = p.value(vm.get("transport"), vwhat+" transport", checkTransport)
			v.Settings = p.settings(vm.get("settings"), vwhat)
			p.netPath(vm, &v, s, vwhat)
			tr := v.Transport
			if tr == "" {
				tr = s.Bench.Transport
			}
			at := vm.get("transport")
			if at == nil {
				at = vn
			}
			p.checkReach(at, vwhat, s.On, tr, v.Group, v.Deploy)
			c.Variants = append(c.Variants, v)
		}
	}
	if sn := m.get("sweep"); sn != nil {
		sm := p.mapOf(sn, what+" sweep")
		if sm != nil {
			p.allow(sm, what+" sweep", "var", "values")
			p.require(sm, what+" sweep", "var", "values")
			sw := &Sweep{Line: sn.Line, Var: p.str(sm.get("var"), what+" sweep var")}
			p.sweeps = append(p.sweeps, sweepUse{name: sw.Var, node: sm.get("var"), what: what})
			v, ok := p.lab.Var(sw.Var)
			if vn := deref(sm.get("values")); vn != nil && vn.Kind == yaml.ScalarNode {
				// values: "{{.vars.NAME}}": the list is a variable's.
				sw.From = p.value(vn, what+" sweep values", func(s string) error {
					vals, err := splitList(s)
					for _, val := range vals {
						if err == nil && ok {
							err = v.Check(val)
						}
					}
					return err
				})
				c.Sweep = sw
				return c
			}
			sw.Values = p.strList(sm.get("values"), what+" sweep values")
			if sw.Var != "" && !ok {
				p.errf(sm.get("var"), "%s: sweep over undefined variable %q", what, sw.Var)
			}
			if sm.get("values") != nil && len(sw.Values) == 0 {
				p.errf(sm.get("values"), "%s: sweep values must not be empty", what)
			}
			if ok {
				vals := deref(sm.get("values"))
				for i, val := range sw.Values {
					if err := v.Check(val); err != nil {
						node := vals
						if vals.Kind == yaml.SequenceNode && i < len(vals.Content) {
							node = vals.Content[i]
						}
						p.errf(node, "%s: sweep value: %v", what, err)
					}
				}
			}
			c.Sweep = sw
		}
	}
	return c
}

// deployed maps each group deployed by an earlier step to the first deploy
// step that deploys it (deploy's keys are steps/kinds/deploy's).
func (p *parser) deployed() map[string]*Step {
	out := map[string]*Step{}
	for i := range p.lab.Steps {
		st := &p.lab.Steps[i]
		if st.Kind != KindDeploy || st.Deploy == nil || st.Deploy.Group == "" {
			continue
		}
		if _, dup := out[st.Deploy.Group]; !dup {
			out[st.Deploy.Group] = st
		}
	}
	return out
}
