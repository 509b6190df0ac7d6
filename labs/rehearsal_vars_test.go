package labs_test

import (
	"strings"
	"testing"
	"testing/fstest"

	. "github.com/dpulab/dpulab/labs"
)

const rvLab = `id: rv
title: Rehearsal values and a swept list
summary: variables with rehearsal values, a sweep over a variable's list
duration: 1m
roles:
  client: load
  server: servers
variables:
  iface:
    type: string
    default: ens192
    pattern: '[a-z0-9]+'
    description: interface
    rehearsal: IFACE_REHEARSAL
  instances:
    type: int
    default: 1
    min: 1
    max: 8
    description: instances
  sweep:
    type: string
    default: "SWEEP_DEFAULT"
    description: instances swept
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: server
    group: g
    instances: "{{.vars.instances}}"
    port: 7000
  - id: nic
    title: NIC
    kind: check
    on: server
    verify:
      run: ethtool -i {{.vars.iface}}
  - id: compare
    title: Compare
    kind: compare
    on: client
    target: g
    duration: 1s
    runs: 1
    variants:
      - label: a
      - label: b
    sweep:
      var: instances
      values: "{{.vars.sweep}}"
`

func loadRV(rehearsal, sweep string) (*Lab, error) {
	y := strings.NewReplacer("IFACE_REHEARSAL", rehearsal, "SWEEP_DEFAULT", sweep).Replace(rvLab)
	return Load(fstest.MapFS{"rv/lab.yaml": {Data: []byte(y)}}, "rv")
}

// TestRehearsalValuesAndSweepList: a variable's rehearsal value is
// checked as its default is (default-route only for a string or an int),
// and a sweep may list a variable's values, each checked against the
// swept variable; the lab round-trips through Encode.
func TestRehearsalValuesAndSweepList(t *testing.T) {
	l, err := loadRV(RehearsalDefaultRoute, "1,2, 4 8")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := l.Var("iface"); v.Rehearsal != RehearsalDefaultRoute {
		t.Errorf("iface rehearsal %q", v.Rehearsal)
	}
	sw := l.Step("compare").Compare.Sweep
	pts, err := sw.Points(map[string]string{"sweep": "1,2, 4 8"})
	if err != nil || strings.Join(pts, "|") != "1|2|4|8" {
		t.Errorf("points %q, %v", pts, err)
	}
	if _, err := sw.Points(map[string]string{"sweep": " , "}); err == nil {
		t.Error("an empty list gives a sweep")
	}
	if _, err := loadRV("eth0", "1,9"); err == nil || !strings.Contains(err.Error(), "sweep values") {
		t.Errorf("a default sweep value above the swept variable's max: %v", err)
	}
	if _, err := loadRV(`"bad name!"`, "1"); err == nil {
		t.Error("a rehearsal value that is not a valid value of the variable was accepted")
	}
	b, err := Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, "rehearsal: default-route") || !strings.Contains(s, `values: '{{.vars.sweep}}'`) && !strings.Contains(s, `values: "{{.vars.sweep}}"`) {
		t.Errorf("encoded lab lacks the rehearsal value or the sweep's list:\n%s", s)
	}
}
