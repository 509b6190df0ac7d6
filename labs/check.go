package labs

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template/parse"

	"github.com/dpulab/dpulab/assets"
	"github.com/dpulab/dpulab/internal/suggest"
	"github.com/dpulab/dpulab/internal/wire/transportwire"
	"github.com/dpulab/dpulab/labs/tco"
	"go.yaml.in/yaml/v3"
)

// value reads a Value field: its template must parse and reference only
// declared variables, and, resolved with the variables' defaults, it must
// pass check (when check is non-nil).
func (p *parser) value(n *yaml.Node, what string, check func(string) error) Value {
	return p.valueWith(n, what, valueKeys, check)
}

// valueWith is value for fields rendered with more than the variables
// (a template step's dest sees .workdir, .host, ...).
func (p *parser) valueWith(n *yaml.Node, what string, keys []string, check func(string) error) Value {
	s := p.str(n, what)
	if s == "" {
		return ""
	}
	v := Value(s)
	if strings.Contains(s, "{{") {
		before := len(p.probs)
		if !p.checkTemplate(p.file, n.Line, s, false, keys, what) || len(p.probs) > before {
			return v
		}
	}
	if check == nil {
		return v
	}
	defaults := map[string]string{}
	for _, vr := range p.lab.Variables {
		defaults[vr.Name] = vr.Default
	}
	r, err := v.Resolve(defaults)
	if err != nil {
		p.errf(n, "%s: %v", what, err)
		return v
	}
	if err := check(r); err != nil {
		if r != s {
			p.errf(n, "%s: %v (with the variables' defaults, %q gives %q)", what, err, s, r)
		} else {
			p.errf(n, "%s: %v", what, err)
		}
	}
	return v
}

func checkDuration(s string) error {
	d, err := ParseDuration(s)
	if err == nil && d < 0 {
		return fmt.Errorf("%q must not be negative", s)
	}
	return err
}

func checkSize(s string) error {
	_, err := ParseSize(s)
	return err
}

func checkBool(s string) error {
	_, err := ParseBool(s)
	return err
}

func checkIntMin(lo int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		if n < lo {
			return fmt.Errorf("%d is below the minimum %d", n, lo)
		}
		return nil
	}
}

func checkPort(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q is not a port number (1-65535)", s)
	}
	return nil
}

// checkTransport refuses a transport dpulab does not know (with the
// transport seam's one message). One that the binary on a host lacks is a
// valid lab that cannot run there: TransportNotes says so, and the engine
// lists the job as not run when it plans the step.
func checkTransport(s string) error {
	if n := transportwire.Name(s); !transportwire.IsKnown(n) {
		return transportwire.UnknownError(n)
	}
	return nil
}

func checkRatio(s string) error {
	a, b, ok := strings.Cut(s, ":")
	x, e1 := strconv.Atoi(a)
	y, e2 := strconv.Atoi(b)
	if !ok || e1 != nil || e2 != nil || x < 0 || y < 0 || x+y == 0 {
		return fmt.Errorf("ratio %q: write SET:GET, e.g. 1:10 (one SET per ten GETs)", s)
	}
	return nil
}

// tmplLineRE finds the line number in a text/template parse error
// ("template: t:3: unexpected ...").
var tmplLineRE = regexp.MustCompile(`^template: [^:]*:(\d+):(?:\d+:)? ?(.*)$`)

// startedRE finds where an unclosed action began.
var startedRE = regexp.MustCompile(` started at t:(\d+)$`)

// checkTemplate parses text as a lab template starting at line of file and
// reports parse errors and references to unknown data or undeclared
// variables. It reports whether the template parsed.
func (p *parser) checkTemplate(file string, line int, text string, shell bool, keys []string, what string) bool {
	t, err := parseRaw("t", text, newExecEnv(shell))
	if err != nil {
		msg := err.Error()
		at := line
		if m := tmplLineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			at = line + n - 1
			msg = m[2]
		}
		// "unclosed action started at t:3" is about line 3, not the end.
		if m := startedRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			at = line + n - 1
			msg = strings.TrimSuffix(msg, m[0])
		}
		p.errAt(file, at, "%s: template error: %s", what, msg)
		return false
	}
	w := refWalker{p: p, file: file, line: line, text: text, shell: shell, keys: keys, what: what}
	for _, tt := range t.Templates() {
		if tt.Name() != "t" {
			p.errAt(file, line, "%s: {{define}} and {{block}} are not supported in lab templates", what)
			continue
		}
		if tt.Tree != nil {
			w.walk(tt.Root, true)
			if shell {
				cw := ctxWalker{refWalker: &w}
				cw.list(tt.Root, newShLexer())
			}
		}
	}
	return true
}

// checkTemplateFile checks a template file named by a step (template:,
// config:), with problems reported against that file's own lines.
func (p *parser) checkTemplateFile(n *yaml.Node, name string, keys []string, what string) {
	b, err := readLabFile(p.fsys, p.dir, name)
	if err != nil {
		p.errf(n, "%s: template %q: %v", what, name, cleanFSErr(err))
		return
	}
	file := name
	if !strings.HasPrefix(name, "assets/") {
		file = path.Join(path.Dir(p.file), name)
	}
	p.checkTemplate(file, 1, string(b), false, keys, what+" template "+name)
}

