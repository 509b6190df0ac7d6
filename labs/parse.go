package labs

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/assets"
	"github.com/dpulab/dpulab/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// The parser walks lab.yaml as a yaml.Node tree rather than decoding into
// structs: it needs the line of every key for its messages, must report
// unknown keys, and keeps going after the first problem so a trainer sees
// them all at once.

// LabFile is the name of a lab's main file inside its directory.
const LabFile = "lab.yaml"

// idRE is what lab, step, role and group ids look like: they appear in file
// names, state files and command lines.
var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// varNameRE is what variable names look like: usable as {{.vars.NAME}}.
var varNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

type parser struct {
	file  string // lab.yaml as shown in messages
	fsys  fs.FS
	dir   string
	probs Problems
	lab   *Lab
	// used records the variables some template refers to.
	used map[string]bool
	// sweeps are the compare steps' swept variables, checked for effect.
	sweeps []sweepUse
	// docsChecked records the markdown files already checked for
	// control characters, each reported once however many steps show it.
	docsChecked map[string]bool
}

// sweepUse is a compare step sweeping a variable.
type sweepUse struct {
	name string
	node *yaml.Node
	what string
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.probs = append(p.probs, Problem{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) errAt(file string, line int, format string, args ...any) {
	p.probs = append(p.probs, Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// mapping is a YAML mapping with its keys looked up by name.
type mapping struct {
	node   *yaml.Node
	keys   []*yaml.Node // key nodes in file order
	values map[string]*yaml.Node
	keyOf  map[string]*yaml.Node
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "empty"
		}
		return "a scalar"
	}
	return "something else"
}

// mapOf reads n as a mapping, reporting duplicate keys; nil (with a problem
// reported) when n is not one.
func (p *parser) mapOf(n *yaml.Node, what string) *mapping {
	n = deref(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a mapping of keys to values, not %s", what, kindName(n))
		return nil
	}
	m := &mapping{node: n, values: map[string]*yaml.Node{}, keyOf: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.errf(k, "%s: keys must be plain names", what)
			continue
		}
		if prev, dup := m.keyOf[k.Value]; dup {
			p.errf(k, "%s: key %q given twice (first on line %d)", what, k.Value, prev.Line)
			continue
		}
		m.keys = append(m.keys, k)
		m.values[k.Value] = v
		m.keyOf[k.Value] = k
	}
	return m
}

func (m *mapping) get(key string) *yaml.Node {
	if m == nil {
		return nil
	}
	return m.values[key]
}

// allow reports every key of m not in allowed, suggesting the closest one.
func (p *parser) allow(m *mapping, what string, allowed ...string) {
	if m == nil {
		return
	}
	for _, k := range m.keys {
		if !slices.Contains(allowed, k.Value) {
			msg := fmt.Sprintf("%s: unknown key %q", what, k.Value)
			if s := suggest.Closest(k.Value, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				sorted := slices.Clone(allowed)
				sort.Strings(sorted)
				msg += fmt.Sprintf(" (allowed: %s)", strings.Join(sorted, ", "))
			}
			p.errf(k, "%s", msg)
		}
	}
}

// require reports a missing key at the mapping's line.
func (p *parser) require(m *mapping, what string, keys ...string) {
	if m == nil {
		return
	}
	for _, k := range keys {
		if m.get(k) == nil {
			p.errf(m.node, "%s: missing required key %q", what, k)
		}
	}
}

// str reads a scalar as a string; "" (and a problem) when not a scalar.
func (p *parser) str(n *yaml.Node, what string) string {
	n = deref(n)
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		p.errf(n, "%s must be a single value, not %s", what, kindName(n))
		return ""
	}
	if n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

func (p *parser) boolean(n *yaml.Node, what string) bool {
	s := p.str(n, what)
	if s == "" {
		return false
	}
	b, err := ParseBool(s)
	if err != nil {
		p.errf(n, "%s: %v", what, err)
	}
	return b
}

func (p *parser) integer(n *yaml.Node, what string) int {
	s := p.str(n, what)
	if s == "" {
		return 0
	}
	i, err := strconv.Atoi(s)
	if err != nil {
		p.errf(n, "%s: %q is not an integer", what, s)
	}
	return i
}

// strList reads a single scalar or a list of scalars.
func (p *parser) strList(n *yaml.Node, what string) []string {
	n = deref(n)
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		if s := p.str(n, what); s != "" {
			return []string{s}
		}
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "%s must be a value or a list of values, not %s", what, kindName(n))
		return nil
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, p.str(c, what))
	}
	return out
}

