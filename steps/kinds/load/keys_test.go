package load_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	_ "github.com/dpulab/dpulab/steps/kinds/load"
)

const keysHead = `id: keys
title: Keys
summary: bench and compare steps
duration: 1h
roles:
  client: load
  server: servers
variables:
  n:
    type: int
    default: 2
    min: 1
    max: 8
    description: instances
  ns:
    type: string
    default: "1,2"
    description: the instances swept
steps:
  - id: servers
    title: Servers
    kind: deploy
    on: server
    instances: "{{.vars.n}}"
  - id: local
    title: Local servers
    kind: deploy
    on: client
    transport: unix
`

// TestKeys: the kinds read the load profile, the capacity search, the
// variants (with a deploy override, settings and an emulated network
// path) and the sweep into Step.Bench and Step.Compare, and Encode writes
// them back so that they read the same.
func TestKeys(t *testing.T) {
	l := kindtest.Lab(t, keysHead+`  - id: bench
    title: Bench
    kind: bench
    on: client
    target: local
    clients: "{{.vars.n}}"
    pipeline: 16
    ratio: "1:10"
    data_size: 1KiB
    duration: 10s
    warmup: 1s
    requests: 0
    rate: 1000
    runs: 2
    key_maximum: 1000
    prefill: true
    transport: unix
    clients_hosts: 1
    capacity: "p99<=1ms"
  - id: compare
    title: Compare
    kind: compare
    on: client
    target: servers
    capacity: {objective: "p99.9<=500us", precision: 0.02, start_rate: 5000, max_rate: 100000, mode: instead}
    variants:
      - label: Plain
        description: as deployed
      - label: Bigger
        on: server
        deploy:
          instances: 4
          port: 7500
          settings: {maxmemory: 1gb}
        settings: {appendonly: "no"}
      - label: Firewalled
        group: local
        netpath: firewall
        firewall_rules: 100
    sweep:
      var: n
      values: [1, 2]
  - id: swept
    title: Swept from a variable
    kind: compare
    on: client
    target: servers
    variants:
      - label: a
      - label: b
    sweep:
      var: n
      values: "{{.vars.ns}}"
`, nil)
	b := l.Step("bench").Bench
	want := labs.BenchSpec{Target: "local", Clients: "{{.vars.n}}", Pipeline: "16", Ratio: "1:10", DataSize: "1KiB", Duration: "10s", Warmup: "1s",
		Requests: "0", Rate: "1000", Runs: "2", KeyMaximum: "1000", Prefill: "true", Transport: "unix", ClientsHosts: "1",
		Capacity: &labs.CapacitySpec{Objective: "p99<=1ms"}}
	if !reflect.DeepEqual(*b, want) {
		t.Errorf("bench = %+v, want %+v", *b, want)
	}
	c := l.Step("compare")
	if got := *c.Bench.Capacity; got != (labs.CapacitySpec{Objective: "p99.9<=500us", Precision: "0.02", StartRate: "5000", MaxRate: "100000", Instead: true}) {
		t.Errorf("compare capacity = %+v", got)
	}
	vs := c.Compare.Variants
	if len(vs) != 3 || vs[0].Group != "servers" || vs[0].Description != "as deployed" ||
		vs[1].On != "server" || vs[1].Deploy == nil || vs[1].Deploy.Instances != "4" || vs[1].Deploy.Port != "7500" ||
		!reflect.DeepEqual(vs[1].Deploy.Settings, []labs.Setting{{Name: "maxmemory", Value: "1gb"}}) ||
		!reflect.DeepEqual(vs[1].Settings, []labs.Setting{{Name: "appendonly", Value: "no"}}) ||
		vs[2].Group != "local" || vs[2].NetPath != "firewall" || vs[2].FirewallRules != "100" {
		t.Errorf("variants = %+v", vs)
	}
	if sw := c.Compare.Sweep; sw == nil || sw.Var != "n" || !slices.Equal(sw.Values, []string{"1", "2"}) {
		t.Errorf("sweep = %+v", sw)
	}
	if sw := l.Step("swept").Compare.Sweep; sw == nil || sw.From != "{{.vars.ns}}" || sw.Values != nil {
		t.Errorf("swept from a variable = %+v", sw)
	}
	r := kindtest.RoundTrip(t, l)
	for i := range l.Steps {
		a, z := &l.Steps[i], &r.Steps[i]
		noLines(a)
		noLines(z)
		if !reflect.DeepEqual(a.Bench, z.Bench) || !reflect.DeepEqual(a.Compare, z.Compare) || !reflect.DeepEqual(a.Deploy, z.Deploy) {
			t.Errorf("step %s after the round trip: %+v %+v, before: %+v %+v", a.ID, z.Bench, z.Compare, a.Bench, a.Compare)
		}
	}
}

