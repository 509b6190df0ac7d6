package labs

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dpulab/dpulab/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// This file reads the steps: the keys every step has, the command keys,
// and (through the registry) each kind's own, which its package reads.
// parse.go holds the parser's helpers and the lab's other keys.

// The keys every step takes, and those the command kinds share.
var (
	commonKeys      = []string{"id", "title", "kind", "on", "doc", "hint", "confirm", "timeout"}
	commandStepKeys = []string{"run", "sudo", "skip_if", "verify"}
)

// The syntax of the kinds whose keys are the command keys, each
// registered through RegisterKind as a kind from another package registers
// its own. Every other kind's keys are its package's (template, tco,
// deploy, bench and compare; run's record: and check's vsphere: through
// WrapKind): see KindSyntax.
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