func (p *parser) id(n *yaml.Node, what string) string {
	s := p.str(n, what)
	if s != "" && !idRE.MatchString(s) {
		p.errf(n, "%s %q: use lower-case letters, digits, '-' and '_' (starting with a letter or digit)", what, s)
	}
	return s
}

// parse fills p.lab from the document root.
func (p *parser) parse(root *yaml.Node) {
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			p.errf(root, "the file is empty; a lab needs at least id, title, roles and steps")
			return
		}
		root = root.Content[0]
	}
	m := p.mapOf(root, "lab")
	if m == nil {
		return
	}
	p.allow(m, "lab", "id", "title", "summary", "duration", "roles", "variables", "references", "booth", "steps")
	p.require(m, "lab", "id", "title", "summary", "duration", "roles", "steps")
	l := p.lab
	l.ID = p.id(m.get("id"), "lab id")
	l.Title = p.text(m.get("title"), "title")
	l.Summary = strings.TrimSpace(p.text(m.get("summary"), "summary"))
	if n := m.get("duration"); n != nil {
		s := p.str(n, "duration")
		d, err := ParseDuration(s)
		if err != nil {
			p.errf(n, "duration: %v", err)
		}
		l.Duration = d
	}
	p.roles(m.get("roles"))
	p.variables(m.get("variables"))
	p.steps(m.get("steps"))
	p.references(m.get("references"))
	p.booth(m.get("booth"))
	p.checkDuration(m.get("duration"))
	p.checkUnused()
}

// checkDuration reports a lab whose declared duration is shorter than the
// load its bench and compare steps apply with the defaults: the picker
// would promise a time the lab cannot keep.
func (p *parser) checkDuration(n *yaml.Node) {
	l := p.lab
	if n == nil || l.Duration <= 0 {
		return
	}
	vars := map[string]string{}
	for _, v := range l.Variables {
		vars[v.Name] = v.Default
	}
	if load := l.LoadTime(vars); load > l.Duration {
		p.errf(n, "duration %s is shorter than the load the bench and compare steps apply with the defaults (%s); raise it or shorten the runs", FormatDuration(l.Duration), FormatDuration(load))
	}
}

func (p *parser) roles(n *yaml.Node) {
	n = deref(n)
	if n == nil {
		return
	}
	seen := map[string]int{}
	add := func(k *yaml.Node, name, desc string) {
		if name == "" {
			return
		}
		if !idRE.MatchString(name) {
			p.errf(k, "role %q: use lower-case letters, digits, '-' and '_'", name)
		}
		if line, dup := seen[name]; dup {
			p.errf(k, "role %q declared twice (first on line %d)", name, line)
			return
		}
		seen[name] = k.Line
		p.lab.Roles = append(p.lab.Roles, Role{Name: name, Description: desc, Line: k.Line})
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			add(c, p.str(c, "role"), "")
		}
	case yaml.MappingNode:
		m := p.mapOf(n, "roles")
		for _, k := range m.keys {
			v, what := m.values[k.Value], "role "+k.Value
			if v == nil || v.Kind != yaml.MappingNode {
				add(k, k.Value, strings.TrimSpace(p.text(v, what+" description")))
				continue
			}
			// name: {description: ..., optional: true}
			rm := p.mapOf(v, what)
			p.allow(rm, what, "description", "optional")
			add(k, k.Value, strings.TrimSpace(p.text(rm.get("description"), what+" description")))
			if len(p.lab.Roles) > 0 && p.lab.Roles[len(p.lab.Roles)-1].Name == k.Value {
				p.lab.Roles[len(p.lab.Roles)-1].Optional = p.boolean(rm.get("optional"), what+" optional")
			}
		}
	default:
		p.errf(n, "roles must be a list of names or a mapping of name to description (or to {description: ..., optional: true})")
	}
	if len(p.lab.Roles) == 0 {
		p.errf(n, "roles: a lab needs at least one role")
	}
}

