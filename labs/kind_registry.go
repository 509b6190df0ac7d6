package labs

import (
	"fmt"
	"slices"
	"sync"
)

// KindSyntax is what lab.yaml says about one step kind: the keys it takes
// beside the common ones (id, title, kind, on, doc, hint, confirm,
// timeout), whether it runs on hosts (on:), and how its own keys are read,
// checked and written back. The parser, lint and Encode find every kind
// here: a kind outside labs registers its syntax with RegisterKind from
// its own package (beside its engine half, steps/kind.Register) and keeps
// its parsed keys in Step.Spec.
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
	// Encode writes back the keys Parse kept in s.Spec (Encode writes
	// Step's own fields itself). Nil for a kind that keeps none.
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

// Has says the step sets key.
func (sp *StepParser) Has(key string) bool { return sp.m.get(key) != nil }

// String reads key as a string ("" when absent).
func (sp *StepParser) String(key string) string {
	return sp.p.str(sp.m.get(key), sp.what+" "+key)
}

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

// builtin adapts a parse function of labs' own to KindSyntax.Parse.
func builtin(f func(p *parser, s *Step, m *mapping, what string)) func(*StepParser, *Step) {
	return func(sp *StepParser, s *Step) { f(sp.p, s, sp.m, sp.what) }
}
