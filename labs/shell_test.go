package labs

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

// hostileValues are --set values that break out of a wrongly quoted
// context: each would create a file named X in the working directory if
// it ran.
var hostileValues = []string{
	"$(touch X)",
	"`touch X`",
	`"; touch X; "`,
	`'; touch X; '`,
	"'",
	`"`,
	"a\nb; touch X",
	`\`,
	`a\`,
	`\$(touch X)`,
	"!",
	"!!",
	"",
	"  two  spaces  ",
	"*",
	"$HOME ${HOME} $((1+1))",
	"-n",
	"case",
	"x=y",
	"{a,b}",
	"~root",
	"EOFX",
	"\tEOF2",
	"root",
	"EOF)",
	"\x81\\\"",
}

// shells are the shells a command may meet: sh (dash here) runs local
// commands, and lab hosts' login shells run SSH commands, usually bash.
func shells(t *testing.T) []string {
	var out []string
	seen := map[string]bool{}
	for _, sh := range []string{"/bin/sh", "bash", "dash"} {
		p, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && !seen[real] {
			seen[real] = true
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Skip("no shell on this machine")
	}
	return out
}

// TestRenderedValuesArriveExactlyInEveryContext renders a hostile value in
// each shell context a lab author may write, runs the command with sh and
// bash in an empty directory, and checks it printed the value exactly and
// ran nothing (no file appeared).
func TestRenderedValuesArriveExactlyInEveryContext(t *testing.T) {
	contexts := []struct {
		name, tmpl string
		// want builds the expected output from the value.
		want func(v string) string
		// skip says a value cannot be expected to survive this context
		// unchanged for a reason of the shell's, not of quoting.
		skip func(v string) bool
	}{
		{name: "bare", tmpl: `printf '%s\n' {{.vars.v}}`},
		{name: "mid-word", tmpl: `printf '%s\n' pre{{.vars.v}}post`, want: func(v string) string { return "pre" + v + "post\n" }},
		{name: "double", tmpl: `printf '%s\n' "{{.vars.v}}"`},
		{name: "double issue-10", tmpl: `printf '%s\n' "dq=x{{.vars.v}}"`, want: func(v string) string { return "dq=x" + v + "\n" }},
		{name: "single", tmpl: `printf '%s\n' 'sq={{.vars.v}}'`, want: func(v string) string { return "sq=" + v + "\n" }},
		{name: "two in one word", tmpl: `printf '%s\n' "{{.vars.v}}"'{{.vars.v}}'{{.vars.v}}`, want: func(v string) string { return v + v + v + "\n" }},
		{name: "heredoc unquoted", tmpl: "cat <<EOF\n{{.vars.v}}\nEOF"},
		{name: "heredoc quoted", tmpl: "cat <<'EOF'\n{{.vars.v}}\nEOF"},
		{name: "heredoc quoted with dq", tmpl: "cat <<\"EOF\"\nv={{.vars.v}}\nEOF", want: func(v string) string { return "v=" + v + "\n" }},
		{name: "heredoc tabs", tmpl: "cat <<-EOF\n\t{{.vars.v}}\n\tEOF", want: func(v string) string { return strings.TrimLeft(v, "\t") + "\n" },
			skip: func(v string) bool { return strings.Contains(v, "\n") }}, // <<- strips the tabs of the value's own lines too
		{name: "heredoc with backslash in quoted delimiter", tmpl: "cat <<\"a\\b\"\n{{.vars.v}}\na\\b\nprintf '%s\\n' {{.vars.v}}", want: func(v string) string { return v + "\n" + v + "\n" }},
		{name: "tilde", tmpl: `printf '%s\n' ~{{.vars.v}}`, want: func(v string) string { return "~" + v + "\n" }},
		{name: "command substitution", tmpl: `printf '%s\n' "$(printf '%s' {{.vars.v}})"`},
		{name: "dq in command substitution in dq", tmpl: `printf '%s\n' "$(printf '%s' "{{.vars.v}}")"`},
		{name: "after a heredoc", tmpl: "cat <<EOF >/dev/null\n$HOME\nEOF\nprintf '%s\\n' \"{{.vars.v}}\""},
		{name: "redirect target", tmpl: `printf '%s\n' "{{.vars.v}}" > out.{{.vars.v}}.txt && cat out.{{.vars.v}}.txt && rm out.{{.vars.v}}.txt`,
			skip: func(v string) bool { return v == "" || strings.ContainsAny(v, "/\n") }},
	}
	for _, sh := range shells(t) {
		for _, c := range contexts {
			// Render every value first, then run them all in one shell
			// for this context (runBatch): a shell per value made this
			// test fork hundreds of shells.
			type tc struct{ v, cmd, want, skipWhy string }
			var cases []tc
			var cmds []string
			for _, v := range hostileValues {
				if c.skip != nil && c.skip(v) {
					continue
				}
				want := v + "\n"
				if c.want != nil {
					want = c.want(v)
				}
				cmd, err := RenderCommand(c.tmpl, Data(map[string]string{"v": v}, nil))
				if err != nil {
					// The two refusals a plain context may give: bytes
					// that are not UTF-8 where backslashes escape, and a
					// value that would end a here-document.
					if !utf8.ValidString(v) && strings.Contains(err.Error(), "UTF-8") ||
						strings.HasPrefix(v, "EOF") && strings.Contains(c.tmpl, "EOF") && strings.Contains(err.Error(), "here-document") {
						cases = append(cases, tc{v: v, skipWhy: "refused: " + err.Error()})
						continue
					}
					t.Errorf("%s/%s/%q: render: %v", sh, c.name, v, err)
					continue
				}
				cases = append(cases, tc{v: v, cmd: cmd, want: want})
				cmds = append(cmds, cmd)
			}
			runs := runBatch(t, sh, cmds, false)
			for _, k := range cases {
				if k.skipWhy != "" {
					continue
				}
				r := runs[0]
				runs = runs[1:]
				t.Run(sh+"/"+c.name+"/"+k.v, func(t *testing.T) {
					if r.code != 0 {
						t.Fatalf("%s -c %q: exit status %d\n%s", sh, k.cmd, r.code, r.stderr)
					}
					if r.stdout != k.want {
						t.Errorf("command %q printed %q, want %q", k.cmd, r.stdout, k.want)
					}
					if len(r.created) > 0 {
						t.Errorf("command %q created %s: the value ran", k.cmd, r.created[0])
					}
				})
			}
		}
	}
}

// shellRun is what one command of a batch did.
type shellRun struct {
	stdout, stderr string
	code           int
	// created lists what the command left in its own empty directory.
	created []string
}

// runBatch runs each command as `sh -c` would, but all of them in one
// shell, with no process of its own per command (so a context whose
// command is all builtins forks nothing): each through eval of its exact
// bytes (single-quoted, so the outer shell passes them through untouched
// and eval parses them as -c would), in an empty directory of its own,
// with its stdout, stderr and exit status sent to files of its own. A
// command whose quoting broke shows as its own output or a file in its
// directory; one that stops the shell (dash leaves on a syntax error in
// eval) leaves the rest without an exit status, which fails the test.
// combined sends stderr to stdout.
func runBatch(t *testing.T, sh string, cmds []string, combined bool) []shellRun {
	t.Helper()
	base := t.TempDir()
	var script strings.Builder
	for i, cmd := range cmds {
		d := filepath.Join(base, "d"+strconv.Itoa(i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		f := func(s string) string { return sq(filepath.Join(base, s+strconv.Itoa(i))) }
		errTo := "2>" + f("e")
		if combined {
			errTo = "2>&1"
		}
		fmt.Fprintf(&script, "cd %s || exit 97\n{ eval %s\n} >%s %s </dev/null\necho $? >%s\n", sq(d), sq(cmd), f("o"), errTo, f("c"))
	}
	var stderr bytes.Buffer
	run := exec.Command(sh, "-c", script.String())
	run.Dir, run.Stderr = base, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("%s running the batch: %v\n%s", sh, err, stderr.String())
	}
	read := func(name string, i int) string {
		b, err := os.ReadFile(filepath.Join(base, name+strconv.Itoa(i)))
		if err != nil && !(combined && name == "e") {
			t.Fatalf("%s: command %d (%q) left no %s: the batch broke off: %v\n%s", sh, i, cmds[i], name, err, stderr.String())
		}
		return string(b)
	}
	runs := make([]shellRun, len(cmds))
	for i := range cmds {
		r := &runs[i]
		r.stdout, r.stderr = read("o", i), read("e", i)
		code, err := strconv.Atoi(strings.TrimSpace(read("c", i)))
		if err != nil {
			t.Fatalf("%s: command %d (%q): exit status %q", sh, i, cmds[i], read("c", i))
		}
		r.code = code
		ents, _ := os.ReadDir(filepath.Join(base, "d"+strconv.Itoa(i)))
		for _, e := range ents {
			r.created = append(r.created, e.Name())
		}
	}
	return runs
}

// sq single-quotes s for sh: every byte inside single quotes is literal
// but the quote itself, which closes the quotes, is escaped and reopens them.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestRenderRefusesUnsafeContexts: where no quoting makes a value safe,
// the render fails with what to write instead, whatever the value (a safe
// looking one too: the next --set may not be).
func TestRenderRefusesUnsafeContexts(t *testing.T) {
	for _, c := range refusedContexts {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []string{"1", "$(touch X)"} {
				out, err := RenderCommand(c.tmpl, Data(map[string]string{"v": v}, nil))
				if err == nil {
					t.Fatalf("rendered %q for value %q; want a refusal mentioning %q", out, v, c.msg)
				}
				if !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "line ") {
					t.Errorf("error %q; want line N: ... %q", err, c.msg)
				}
			}
		})
	}
}

// refusedContexts are the places a value may not go, with a piece of the
// message that says why.
var refusedContexts = []struct{ name, tmpl, msg string }{
	{"backticks", "echo `echo {{.vars.v}}`", "write $( ) instead"},
	{"backticks in dq", "echo \"`echo {{.vars.v}}`\"", "write $( ) instead"},
	{"comment", "echo hi # {{.vars.v}}", "comment"},
	{"comment in $( )", "echo $(echo hi # {{.vars.v}}\n)", "comment"},
	{"arithmetic", "echo $(( {{.vars.v}} + 1 ))", "{{add .vars.x 1}}"},
	{"arithmetic in dq", `echo "$(( {{.vars.v}} ))"`, "{{add .vars.x 1}}"},
	{"old arithmetic", "echo $[ {{.vars.v}} ]", "arithmetic"},
	{"parameter expansion", `echo ${x:-{{.vars.v}}}`, "${...}"},
	{"heredoc delimiter", "cat <<{{.vars.v}}\nhi\n1", "here-document delimiter"},
	{"heredoc delimiter after blank", "cat << {{.vars.v}}\nhi\n1", "here-document delimiter"},
	{"ansi-c quotes", `echo $'a{{.vars.v}}'`, "$'...'"},
	{"after backslash", `echo \{{.vars.v}}`, "backslash"},
	{"after backslash in dq", `echo "\{{.vars.v}}"`, "backslash"},
	{"after dollar", `echo ${{.vars.v}}`, "right after $"},
	{"after dollar in dq", `echo "${{.vars.v}}"`, "right after $"},
	{"after $NAME", `echo "$HOME{{.vars.v}}"`, "${NAME}"},
	{"after dollar in heredoc", "cat <<EOF\n${{.vars.v}}\nEOF", "right after $"},
	{"expansion in heredoc", "cat <<EOF\n$(echo\n{{.vars.v}})\nEOF", "here-document"},
	{"case in $( )", "echo $(case a in a) echo {{.vars.v}};; esac)", "case inside $( )"},
	{"double paren", "((x = 1))\necho {{.vars.v}}", `"(("`},
	{"heredoc ended by EOF) in $( )", "x=$(cat <<EOF\nhi\nEOF)\necho {{.vars.v}}", "delimiter and )"},
	{"ansi-c then bare", "echo $'a\\'' {{.vars.v}}", "$'...'"},
	{"quotes in arithmetic", `echo $(( ")" ")" {{.vars.v}} ))`, "$(( ))"},
	{"delimiter with $", "cat <<$X\nhi\n$X\necho {{.vars.v}}", "holding $"},
	{"newline in $( ) on a heredoc line", "cat <<EOF $(echo\n)\n{{.vars.v}}\nEOF", "here-document"},
	{"continued heredoc line", "cat <<EOF\nEO\\\n{{.vars.v}}\nEOF", "here-document line ending in \\"},
}

// TestLintRefusesUnsafeContexts: the same places are problems at lint,
// at the line of the value, before anything runs.
func TestLintRefusesUnsafeContexts(t *testing.T) {
	for _, c := range refusedContexts {
		t.Run(c.name, func(t *testing.T) {
			probs := lintRun(t, c.tmpl)
			wantLine := runLine + strings.Count(c.tmpl[:strings.Index(c.tmpl, "{{")], "\n")
			for _, p := range probs {
				if p.Line == wantLine && strings.Contains(p.Msg, c.msg) {
					return
				}
			}
			t.Errorf("no problem at line %d mentioning %q; got:\n%v", wantLine, c.msg, probs)
		})
	}
}

// runLine is the line of lab.yaml where lintRun's template starts.
const runLine = 14

// lintRun lints a lab whose one step runs tmpl (a literal block starting
// at runLine) with a string variable v.
func lintRun(t *testing.T, tmpl string) Problems {
	t.Helper()
	var b strings.Builder
	b.WriteString(`id: x
title: X
summary: A tiny lab.
duration: 1m
roles: [local]
variables:
  v: {type: string, default: hi, description: V.}
steps:
  - id: s
    title: S
    kind: run
    run: |-
`)
	b.WriteString("      # line 13\n")
	for _, line := range strings.Split(tmpl, "\n") {
		b.WriteString("      " + line + "\n")
	}
	_, probs := Parse(fstest.MapFS{"x/lab.yaml": {Data: []byte(b.String())}}, "x", "lab.yaml")
	return probs
}

// TestLintAcceptsQuotedContexts: values inside quotes and here-documents
// are quoted for them, so lint has nothing to say (the issue's
// echo "dq=x{{.vars.msg}}" among them).
func TestLintAcceptsQuotedContexts(t *testing.T) {
	for _, tmpl := range []string{
		`echo "dq=x{{.vars.v}}"`,
		`echo 'sq={{.vars.v}}'`,
		"cat <<EOF\n{{.vars.v}}\nEOF",
		"cat <<'EOF'\n$(not run) {{.vars.v}}\nEOF",
		`echo "$(echo "{{.vars.v}}")" ${HOME} $((1 + 2)) # a comment`,
		`{{if .vars.v}}echo "{{.vars.v}}"{{else}}echo none{{end}}`,
	} {
		if probs := lintRun(t, tmpl); len(probs) > 0 {
			t.Errorf("%q: %v", tmpl, probs)
		}
	}
}

