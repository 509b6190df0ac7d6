package labs

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Encode writes a lab back as lab.yaml. Defaults the loader filled in (a
// single role's on:, a template's mode) are written out, so the result is
// the lab as dpulab understands it (a kind's own keys, written by its
// KindSyntax.Encode, come after the common and command keys): a trainer can diff it against the file
// they wrote, and tests load it again to check nothing was lost.
func Encode(l *Lab) ([]byte, error) {
	root := newMap()
	root.str("id", l.ID)
	root.str("title", l.Title)
	root.str("summary", l.Summary)
	root.str("duration", FormatDuration(l.Duration))

	roles := newMap()
	for _, r := range l.Roles {
		if r.Optional {
			m := newMap()
			m.str("description", r.Description)
			m.str("optional", "true")
			roles.add(r.Name, m.node)
			continue
		}
		roles.str(r.Name, r.Description)
	}
	root.add("roles", roles.node)

	if len(l.Variables) > 0 {
		vars := newMap()
		for _, v := range l.Variables {
			m := newMap()
			m.str("type", string(v.Type))
			m.str("default", v.Default)
			m.opt("min", v.Min)
			m.opt("max", v.Max)
			if len(v.Values) > 0 {
				m.add("values", strSeq(v.Values))
			}
			m.opt("pattern", v.Pattern)
			m.str("description", v.Description)
			m.opt("rehearsal", v.Rehearsal)
			vars.add(v.Name, m.node)
		}
		root.add("variables", vars.node)
	}

	if len(l.References) > 0 {
		refs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, r := range l.References {
			m := newMap()
			if r.Figure != "" {
				m.str("figure", r.Figure)
			} else {
				m.str("label", r.Label)
				m.str("value", r.Value)
				m.str("source", r.Source)
			}
			m.opt("step", r.Step)
			refs.Content = append(refs.Content, m.node)
		}
		root.add("references", refs)
	}

	if len(l.Booth.AutoConfirm) > 0 {
		b := newMap()
		b.add("auto_confirm", strSeq(l.Booth.AutoConfirm))
		root.add("booth", b.node)
	}

	steps := &yaml.Node{Kind: yaml.SequenceNode}
	for i := range l.Steps {
		steps.Content = append(steps.Content, encodeStep(&l.Steps[i]))
	}
	root.add("steps", steps)

	out, err := yaml.Marshal(root.node)
	if err != nil {
		return nil, fmt.Errorf("encode lab %s: %w", l.ID, err)
	}
	return out, nil
}

func encodeStep(s *Step) *yaml.Node {
	m := newMap()
	m.str("id", s.ID)
	m.str("title", s.Title)
	m.str("kind", string(s.Kind))
	if len(s.On) > 0 {
		m.add("on", strSeq(s.On))
	}
	m.opt("doc", s.Doc)
	m.opt("hint", s.Hint)
	m.opt("confirm", s.Confirm)
	m.opt("timeout", string(s.Timeout))
	if len(s.Run) > 0 {
		run := strSeq(s.Run)
		run.Style = 0 // commands read better one a line
		m.add("run", run)
	}
	if s.Sudo {
		m.str("sudo", "true")
	}
	if s.Hardware {
		m.str("hardware", "true")
	}
	m.opt("skip_if", s.SkipIf)
	if v := s.Verify; v != nil {
		vm := newMap()
		vm.str("run", v.Run)
		vm.str("expect_exit", strconv.Itoa(v.ExpectExit))
		vm.opt("expect", v.Expect)
		vm.str("retries", strconv.Itoa(v.Retries))
		vm.str("interval", v.Interval.String())
		m.add("verify", vm.node)
	}
	if syn, ok := syntaxOf(s.Kind); ok && syn.Encode != nil {
		syn.Encode(s, &StepEncoder{m})
	}
	return m.node
}

// nodeMap builds a YAML mapping in key order.
type nodeMap struct{ node *yaml.Node }

func newMap() *nodeMap { return &nodeMap{node: &yaml.Node{Kind: yaml.MappingNode}} }

func (m *nodeMap) add(key string, v *yaml.Node) {
	m.node.Content = append(m.node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}

// str adds a string scalar, quoted when YAML would read it as something
// else (true, 1:10, 0644...).
func (m *nodeMap) str(key, v string) { m.add(key, strNode(v)) }

// opt adds a string only when it is set.
func (m *nodeMap) opt(key, v string) {
	if v != "" {
		m.str(key, v)
	}
}

func strNode(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

func strSeq(vs []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, v := range vs {
		n.Content = append(n.Content, strNode(v))
	}
	return n
}
