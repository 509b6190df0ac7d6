package labs

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

// Templates in lab files are Go text/template. Two contexts:
//
//   - Shell context (run, skip_if, verify.run): every {{...}} that prints
//     something is quoted on the way out for the shell context it lands in
//     (bare word, "...", '...', here-document body), whatever it prints.
//     The loader appends an "autoquote" call to the pipeline of every
//     action, so an author cannot forget it and a hostile --set value
//     (x; rm -rf /) stays literal text. Where no quoting is safe (comments,
//     arithmetic, backticks, ...) the value is refused. Literal template
//     text is not touched.
//   - Text context (template files, deploy config, Value fields, paths):
//     values are printed as they are; config files are not shell.
//
// The data every template sees is a map; see DataKeys for the keys.

// The keys of the template data. .vars is always there; the engine provides
// the others where they make sense (see labs/README.md).
const (
	// DataVars is the map of variables: {{.vars.instances}}.
	DataVars = "vars"
	// DataLab is the lab id.
	DataLab = "lab"
	// DataHost is the inventory name of the host the command runs on.
	DataHost = "host"
	// DataRole is the role the host plays in this step.
	DataRole = "role"
	// DataWorkdir is the lab's working directory on the host.
	DataWorkdir = "workdir"
	// DataDpulab is the path of the dpulab binary on the host.
	DataDpulab = "dpulab"
	// DataLabels is the inventory labels of the host the command runs on
	// (a map, empty without an inventory or labels): {{index .labels
	// "rdma_device"}} is "" when the host has no such label.
	DataLabels = "labels"
	// DataGroup is the deploy group (deploy config templates).
	DataGroup = "group"
	// DataInstance is the instance number, 0-based (deploy config).
	DataInstance = "instance"
	// DataPort is the instance's port (deploy config).
	DataPort = "port"
	// DataBind is the listen address (deploy config).
	DataBind = "bind"
	// DataSocket is the instance's Unix socket path (deploy config).
	DataSocket = "socket"
	// DataTransport is tcp, unix or rdma (deploy config).
	DataTransport = "transport"
	// DataDir is the instance's own directory (deploy config).
	DataDir = "dir"
)

// commandKeys are the data keys of shell commands and template files.
var commandKeys = []string{DataVars, DataLab, DataHost, DataRole, DataWorkdir, DataDpulab, DataLabels}

// configKeys are the data keys of a deploy step's config template.
var configKeys = append(append([]string{}, commandKeys...), DataGroup, DataInstance, DataPort, DataBind, DataSocket, DataTransport, DataDir)

// valueKeys are the data keys of Value fields: variables only, because a
// field is resolved before any host is known.
var valueKeys = []string{DataVars}

// autoquoteFunc is the name of the function appended to every printing
// action of a shell-context template; rangeLimitFunc is appended to every
// {{range}}'s pipeline in both contexts.
const (
	autoquoteFunc  = "autoquote"
	rangeLimitFunc = "rangelimit"
)

// funcs are the functions lab templates may call, bound to one execution.
func funcs(env *execEnv) template.FuncMap {
	m := template.FuncMap{
		"add": func(a, b any) (int64, error) { return arith(a, b, func(x, y int64) int64 { return x + y }) },
		"sub": func(a, b any) (int64, error) { return arith(a, b, func(x, y int64) int64 { return x - y }) },
		"mul": func(a, b any) (int64, error) { return arith(a, b, func(x, y int64) int64 { return x * y }) },
		"lower": func(s string) (string, error) {
			if err := env.charge(len(s)); err != nil {
				return "", err
			}
			return strings.ToLower(s), nil
		},
		"upper": func(s string) (string, error) {
			if err := env.charge(len(s)); err != nil {
				return "", err
			}
			return strings.ToUpper(s), nil
		},
		"join": func(sep string, parts []string) (string, error) {
			n := len(sep) * len(parts)
			for _, p := range parts {
				n += len(p)
			}
			if err := env.charge(n); err != nil {
				return "", err
			}
			return strings.Join(parts, sep), nil
		},
		"bytes": func(v any) (int64, error) { return ParseSize(fmt.Sprint(v)) },
		"seconds": func(v any) (int64, error) {
			d, err := time.ParseDuration(fmt.Sprint(v))
			return int64(d / time.Second), err
		},
		// The builtins that build strings are replaced by bounded ones, so
		// a doubling loop ({{$a = print $a $a}}) hits the cap, not the
		// machine's memory.
		"print":   func(args ...any) (string, error) { return env.sprint(fmt.Sprint, args) },
		"println": func(args ...any) (string, error) { return env.sprint(fmt.Sprintln, args) },
		"printf":  env.sprintf,
		"quote": func(v any) (string, error) {
			s, err := env.str(v)
			if err != nil || env.shell {
				// In a command every value is quoted for where it lands;
				// quote is kept so older labs still read, and changes nothing.
				return s, err
			}
			if err := env.charge(len(s) + 2); err != nil {
				return "", err
			}
			return ShellQuote(s), nil
		},
		autoquoteFunc:  env.autoquote,
		rangeLimitFunc: env.rangeLimit,
	}
	for _, name := range unsupportedFuncs {
		m[name] = func(...any) (string, error) {
			return "", fmt.Errorf("%s is not available in lab templates", name)
		}
	}
	return m
}