// TestKeyProblems: what the kinds check, each at its line, the checks
// across steps among them (a target deployed earlier, a transport the
// group offers, a Unix socket on the client's host, an emulated path's
// role).
func TestKeyProblems(t *testing.T) {
	got := kindtest.Problems(t, keysHead+`  - id: early
    title: Early
    kind: bench
    on: client
    target: later
    clients: 0
    capacity: {precision: 0.9, start_rate: 100, max_rate: 10, mode: sideways}
  - id: socket
    title: Socket elsewhere
    kind: bench
    on: server
    target: local
    transport: unix
  - id: rdma
    title: RDMA to TCP servers
    kind: bench
    on: client
    target: servers
    transport: rdma
  - id: cmp
    title: Compare
    kind: compare
    on: client
    target: servers
    variants:
      - label: a
        on: nowhere
      - label: a
        group: missing
      - label: np
        netpath: wormhole
        transport: unix
        on: server
      - label: fw
        firewall_rules: 5
      - label: dep
        deploy: {group: x}
    sweep:
      var: n
      values: [0, 9]
  - id: one
    title: One variant
    kind: compare
    on: client
    target: servers
    variants:
      - label: only
    sweep:
      var: nope
      values: []
`, nil)
	want := []string{
		`lab.yaml:34: step early: target "later" is not a group deployed by an earlier deploy step (deployed so far: local, servers)`,
		`lab.yaml:35: step early clients: 0 is below the minimum 1`,
		`lab.yaml:36: step early capacity precision: 0.9 is outside 0.001..0.5`,
		`lab.yaml:36: step early capacity mode: "sideways": want after (the flat-out runs, then the search) or instead (the search only)`,
		`lab.yaml:36: step early capacity: max_rate 10 is below start_rate 100`,
		`lab.yaml:42: step socket: a Unix socket reaches servers on the same host only, but the client runs on server and group "local" on client`,
		`lab.yaml:48: step rdma: transport rdma needs group "servers" deployed with transport: rdma (step servers deploys it with tcp)`,
		`lab.yaml:56: step cmp variant "a": unknown role "nowhere" (the lab's roles are: client, server)`,
		`lab.yaml:57: step cmp variant "a": label given twice (first on line 55)`,
		`lab.yaml:58: step cmp variant "a": group "missing" is not deployed by an earlier deploy step (deployed so far: local, servers)`,
		`lab.yaml:60: step cmp variant "np": unknown network path "wormhole": use one of direct, firewall, overlay+firewall`,
		`lab.yaml:61: step cmp variant "np": an emulated network path carries TCP: leave transport out or set it to tcp`,
		`lab.yaml:61: step cmp variant "np": transport unix needs group "servers" deployed with transport: unix (step servers deploys it with tcp)`,
		`lab.yaml:62: step cmp variant "np": an emulated network path joins two namespaces of one host: its servers must run on the load generator's role (client)`,
		`lab.yaml:64: step cmp variant "fw": firewall_rules needs netpath: firewall or overlay+firewall`,
		`lab.yaml:66: step cmp variant "dep" deploy: unknown key "group" (allowed: bind, config, instances, port, server, settings, transport)`,
		`lab.yaml:69: step cmp: sweep value: n: 0 is below the minimum 1; n takes an integer from 1 to 8 (default 2)`,
		`lab.yaml:69: step cmp: sweep value: n: 9 is above the maximum 8; n takes an integer from 1 to 8 (default 2)`,
		`lab.yaml:70: step one: a compare step needs variants: a list of at least two`,
		`lab.yaml:78: step one: sweep over undefined variable "nope"`,
		`lab.yaml:79: step one: sweep values must not be empty`,
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: %s\nwant it to start: %s", i, got[i], want[i])
		}
	}
}

// noLines clears the lines a compare remembers (the encoded file has its
// own), so a round trip compares what was read.
func noLines(s *labs.Step) {
	if s.Compare == nil {
		return
	}
	for i := range s.Compare.Variants {
		s.Compare.Variants[i].Line = 0
	}
	if s.Compare.Sweep != nil {
		s.Compare.Sweep.Line = 0
	}
}