// TestLintBranchesMustAgree: a branch that opens a quote the other does not
// leaves the rest of the command with two readings; lint refuses it.
func TestLintBranchesMustAgree(t *testing.T) {
	for _, tmpl := range []string{
		`echo {{if .vars.v}}"{{end}}{{.vars.v}}"`,
		`echo {{range .vars.v}}'{{end}}`,
	} {
		probs := lintRun(t, tmpl)
		if len(probs) == 0 || !strings.Contains(probs.Error(), "different shell context") {
			t.Errorf("%q: want a problem about different shell contexts, got %v", tmpl, probs)
		}
	}
}

// TestRenderRefusesWhatCannotBeRepresented: a NUL fits no context, and a
// value that would end a here-document early is refused.
func TestRenderRefusesWhatCannotBeRepresented(t *testing.T) {
	for _, c := range []struct{ tmpl, v, msg string }{
		{`echo {{.vars.v}}`, "a\x00b", "NUL"},
		{`echo "{{.vars.v}}"`, "\x00", "NUL"},
		{"cat <<EOF\n{{.vars.v}}\nEOF", "EOF", "here-document"},
		{"cat <<EOF\nx{{.vars.v}}\nrm -rf /tmp/nothing\nEOF", "\nEOF", "here-document"},
		{"cat <<-EOF\n{{.vars.v}}\nEOF", "\t\tEOF", "here-document"},
		{"cat <<'EOF'\n{{.vars.v}}", "EOF", "here-document"},
		{"cat <<EOF; echo {{.vars.v}}\nbody\nEOF", "a\nb", "newline"},
		{`echo "{{.vars.v}}"`, "\x81\\", "UTF-8"},
		{"x=$(cat <<EOF\n{{.vars.v}}\nEOF\n)", "EOF)", "here-document"},
	} {
		out, err := RenderCommand(c.tmpl, Data(map[string]string{"v": c.v}, nil))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q with %q: got %q, %v; want an error about %s", c.tmpl, c.v, out, err, c.msg)
		}
	}
}

