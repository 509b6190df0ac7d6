package labs

import "go.yaml.in/yaml/v3"

// This file is what a kind whose keys nest or carry values needs of the
// parser beyond kind_registry.go's readers: values checked as the parser
// checks its own (Value, with the Check functions below), nodes read one
// by one (Node's readers), a deploy config template, and a swept variable
// recorded for lint's "changes nothing" check. deploy's keys
// (steps/kinds/deploy) and bench's and compare's (steps/kinds/load) are
// read with these.

// Value reads key as a value that may reference variables as
// {{.vars.NAME}}: its template must parse and name declared variables,
// and, resolved with the variables' defaults, it must pass check (when
// check is not nil; see the Check functions). Resolve it with
// Value.Resolve, Int, Duration...
func (sp *StepParser) Value(key string, check func(string) error) Value {
	return sp.p.value(sp.m.get(key), sp.what+" "+key, check)
}

// ConfigTemplateFile reads key as the path of a server configuration
// template of the lab (deploy's config:): as TemplateFile, but the
// template also sees the data of one server instance (.group, .instance,
// .port, .bind, .socket, .transport, .dir).
func (sp *StepParser) ConfigTemplateFile(key string) string {
	name := sp.String(key)
	if name != "" {
		sp.p.checkTemplateFile(sp.m.get(key), name, configKeys, sp.what)
	}
	return name
}

// Sweeps records that the step sweeps variable name (written at n): lint
// then says so when nothing the sweep changes uses the variable.
func (sp *StepParser) Sweeps(name string, n Node, what string) {
	sp.p.sweeps = append(sp.p.sweeps, sweepUse{name: name, node: n.n, what: what})
}

// Text reads the node as a string shown to a person: as String, and
// refused when it holds terminal control characters.
func (n Node) Text(what string) string { return n.p.text(n.n, what) }

// ID reads the node as an identifier (a group's name): lower-case
// letters, digits, '-' and '_'.
func (n Node) ID(what string) string { return n.p.id(n.n, what) }

// Value reads the node as StepParser.Value reads a key; what names it in
// a problem.
func (n Node) Value(what string, check func(string) error) Value {
	return n.p.value(n.n, what, check)
}

// Strings reads the node as one value or a list of values.
func (n Node) Strings(what string) []string { return n.p.strList(n.n, what) }

// IsScalar says the node is a single value.
func (n Node) IsScalar() bool { d := deref(n.n); return d != nil && d.Kind == yaml.ScalarNode }

// Items are the elements of a list (nil for any other node).
func (n Node) Items() []Node {
	d := deref(n.n)
	if d == nil || d.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]Node, len(d.Content))
	for i, c := range d.Content {
		out[i] = Node{p: n.p, n: c}
	}
	return out
}

// Item is the i-th element of a list, or the node itself when it is not
// a list or has no such element: where a problem with the i-th of the
// values Strings read is reported.
func (n Node) Item(i int) Node {
	if items := n.Items(); i < len(items) {
		return items[i]
	}
	return Node{p: n.p, n: deref(n.n)}
}

// The checks the parser gives its own values, for a kind's
// StepParser.Value and Node.Value: each returns the problem with the
// resolved value s, or nil.

// CheckDuration accepts a duration of 0 or more ("30s", "2m").
func CheckDuration(s string) error { return checkDuration(s) }

// CheckSize accepts a size in bytes ("256", "4KiB").
func CheckSize(s string) error { return checkSize(s) }

// CheckBool accepts true or false (and ParseBool's other spellings).
func CheckBool(s string) error { return checkBool(s) }

// CheckIntMin accepts an integer of at least lo.
func CheckIntMin(lo int) func(string) error { return checkIntMin(lo) }

// CheckPort accepts a port number (1-65535).
func CheckPort(s string) error { return checkPort(s) }

// CheckTransport accepts a transport dpulab knows (tcp, unix, rdma); one
// a host's binary lacks is TransportNotes' to say.
func CheckTransport(s string) error { return checkTransport(s) }

// CheckRatio accepts a SET:GET ratio ("1:10").
func CheckRatio(s string) error { return checkRatio(s) }

// SplitList splits a sweep's values as Sweep.Points does ("10,20 30");
// empty is an error.
func SplitList(s string) ([]string, error) { return splitList(s) }

// MapList writes key: with a list of mappings (empty until added to), and
// returns what adds one mapping to it and gives that mapping's encoder.
func (se *StepEncoder) MapList(key string) func() *StepEncoder {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	se.m.add(key, seq)
	return func() *StepEncoder {
		sub := newMap()
		seq.Content = append(seq.Content, sub.node)
		return &StepEncoder{sub}
	}
}
