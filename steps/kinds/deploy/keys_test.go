package deploy_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

const keysHead = `id: keys
title: Keys
summary: deploy steps
duration: 1m
roles:
  server: servers
variables:
  n:
    type: int
    default: 2
    min: 1
    max: 8
    description: instances
steps:
`

// TestKeys: the kind reads its keys into Step.Deploy (the group is the
// step id unless given), and Encode writes them back so that they read
// the same.
func TestKeys(t *testing.T) {
	l := kindtest.Lab(t, keysHead+`  - id: servers
    title: Servers
    kind: deploy
    on: server
    instances: "{{.vars.n}}"
    port: 7400
    config: redis.conf.tmpl
    transport: unix
    bind: 127.0.0.1
    settings:
      maxmemory: 1gb
      appendonly: "no"
    server: valkey-server
  - id: more
    title: More
    kind: deploy
    on: server
    group: others
`, map[string]string{"redis.conf.tmpl": "port {{.port}}\n"})
	want := []labs.DeploySpec{
		{Group: "servers", Instances: "{{.vars.n}}", Port: "7400", Config: "redis.conf.tmpl", Transport: "unix", Bind: "127.0.0.1",
			Settings: []labs.Setting{{Name: "maxmemory", Value: "1gb"}, {Name: "appendonly", Value: "no"}}, Server: "valkey-server"},
		{Group: "others"},
	}
	for i, w := range want {
		if got := l.Steps[i].Deploy; got == nil || !reflect.DeepEqual(*got, w) {
			t.Errorf("step %s: Deploy %+v, want %+v", l.Steps[i].ID, got, w)
		}
	}
	if g := deploy.Groups(l); len(g) != 2 || g["servers"] != &l.Steps[0] || g["others"] != &l.Steps[1] {
		t.Errorf("Groups = %v", g)
	}
	b := kindtest.RoundTrip(t, l)
	for i := range l.Steps {
		if !reflect.DeepEqual(b.Steps[i].Deploy, l.Steps[i].Deploy) {
			t.Errorf("step %s: %+v after the round trip, %+v before", l.Steps[i].ID, b.Steps[i].Deploy, l.Steps[i].Deploy)
		}
	}
}

// TestKeyProblems: what the kind checks, each at its line.
func TestKeyProblems(t *testing.T) {
	got := kindtest.Problems(t, keysHead+`  - id: a
    title: A
    kind: deploy
    on: server
    group: "Bad Group"
    instances: 0
    port: 70000
    transport: udp
    settings:
      "two words": x
    server: nginx
  - id: b
    title: B
    kind: deploy
    on: server
    group: g
    server: redis-server
    transport: rdma
  - id: c
    title: C
    kind: deploy
    on: server
    group: g
    config: missing.tmpl
`, nil)
	want := []string{
		`lab.yaml:19: step a group "Bad Group": use lower-case letters, digits, '-' and '_' (starting with a letter or digit)`,
		`lab.yaml:20: step a instances: 0 is below the minimum 1`,
		`lab.yaml:21: step a port: "70000" is not a port number (1-65535)`,
		`lab.yaml:22: step a transport: transport "udp": unknown transport: want one of rdma, tcp, unix`,
		`lab.yaml:24: step a settings: "two words" is not a redis.conf directive name`,
		`lab.yaml:25: step a server: server "nginx": use bundled, redis-server, valkey-server`,
		`lab.yaml:31: step b: server redis-server cannot serve transport rdma: Redis has no RDMA transport (use the bundled server, or valkey-server built with RDMA)`,
		`lab.yaml:33: step c: group "g" is already deployed by step b`,
		`lab.yaml:38: step c: template "missing.tmpl": file does not exist`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", join(got), join(want))
	}
}

func join(ss []string) string {
	out := ""
	for _, s := range ss {
		out += "  " + s + "\n"
	}
	return out
}