// TestTextTemplatesAreNotShellQuoted: config files and fields are not
// shell; their values go in as they are.
func TestTextTemplatesAreNotShellQuoted(t *testing.T) {
	got, err := RenderText("# {{.vars.v}}\nname \"{{.vars.v}}\" `{{.vars.v}}` $(( {{.vars.v}} ))", Data(map[string]string{"v": "a'b $x"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := "# a'b $x\nname \"a'b $x\" `a'b $x` $(( a'b $x ))"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRandomValuesArriveExactly throws random strings of shell
// metacharacters at the quoted contexts, through sh and bash: the table
// above holds the cases we thought of, this the ones we did not.
func TestRandomValuesArriveExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few thousand shells")
	}
	alpha := []byte("$`(){}'\"\\!;&|<>*?[]~#\n\t =%^,@abEOF-/.:+")
	contexts := []struct{ tmpl, pre, post string }{
		{`printf '%s|\n' {{.vars.v}}`, "", "|\n"},
		{`printf '%s\n' a{{.vars.v}}b`, "a", "b\n"},
		{`printf '%s|\n' "{{.vars.v}}"`, "", "|\n"},
		{`printf '%s|\n' 'x{{.vars.v}}'`, "x", "|\n"},
		{"cat <<EOF\n{{.vars.v}}|\nEOF", "", "|\n"},
		{"cat <<'EOF'\n{{.vars.v}}|\nEOF", "", "|\n"},
		{`printf '%s\n' "$(printf '%s|' {{.vars.v}})"`, "", "|\n"},
		{`printf '%s\n' "$(printf '%s|' "{{.vars.v}}")"`, "", "|\n"},
	}
	sh := shells(t)
	r := rand.New(rand.NewSource(1))
	// The same 400 values as one shell per value ran, drawn in the same
	// order; then one shell per shell and context runs its share
	// (runBatch).
	type tc struct{ v, cmd, want string }
	byContext := make([][]tc, len(contexts))
	for i := 0; i < 400; i++ {
		b := make([]byte, 1+r.Intn(12))
		for k := range b {
			b[k] = alpha[r.Intn(len(alpha))]
		}
		v, c := string(b), contexts[i%len(contexts)]
		cmd, err := RenderCommand(c.tmpl, Data(map[string]string{"v": v}, nil))
		if err != nil {
			if strings.Contains(c.tmpl, "EOF") && strings.Contains(err.Error(), "here-document") {
				continue
			}
			t.Fatalf("%q with %q: %v", c.tmpl, v, err)
		}
		byContext[i%len(contexts)] = append(byContext[i%len(contexts)], tc{v, cmd, c.pre + v + c.post})
	}
	for _, s := range sh {
		for _, cases := range byContext {
			cmds := make([]string, len(cases))
			for i, k := range cases {
				cmds[i] = k.cmd
			}
			for i, run := range runBatch(t, s, cmds, true) {
				k := cases[i]
				if run.stdout != k.want {
					t.Errorf("%s -c %q printed %q, want %q", s, k.cmd, run.stdout, k.want)
				}
				if len(run.created) > 0 {
					t.Fatalf("%s -c %q created %s", s, k.cmd, run.created[0])
				}
			}
		}
	}
}

// TestRunBatchSeesWhatEachCommandDid: the batch keeps each command's
// output, exit status and files apart, so a value that broke out shows
// against that value, in every shell.
func TestRunBatchSeesWhatEachCommandDid(t *testing.T) {
	for _, sh := range shells(t) {
		runs := runBatch(t, sh, []string{
			"touch X",
			"printf 'a\\n'; printf e >&2; false",
			"cat <<EOF\n$PWD\nEOF",
			"printf '%s\\n' \"$(printf b)\"",
		}, false)
		if len(runs) != 4 {
			t.Fatalf("%s: %d runs, want 4", sh, len(runs))
		}
		if got := runs[0].created; len(got) != 1 || got[0] != "X" || runs[0].code != 0 {
			t.Errorf("%s: touch X: created %v, status %d; want [X], 0", sh, got, runs[0].code)
		}
		if r := runs[1]; r.stdout != "a\n" || r.stderr != "e" || r.code != 1 || len(r.created) != 0 {
			t.Errorf("%s: got %+v; want stdout a, stderr e, status 1, nothing created", sh, r)
		}
		if r := runs[2]; !strings.HasSuffix(r.stdout, "/d2\n") || len(runs[1].created) != 0 {
			t.Errorf("%s: here-document printed %q; want the command's own directory d2", sh, r.stdout)
		}
		if r := runs[3]; r.stdout != "b\n" || r.code != 0 {
			t.Errorf("%s: command substitution printed %q, status %d; want b, 0", sh, r.stdout, r.code)
		}
	}
}
