package labs

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

const optionalRoleLab = `id: opt
title: Optional role
summary: a role an inventory may leave out
duration: 1m
roles:
  client: Runs the load.
  server:
    description: Runs the servers.
  extra:
    description: A third kind of server, when there is one.
    optional: %s
steps:
  - id: hello
    title: Hello
    kind: run
    on: [client, server, extra]
    run: [echo hello]
`

func parseOptionalRoleLab(t *testing.T, optional string) (*Lab, Problems) {
	t.Helper()
	src := strings.Replace(optionalRoleLab, "%s", optional, 1)
	return Parse(fstest.MapFS{"opt/lab.yaml": {Data: []byte(src)}}, "opt", "lab.yaml")
}

// TestOptionalRole reads a role declared {description, optional}, beside
// the plain name: description form, writes it back with Encode, and leaves
// it out of MissingRoles when no host plays it.
func TestOptionalRole(t *testing.T) {
	l, probs := parseOptionalRoleLab(t, "true")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	want := []Role{
		{Name: "client", Description: "Runs the load."},
		{Name: "server", Description: "Runs the servers."},
		{Name: "extra", Description: "A third kind of server, when there is one.", Optional: true},
	}
	for i, r := range l.Roles {
		r.Line = 0
		if i >= len(want) || r != want[i] {
			t.Errorf("role %d = %+v, want %+v", i, r, want[min(i, len(want)-1)])
		}
	}
	if !l.OptionalRole("extra") || l.OptionalRole("server") || l.OptionalRole("nope") {
		t.Errorf("OptionalRole: extra %v, server %v, nope %v; want true, false, false", l.OptionalRole("extra"), l.OptionalRole("server"), l.OptionalRole("nope"))
	}
	if got := l.MissingRoles(map[string][]string{"client": {"c1"}}); !slices.Equal(got, []string{"server"}) {
		t.Errorf("MissingRoles = %v, want [server] (extra is optional)", got)
	}
	if got := l.MissingRoles(map[string][]string{"client": {"c1"}, "server": {"s1"}}); len(got) != 0 {
		t.Errorf("MissingRoles = %v, want none", got)
	}

	out, err := Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	l2, probs := Parse(fstest.MapFS{"opt/lab.yaml": {Data: out}}, "opt", "lab.yaml")
	if len(probs) > 0 {
		t.Fatalf("encoded lab: %v\n%s", probs, out)
	}
	if !l2.OptionalRole("extra") || l2.OptionalRole("server") || l2.Roles[1].Description != "Runs the servers." {
		t.Errorf("encoded and parsed again, the roles are %+v:\n%s", l2.Roles, out)
	}

	l, probs = parseOptionalRoleLab(t, "false")
	if len(probs) > 0 || l.OptionalRole("extra") {
		t.Errorf("optional: false: problems %v, optional %v", probs, l.OptionalRole("extra"))
	}
}

// TestOptionalRoleProblems: a misspelt key or a value that is no bool is
// reported at its line.
func TestOptionalRoleProblems(t *testing.T) {
	_, probs := parseOptionalRoleLab(t, "maybe")
	if !strings.Contains(probs.Error(), "lab.yaml:11:") || !strings.Contains(probs.Error(), "optional") {
		t.Errorf("optional: maybe: problems %v, want one at line 11 about optional", probs)
	}
	src := strings.Replace(strings.Replace(optionalRoleLab, "%s", "true", 1), "description: Runs the servers.", "descripton: Runs the servers.", 1)
	_, probs = Parse(fstest.MapFS{"opt/lab.yaml": {Data: []byte(src)}}, "opt", "lab.yaml")
	if !strings.Contains(probs.Error(), `"description"`) {
		t.Errorf("misspelt description: problems %v, want the closest key suggested", probs)
	}
}