// unsupportedFuncs are text/template builtins lab templates may not call:
// escapers for other languages (their output can be several times their
// input, and they are not shell quoting) and call.
var unsupportedFuncs = []string{"html", "js", "urlquery", "call"}

// arith does integer arithmetic on template values, which arrive as strings
// (variables) or integers (instance, port).
func arith(a, b any, f func(x, y int64) int64) (int64, error) {
	x, err := toInt(a)
	if err != nil {
		return 0, err
	}
	y, err := toInt(b)
	if err != nil {
		return 0, err
	}
	return f(x, y), nil
}

func toInt(v any) (int64, error) {
	switch n := v.(type) {
	case int:
		return int64(n), nil
	case int64:
		return n, nil
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not an integer", n)
		}
		return i, nil
	default:
		return toInt(fmt.Sprint(v))
	}
}

// safeWord matches strings that need no quoting in a POSIX shell. Keeping
// them bare makes --dry-run output read like commands a person would type.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// ShellQuote returns s as one POSIX shell word: unchanged when it holds only
// characters that are never special, otherwise in single quotes with every
// embedded single quote closed, escaped and reopened (quote, backslash,
// quote, quote).
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// parseTemplate parses text as a lab template with the functions of env.
// In shell context every printing action gets "| autoquote" appended, so an
// author cannot forget it; every {{range}} gets "| rangelimit".
func parseTemplate(name, text string, env *execEnv) (*template.Template, error) {
	t, err := parseRaw(name, text, env)
	if err != nil {
		return nil, err
	}
	for _, tt := range t.Templates() {
		if tt.Name() != name {
			return nil, fmt.Errorf("{{define}} and {{block}} are not supported in lab templates")
		}
		if tt.Tree != nil && tt.Root != nil {
			if err := rewrite(tt.Tree, tt.Root, env.shell); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// parseRaw parses text as it is written, for lint to read.
func parseRaw(name, text string, env *execEnv) (*template.Template, error) {
	return template.New(name).Funcs(funcs(env)).Option("missingkey=error").Parse(text)
}

// rewrite appends autoquote (shell context) to every action that prints and
// rangelimit to every range; it refuses {{template}}, which could recurse.
func rewrite(tree *parse.Tree, n parse.Node, shell bool) error {
	appendFunc := func(pipe *parse.PipeNode, name string, pos parse.Pos) {
		id := parse.NewIdentifier(name).SetTree(tree).SetPos(pos)
		pipe.Cmds = append(pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{id}})
	}
	var err error
	walkList := func(ls ...*parse.ListNode) {
		for _, l := range ls {
			if e := rewrite(tree, l, shell); e != nil && err == nil {
				err = e
			}
		}
	}
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if e := rewrite(tree, c, shell); e != nil {
				return e
			}
		}
	case *parse.ActionNode:
		// An action that declares or assigns variables prints nothing.
		if shell && len(n.Pipe.Decl) == 0 {
			appendFunc(n.Pipe, autoquoteFunc, n.Pos)
		}
	case *parse.IfNode:
		walkList(n.List, n.ElseList)
	case *parse.RangeNode:
		appendFunc(n.Pipe, rangeLimitFunc, n.Pos)
		walkList(n.List, n.ElseList)
	case *parse.WithNode:
		walkList(n.List, n.ElseList)
	case *parse.TemplateNode:
		return fmt.Errorf("{{template}} is not supported in lab templates")
	}
	return err
}

// Data builds the data a template sees: .vars plus the engine's extra keys
// (host, role, port, ...).
func Data(vars map[string]string, extra map[string]any) map[string]any {
	d := make(map[string]any, len(extra)+1)
	for k, v := range extra {
		d[k] = v
	}
	if vars == nil {
		vars = map[string]string{}
	}
	d[DataVars] = vars
	return d
}

