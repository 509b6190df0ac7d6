package labs

import (
	"fmt"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"
)

// KindSyntax is what lab.yaml says about one step kind: the keys it takes
// beside the common ones (id, title, kind, on, doc, hint, confirm,
// timeout), whether it runs on hosts (on:), and how its own keys are read,
// checked and written back. The parser, lint and Encode find every kind
// here: a kind registers its syntax with RegisterKind from its own package
// (beside its engine half, steps/kind.Register) and keeps its parsed keys
// in Step.Spec, typed by the kind.
//
// Who registers what:
//   - steps/kinds/template (template, dest, mode), steps/kinds/tco (inputs,
//     from), steps/kinds/command (run's record: through WrapKind),
//     steps/kinds/vspherecheck (check's vsphere:, through WrapKind),
//     steps/kinds/deploy (deploy's keys) and steps/kinds/load (bench's and
//     compare's, with capacity:, a variant's deploy:, settings: and
//     netpath:, and sweep:) own their keys: they are read by that kind
//     alone.
//   - labs registers read, run, check, task and cleanup with the command
//     keys (run, sudo, skip_if, verify, hardware), which several kinds
//     share and which are Step's own fields.
//
// deploy, bench and compare keep what they read in Step.Deploy, Step.Bench
// and Step.Compare, not in Spec, and those types (DeploySpec, BenchSpec,
// CompareSpec, Variant, CapacitySpec, Sweep) stay here: they are a
// vocabulary the kinds share, not one kind's. Deploy groups are named by
// bench targets and compare variants; the load kind plans a compare's
// deployments from them; lint's transport notes, the lab's time estimate,
// the tco step, the reports and the TUI read them. The cross-step checks
// (a target deployed by an earlier step, a transport the group offers, a
// Unix socket on the same host) are the load kind's, made from the steps
// before this one (StepParser.Lab).
//
// A program that reads labs links the kinds it reads: steps imports every
// kind dpulab ships (steps/kinds_list.go), so cmd/dpulab, the TUI and every
// importer of steps have them all. A kind of Kinds whose package is not
// linked is a problem that says so, not an unknown kind.
type KindSyntax struct {
	// Keys are the keys it takes beside the common ones. The command keys
	// (run, sudo, skip_if, verify, hardware) are read into Step's fields
	// for any kind that lists them.
	Keys []string
	// OnHosts says the step runs on the hosts of its roles (on:).
	OnHosts bool
	// OneRole says it runs on one role only (the load generator's host).
	OneRole bool
	// Parse reads the kind's own keys into s (its own in s.Spec) and
	// checks them, reporting problems through sp. Nil for a kind with no
	// keys beyond the common and command keys.
	Parse func(sp *StepParser, s *Step)
	// Encode writes back the kind's own keys: those Parse kept in s.Spec,
	// or, for deploy, bench and compare, in Step.Deploy, Step.Bench and
	// Step.Compare (Encode writes Step's other fields itself). It is
	// called for every step of the kind, s.Spec possibly nil. Nil for a
	// kind that keeps none.
	Encode func(s *Step, m *StepEncoder)
}

var (
	kindsMu      sync.RWMutex
	kindSyntaxes = map[Kind]KindSyntax{}
)

// RegisterKind adds a step kind's syntax; call it from the kind's init.
func RegisterKind(k Kind, syn KindSyntax) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if k == "" {
		panic("labs: RegisterKind with no kind name")
	}
	if _, dup := kindSyntaxes[k]; dup {
		panic("labs: step kind " + string(k) + " registered twice")
	}
	kindSyntaxes[k] = syn
}

// WrapKind changes the syntax of a kind registered before (by labs or by a
// package the caller imports): f gets it and returns it with, say, a key
// of the caller's added, as check's vsphere: is by steps/kinds/vspherecheck.
// The wrapper keeps its keys in Step.Spec, so it wraps only a kind that
// keeps nothing there. Call it from the wrapping package's init.
func WrapKind(k Kind, f func(KindSyntax) KindSyntax) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	syn, ok := kindSyntaxes[k]
	if !ok {
		panic("labs: WrapKind of step kind " + string(k) + ", which is not registered (import the package that registers it)")
	}
	kindSyntaxes[k] = f(syn)
}

func syntaxOf(k Kind) (KindSyntax, bool) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	syn, ok := kindSyntaxes[k]
	return syn, ok
}

// RegisteredKinds lists every kind lab.yaml accepts: Kinds, in the order
// the README documents them, then kinds registered from other packages,
// sorted.
func RegisteredKinds() []Kind {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := slices.Clone(Kinds)
	var more []Kind
	for k := range kindSyntaxes {
		if !slices.Contains(Kinds, k) {
			more = append(more, k)
		}
	}
	slices.Sort(more)
	return append(out, more...)
}

// Unlinked lists the kinds of Kinds whose syntax no linked package has
// registered: a program that reads labs wants none (it imports steps, or
// the kinds' packages under steps/kinds/); a lab's step of such a kind is
// a problem that names the package to link.
func Unlinked() []Kind {
	var out []Kind
	for _, k := range Kinds {
		if _, ok := syntaxOf(k); !ok {
			out = append(out, k)
		}
	}
	return out
}

// StepParser is how a kind's Parse reads its own keys of one step: values
// are read and checked as the parser's own are, and problems are reported
// with the file and line.
type StepParser struct {
	p    *parser
	m    *mapping
	what string
}

// What names the step in a problem ("step warmup").
func (sp *StepParser) What() string { return sp.what }