func (p *parser) variables(n *yaml.Node) {
	m := p.mapOf(n, "variables")
	if m == nil {
		return
	}
	for _, k := range m.keys {
		name := k.Value
		what := "variable " + name
		if !varNameRE.MatchString(name) {
			p.errf(k, "variable name %q: use letters, digits and '_' (usable as {{.vars.NAME}})", name)
		}
		vm := p.mapOf(m.values[name], what)
		if vm == nil {
			continue
		}
		p.allow(vm, what, "default", "type", "min", "max", "values", "pattern", "description", "rehearsal")
		p.require(vm, what, "default", "type", "description")
		v := Variable{
			Name:        name,
			Type:        VarType(p.str(vm.get("type"), what+" type")),
			Default:     p.str(vm.get("default"), what+" default"),
			Min:         p.str(vm.get("min"), what+" min"),
			Max:         p.str(vm.get("max"), what+" max"),
			Values:      p.strList(vm.get("values"), what+" values"),
			Pattern:     p.str(vm.get("pattern"), what+" pattern"),
			Description: strings.TrimSpace(p.text(vm.get("description"), what+" description")),
			Rehearsal:   p.str(vm.get("rehearsal"), what+" rehearsal"),
			Line:        k.Line,
		}
		p.checkVariable(v, vm)
		p.lab.Variables = append(p.lab.Variables, v)
	}
}

func (p *parser) checkVariable(v Variable, vm *mapping) {
	what := "variable " + v.Name
	switch v.Type {
	case TypeInt, TypeDuration, TypeSize:
		for _, b := range []string{"min", "max"} {
			if n := vm.get(b); n != nil {
				bound := Variable{Name: v.Name, Type: v.Type}
				if err := bound.check(n.Value); err != nil {
					p.errf(n, "%s %s: %v", what, b, err)
				}
			}
		}
		if vm.get("min") != nil && vm.get("max") != nil {
			if err := (Variable{Name: v.Name, Type: v.Type, Min: v.Min}).check(v.Max); err != nil {
				p.errf(vm.get("max"), "%s: max %s is below min %s", what, v.Max, v.Min)
			}
		}
	case TypeEnum:
		if len(v.Values) == 0 {
			p.errf(vm.node, "%s: an enum needs values: [a, b, ...]", what)
		}
	case TypeString, TypeBool:
	case "":
		return
	default:
		p.errf(vm.get("type"), "%s: unknown type %q (use int, string, bool, duration, size or enum)", what, v.Type)
		return
	}
	if v.Type != TypeInt && v.Type != TypeDuration && v.Type != TypeSize {
		for _, b := range []string{"min", "max"} {
			if n := vm.get(b); n != nil {
				p.errf(n, "%s: %s applies only to int, duration and size variables", what, b)
			}
		}
	}
	if n := vm.get("values"); n != nil && v.Type != TypeEnum {
		p.errf(n, "%s: values applies only to enum variables", what)
	}
	if n := vm.get("pattern"); n != nil {
		if v.Type != TypeString {
			p.errf(n, "%s: pattern applies only to string variables", what)
		} else if _, err := regexp.Compile(v.Pattern); err != nil {
			p.errf(n, "%s: pattern: %v", what, err)
		}
	}
	if n := vm.get("rehearsal"); n != nil {
		switch {
		case v.Rehearsal == RehearsalDefaultRoute:
			if v.Type != TypeString && v.Type != TypeInt {
				p.errf(n, "%s: rehearsal: %s gives an interface name (string) or its MTU (int), not a %s", what, RehearsalDefaultRoute, v.Type)
			}
		default:
			if err := v.check(v.Rehearsal); err != nil {
				p.errf(n, "rehearsal value of %v", err)
			}
		}
	}
	if n := vm.get("default"); n != nil {
		if err := v.check(v.Default); err != nil {
			p.errf(n, "default of %v", err)
		}
	}
}

