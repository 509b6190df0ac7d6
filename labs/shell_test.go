package labs

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
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
			for _, v := range hostileValues {
				if c.skip != nil && c.skip(v) {
					continue
				}
				want := v + "\n"
				if c.want != nil {
					want = c.want(v)
				}
				t.Run(sh+"/"+c.name+"/"+v, func(t *testing.T) {
					cmd, err := RenderCommand(c.tmpl, Data(map[string]string{"v": v}, nil))
					if err != nil {
						// The two refusals a plain context may give: bytes
						// that are not UTF-8 where backslashes escape, and a
						// value that would end a here-document.
						if !utf8.ValidString(v) && strings.Contains(err.Error(), "UTF-8") ||
							strings.HasPrefix(v, "EOF") && strings.Contains(c.tmpl, "EOF") && strings.Contains(err.Error(), "here-document") {
							return
						}
						t.Fatalf("render: %v", err)
					}
					dir := t.TempDir()
					var out, stderr bytes.Buffer
					run := exec.Command(sh, "-c", cmd)
					run.Dir, run.Stdout, run.Stderr = dir, &out, &stderr
					if err := run.Run(); err != nil {
						t.Fatalf("%s -c %q: %v\n%s", sh, cmd, err, stderr.String())
					}
					if out.String() != want {
						t.Errorf("command %q printed %q, want %q", cmd, out.String(), want)
					}
					if ents, _ := os.ReadDir(dir); len(ents) > 0 {
						t.Errorf("command %q created %s: the value ran", cmd, ents[0].Name())
					}
				})
			}
		}
	}
}

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
	dir := t.TempDir()
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
		for _, s := range sh {
			var out bytes.Buffer
			run := exec.Command(s, "-c", cmd)
			run.Dir, run.Stdout, run.Stderr = dir, &out, &out
			_ = run.Run()
			if want := c.pre + v + c.post; out.String() != want {
				t.Errorf("%s -c %q printed %q, want %q", s, cmd, out.String(), want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Fatalf("%s -c %q created %s", s, cmd, ents[0].Name())
			}
		}
	}
}