// RenderCommand renders a shell-context template (a run command, skip_if,
// verify.run): every substituted value is quoted for the shell context it
// lands in (see shell.go), or the render fails saying why it cannot be.
func RenderCommand(text string, data map[string]any) (string, error) {
	return render(text, data, true)
}

// RenderText renders a text-context template (a config file, a path, a
// Value): values are substituted as they are.
func RenderText(text string, data map[string]any) (string, error) {
	return render(text, data, false)
}

func render(text string, data map[string]any, shell bool) (string, error) {
	env := newExecEnv(shell)
	t, err := parseTemplate("t", text, env)
	if err != nil {
		return "", err
	}
	if err := t.Execute(env, data); err != nil {
		return "", env.explain(err)
	}
	if shell {
		if err := env.lx.finish(); err != nil {
			return "", fmt.Errorf("at the end: %w", err)
		}
	}
	return env.out.String(), nil
}

// Resolve renders the Value with the run's variables.
func (v Value) Resolve(vars map[string]string) (string, error) {
	if !strings.Contains(string(v), "{{") {
		return strings.TrimSpace(string(v)), nil
	}
	s, err := RenderText(string(v), Data(vars, nil))
	if err != nil {
		return "", fmt.Errorf("%q: %w", string(v), err)
	}
	return strings.TrimSpace(s), nil
}

// IsSet reports whether the field was given in the lab file.
func (v Value) IsSet() bool { return strings.TrimSpace(string(v)) != "" }

// String resolves the Value, or returns def when it is not set.
func (v Value) String(vars map[string]string, def string) (string, error) {
	if !v.IsSet() {
		return def, nil
	}
	return v.Resolve(vars)
}

// Int resolves the Value as a decimal integer, or returns def.
func (v Value) Int(vars map[string]string, def int) (int, error) {
	if !v.IsSet() {
		return def, nil
	}
	s, err := v.Resolve(vars)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return n, nil
}

// Float resolves the Value as a decimal number, or returns def.
func (v Value) Float(vars map[string]string, def float64) (float64, error) {
	if !v.IsSet() {
		return def, nil
	}
	s, err := v.Resolve(vars)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

// Duration resolves the Value as a Go duration (5s, 500ms), or returns def.
func (v Value) Duration(vars map[string]string, def time.Duration) (time.Duration, error) {
	if !v.IsSet() {
		return def, nil
	}
	s, err := v.Resolve(vars)
	if err != nil {
		return 0, err
	}
	return ParseDuration(s)
}

// Size resolves the Value as a byte count (32, 4KiB, 1MiB), or returns def.
func (v Value) Size(vars map[string]string, def int64) (int64, error) {
	if !v.IsSet() {
		return def, nil
	}
	s, err := v.Resolve(vars)
	if err != nil {
		return 0, err
	}
	return ParseSize(s)
}

// Bool resolves the Value as true/false (also yes/no, on/off), or returns
// def.
func (v Value) Bool(vars map[string]string, def bool) (bool, error) {
	if !v.IsSet() {
		return def, nil
	}
	s, err := v.Resolve(vars)
	if err != nil {
		return false, err
	}
	return ParseBool(s)
}

// ParseDuration reads a Go duration; a bare number is seconds, because
// trainers write "duration: 10" and mean it.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n < 0 || n > 1e9 {
			return 0, fmt.Errorf("duration %q out of range", s)
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write e.g. 500ms, 5s, 2m)", s)
	}
	return d, nil
}

// ParseBool reads true/false, yes/no, on/off.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (write true or false)", s)
}

var sizeRE = regexp.MustCompile(`^(\d+)\s*([A-Za-z]*)$`)

// ParseSize reads a byte count: a plain number, or one with a unit. K, KB,
// KiB and k all mean 1024 (as redis.conf does for "kb"); likewise M and G.
func ParseSize(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size (write e.g. 32, 4KiB, 1MiB)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	var mult int64
	switch strings.ToLower(m[2]) {
	case "", "b":
		mult = 1
	case "k", "kb", "kib":
		mult = 1 << 10
	case "m", "mb", "mib":
		mult = 1 << 20
	case "g", "gb", "gib":
		mult = 1 << 30
	default:
		return 0, fmt.Errorf("%q: unknown unit %q (use B, KiB, MiB or GiB)", s, m[2])
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}