// refWalker checks the data references of a parsed template.
type refWalker struct {
	p     *parser
	file  string
	line  int
	text  string
	shell bool
	keys  []string
	what  string
}

func (w *refWalker) lineOf(pos parse.Pos) int {
	if int(pos) > len(w.text) {
		return w.line
	}
	return w.line + strings.Count(w.text[:pos], "\n")
}

// walk visits n; root says whether dot is still the template's data (it is
// not inside range and with).
func (w *refWalker) walk(n parse.Node, root bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			w.walk(c, root)
		}
	case *parse.ActionNode:
		w.walk(n.Pipe, root)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			w.walk(c, root)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			w.walk(a, root)
		}
	case *parse.IfNode:
		w.walk(n.Pipe, root)
		w.walk(n.List, root)
		w.walk(n.ElseList, root)
	case *parse.RangeNode:
		if len(n.Pipe.Cmds) == 1 && len(n.Pipe.Cmds[0].Args) == 1 {
			if num, ok := n.Pipe.Cmds[0].Args[0].(*parse.NumberNode); ok && num.IsInt && num.Int64 > MaxRangeIterations {
				w.p.errAt(w.file, w.lineOf(n.Pos), "%s: {{range %s}} loops more than the %d iterations a template may make", w.what, num.Text, MaxRangeIterations)
			}
		}
		w.walk(n.Pipe, root)
		w.walk(n.List, false)
		w.walk(n.ElseList, root)
	case *parse.WithNode:
		w.walk(n.Pipe, root)
		w.walk(n.List, false)
		w.walk(n.ElseList, root)
	case *parse.TemplateNode:
		w.p.errAt(w.file, w.lineOf(n.Pos), "%s: {{template}} is not supported in lab templates", w.what)
	case *parse.FieldNode:
		if root {
			w.ref(n.Ident, n.Pos)
		}
	case *parse.VariableNode:
		if len(n.Ident) > 1 && n.Ident[0] == "$" {
			w.ref(n.Ident[1:], n.Pos)
		}
	case *parse.ChainNode:
		w.walk(n.Node, root)
	case *parse.IdentifierNode:
		switch {
		case n.Ident == autoquoteFunc || n.Ident == rangeLimitFunc:
			w.p.errAt(w.file, w.lineOf(n.Pos), "%s: %s is applied for you; write nothing", w.what, n.Ident)
		case slices.Contains(unsupportedFuncs, n.Ident):
			w.p.errAt(w.file, w.lineOf(n.Pos), "%s: %s is not available in lab templates", w.what, n.Ident)
		}
	}
}

// ref checks one data reference such as .vars.instances or .host.
func (w *refWalker) ref(ident []string, pos parse.Pos) {
	if len(ident) == 0 {
		return
	}
	if !slices.Contains(w.keys, ident[0]) {
		msg := fmt.Sprintf("%s: unknown field .%s here (available: .%s)", w.what, ident[0], strings.Join(w.keys, ", ."))
		if w.p.lab.hasVar(ident[0]) {
			msg = fmt.Sprintf("%s: .%s is a variable: write {{.vars.%s}}", w.what, ident[0], ident[0])
		}
		w.p.errAt(w.file, w.lineOf(pos), "%s", msg)
		return
	}
	if ident[0] == DataVars && len(ident) > 1 {
		w.p.useVar(ident[1])
	}
	if ident[0] == DataVars && len(ident) > 1 && !w.p.lab.hasVar(ident[1]) {
		msg := fmt.Sprintf("%s: undefined variable %q", w.what, ident[1])
		if s := suggest.Closest(ident[1], w.p.lab.varNames()); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		w.p.errAt(w.file, w.lineOf(pos), "%s", msg)
	}
}

func (l *Lab) hasVar(name string) bool {
	_, ok := l.Var(name)
	return ok
}

func readAsset(name string) ([]byte, error) {
	return assets.ReadFile(name)
}

// useVar records that a variable is referenced somewhere.
func (p *parser) useVar(name string) {
	if p.used == nil {
		p.used = map[string]bool{}
	}
	p.used[name] = true
}

// implicitVars are variables the engine reads by name, so a lab may declare
// them without referencing them: the password the bench sends, and the tco
// inputs (which --set can then change).
func implicitVar(name string) bool {
	return name == "password" || slices.Contains(tco.InputNames, name)
}

// checkUnused reports variables nothing refers to: they would show up in
// the variables form and change nothing. It runs only on a lab with no
// other problem, because a template that does not parse hides its
// references and every variable in it would look unused.
func (p *parser) checkUnused() {
	if len(p.probs) > 0 {
		return
	}
	swept := map[string]bool{}
	for _, sw := range p.sweeps {
		if sw.name != "" && !p.used[sw.name] {
			p.errf(sw.node, "%s: sweeping %s changes nothing: no field, command or template uses {{.vars.%s}}", sw.what, sw.name, sw.name)
		}
		swept[sw.name] = true
	}
	for _, v := range p.lab.Variables {
		if !p.used[v.Name] && !implicitVar(v.Name) && !swept[v.Name] {
			p.errf(&yaml.Node{Line: v.Line}, "variable %s is declared but nothing uses it (write {{.vars.%s}} where it matters, or remove it)", v.Name, v.Name)
		}
	}
}