// Lab is the lab as read so far: its roles, its variables and the steps
// before this one.
func (sp *StepParser) Lab() *Lab { return sp.p.lab }

// Has says the step sets key.
func (sp *StepParser) Has(key string) bool { return sp.m.get(key) != nil }

// String reads key as a string ("" when absent).
func (sp *StepParser) String(key string) string {
	return sp.p.str(sp.m.get(key), sp.what+" "+key)
}

// Text reads key as a string shown to a person: as String, and refused
// when it holds terminal control characters.
func (sp *StepParser) Text(key string) string {
	return sp.p.text(sp.m.get(key), sp.what+" "+key)
}

// Require reports each of keys the step does not set.
func (sp *StepParser) Require(keys ...string) { sp.p.require(sp.m, sp.what, keys...) }

// Allow reports every key of the mapping other than allowed (for a
// mapping read with Node.Map; a step's own keys are KindSyntax.Keys).
func (sp *StepParser) Allow(allowed ...string) { sp.p.allow(sp.m, sp.what, allowed...) }

// TemplateFile reads key as the path of a template file of the lab
// (relative to the lab's directory, or assets/NAME) and checks that the
// file is there and parses as a text template that sees the data a
// command sees (.vars, .host, .workdir...); problems in the file carry the
// file's own line.
func (sp *StepParser) TemplateFile(key string) string {
	name := sp.String(key)
	if name != "" {
		sp.p.checkTemplateFile(sp.m.get(key), name, commandKeys, sp.what)
	}
	return name
}

// TextTemplate reads key as a text-context template that sees the data a
// command sees (a path written on each host): render it with RenderText
// and Data, not Value.Resolve.
func (sp *StepParser) TextTemplate(key string) Value {
	return sp.p.valueWith(sp.m.get(key), sp.what+" "+key, commandKeys, nil)
}

// Node is key's value (absent when the step does not set it), for a kind
// whose keys nest.
func (sp *StepParser) Node(key string) Node { return Node{p: sp.p, n: sp.m.get(key)} }

// Entry is one key of a mapping and its value.
type Entry struct {
	Name       string
	Key, Value Node
}

// Entries are the keys of the mapping in file order (keys given twice are
// reported once, when the mapping is read).
func (sp *StepParser) Entries() []Entry {
	out := make([]Entry, 0, len(sp.m.keys))
	for _, k := range sp.m.keys {
		out = append(out, Entry{Name: k.Value, Key: Node{p: sp.p, n: k}, Value: Node{p: sp.p, n: sp.m.values[k.Value]}})
	}
	return out
}

// Node is one node of a step's YAML: a key or a value.
type Node struct {
	p *parser
	n *yaml.Node
}

// Present says the node is there.
func (n Node) Present() bool { return n.n != nil }

// Line is the node's line in the lab's file (0 when absent).
func (n Node) Line() int {
	if n.n == nil {
		return 0
	}
	return n.n.Line
}

// IsMap says the node is a mapping.
func (n Node) IsMap() bool { return n.n != nil && n.n.Kind == yaml.MappingNode }

// String reads the node as a string ("" when absent); what names it in a
// problem.
func (n Node) String(what string) string { return n.p.str(n.n, what) }

// Map reads the node as a mapping whose problems name what; nil when the
// node is absent or (reported) not a mapping.
func (n Node) Map(what string) *StepParser {
	m := n.p.mapOf(n.n, what)
	if m == nil {
		return nil
	}
	return &StepParser{p: n.p, m: m, what: what}
}

// Errorf reports a problem at the node's line; the message is written
// whole (name the step: StepParser.What).
func (n Node) Errorf(format string, args ...any) { n.p.errf(n.n, format, args...) }

// Bool reads key as a boolean (false when absent).
func (sp *StepParser) Bool(key string) bool {
	return sp.p.boolean(sp.m.get(key), sp.what+" "+key)
}

// Duration reads key as a duration ("30s", "2m"), which may reference
// variables as {{.vars.NAME}}; resolve it with Value.Duration.
func (sp *StepParser) Duration(key string) Value {
	return sp.p.value(sp.m.get(key), sp.what+" "+key, checkDuration)
}

// Errorf reports a problem at key (at the step when key is "" or absent).
func (sp *StepParser) Errorf(key, format string, args ...any) {
	n := sp.m.node
	if key != "" {
		if kn := sp.m.get(key); kn != nil {
			n = kn
		}
	}
	sp.p.errf(n, "%s: %s", sp.what, fmt.Sprintf(format, args...))
}

// StepEncoder is how a kind's Encode writes its keys back.
type StepEncoder struct{ m *nodeMap }

// String writes key: v.
func (se *StepEncoder) String(key, v string) { se.m.str(key, v) }

// Opt writes key: v when v is set.
func (se *StepEncoder) Opt(key, v string) { se.m.opt(key, v) }

// Strings writes key: [v...].
func (se *StepEncoder) Strings(key string, vs []string) { se.m.add(key, strSeq(vs)) }

// Map writes key: with a mapping, and returns the encoder of that mapping.
func (se *StepEncoder) Map(key string) *StepEncoder {
	sub := newMap()
	se.m.add(key, sub.node)
	return &StepEncoder{sub}
}

// builtin adapts a parse function of labs' own to KindSyntax.Parse.
func builtin(f func(p *parser, s *Step, m *mapping, what string)) func(*StepParser, *Step) {
	return func(sp *StepParser, s *Step) { f(sp.p, s, sp.m, sp.what) }
}