func (p *parser) references(n *yaml.Node) {
	n = deref(n)
	if n == nil {
		return
	}
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "references must be a list of {label, value, source}")
		return
	}
	for _, c := range n.Content {
		m := p.mapOf(c, "reference")
		if m == nil {
			continue
		}
		p.allow(m, "reference", "label", "value", "source", "step", "figure")
		r := Reference{
			Label:  p.text(m.get("label"), "reference label"),
			Value:  p.text(m.get("value"), "reference value"),
			Source: strings.TrimSpace(p.text(m.get("source"), "reference source")),
			Step:   p.str(m.get("step"), "reference step"),
			Figure: p.str(m.get("figure"), "reference figure"),
			Line:   c.Line,
		}
		if r.Figure != "" {
			for _, k := range []string{"label", "value", "source"} {
				if m.get(k) != nil {
					p.errf(m.keyOf[k], "reference: give either figure: or %s:, not both (the figure brings its own)", k)
				}
			}
			f, ok := assets.FigureByID(r.Figure)
			if !ok {
				p.errf(m.get("figure"), "reference: no figure %q in assets/figures.yaml", r.Figure)
			}
			r.Label, r.Value, r.Source = f.Label, f.Value, f.Source
		} else {
			p.require(m, "reference", "label", "value", "source")
		}
		if r.Step != "" && p.lab.Step(r.Step) == nil {
			p.errf(m.get("step"), "reference: no step %q in this lab", r.Step)
		}
		p.lab.References = append(p.lab.References, r)
	}
}

// booth reads the booth: block. Only steps that ask something (confirm: or
// sudo:) may be listed, so the list says exactly what an unattended booth
// agrees to.
func (p *parser) booth(n *yaml.Node) {
	m := p.mapOf(n, "booth")
	if m == nil {
		return
	}
	p.allow(m, "booth", "auto_confirm")
	ac := m.get("auto_confirm")
	if ac == nil {
		return
	}
	if ac.Kind != yaml.SequenceNode {
		p.errf(ac, "booth auto_confirm must be a list of step ids, not %s", kindName(ac))
		return
	}
	seen := map[string]int{}
	for _, c := range ac.Content {
		c = deref(c)
		id := p.str(c, "booth auto_confirm")
		if id == "" {
			continue
		}
		if line, dup := seen[id]; dup {
			p.errf(c, "booth auto_confirm: step %q listed twice (first on line %d)", id, line)
			continue
		}
		seen[id] = c.Line
		s := p.lab.Step(id)
		switch {
		case s == nil:
			p.errf(c, "booth auto_confirm: no step %q in this lab", id)
		case s.Confirm == "" && !s.Sudo:
			p.errf(c, "booth auto_confirm: step %q asks nothing (it has neither confirm: nor sudo:)", id)
		}
		p.lab.Booth.AutoConfirm = append(p.lab.Booth.AutoConfirm, id)
	}
}

// cleanFSErr drops the path fs errors repeat, keeping "file does not exist".
func cleanFSErr(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// readLabFile reads name relative to dir in fsys, or from package assets
// when it starts with "assets/". Names must stay inside the lab dir.
func readLabFile(fsys fs.FS, dir, name string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(name, "assets/"); ok {
		return readAsset(rest)
	}
	if !fs.ValidPath(name) {
		return nil, fmt.Errorf("must be a relative path inside the lab directory (or assets/NAME)")
	}
	if fsys == nil {
		return nil, fmt.Errorf("%s: lab has no files", name)
	}
	return readCapped(fsys, path.Join(dir, name), MaxDocFileSize, "a doc or template")
}
