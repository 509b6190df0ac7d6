package template_test

import (
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/kinds/template"
)

const keysHead = `id: keys
title: Keys
summary: template steps
duration: 1m
roles: [local]
steps:
`

// TestKeys: the kind reads its keys into its Spec (mode 0644 unless
// given), and Encode writes them back so that they read the same.
func TestKeys(t *testing.T) {
	l := kindtest.Lab(t, keysHead+`  - id: a
    title: A
    kind: template
    template: a.tmpl
    dest: "{{.workdir}}/a.conf"
  - id: b
    title: B
    kind: template
    template: a.tmpl
    dest: /etc/b.conf
    mode: "0600"
    sudo: true
`, map[string]string{"a.tmpl": "host {{.host}}\n"})
	want := []template.Spec{{Source: "a.tmpl", Dest: "{{.workdir}}/a.conf", Mode: 0o644}, {Source: "a.tmpl", Dest: "/etc/b.conf", Mode: fs.FileMode(0o600)}}
	for i, w := range want {
		got, ok := l.Steps[i].Spec.(*template.Spec)
		if !ok || *got != w {
			t.Errorf("step %s: Spec %#v, want %#v", l.Steps[i].ID, l.Steps[i].Spec, w)
		}
	}
	if !l.Steps[1].Sudo {
		t.Error("sudo: (a command key) was not read")
	}
	b := kindtest.RoundTrip(t, l)
	for i := range l.Steps {
		if !reflect.DeepEqual(b.Steps[i].Spec, l.Steps[i].Spec) {
			t.Errorf("step %s: %#v after the round trip, %#v before", l.Steps[i].ID, b.Steps[i].Spec, l.Steps[i].Spec)
		}
	}
}

// TestKeyProblems: what the kind checks, each at its line; a problem in
// the template file is at the file's own line.
func TestKeyProblems(t *testing.T) {
	got := kindtest.Problems(t, keysHead+`  - id: nodest
    title: No dest
    kind: template
    template: missing.tmpl
  - id: mode
    title: Bad mode
    kind: template
    template: broken.tmpl
    dest: "/tmp/{{.vars.nope}}"
    mode: "999"
  - id: notemplate
    title: No template
    kind: template
    dest: /tmp/x
    record: perftest
`, map[string]string{"broken.tmpl": "a\nb\n{{.host\n"})
	want := []string{
		"broken.tmpl:3: step mode template broken.tmpl: template error: unclosed action",
		"lab.yaml:7: step nodest: missing required key \"dest\"",
		"lab.yaml:10: step nodest: template \"missing.tmpl\": file does not exist",
		"lab.yaml:15: step mode dest: undefined variable \"nope\"",
		"lab.yaml:16: step mode: mode \"999\": write an octal file mode such as 0644",
		"lab.yaml:17: step notemplate: missing required key \"template\"",
		"lab.yaml:21: step notemplate: unknown key \"record\" (allowed: confirm, dest, doc, hint, id, kind, mode, on, skip_if, sudo, template, timeout, title, verify)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
