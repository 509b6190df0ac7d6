package deploy

import (
	"bufio"
	"fmt"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
)

// TestHostSideAddr: deploy pings a server from its own host on the
// loopback, unless the server is bound only to other addresses (the
// RDMA lab's bind=10.9.0.1), where 127.0.0.1 would be refused.
func TestHostSideAddr(t *testing.T) {
	for bind, want := range map[string]string{
		"":                   "127.0.0.1",
		"0.0.0.0":            "127.0.0.1",
		"::":                 "127.0.0.1",
		"*":                  "127.0.0.1",
		"127.0.0.1":          "127.0.0.1",
		"10.9.0.1":           "10.9.0.1",
		"10.9.0.1 127.0.0.1": "127.0.0.1",
		"10.9.0.1 -::1":      "::1",
		"-10.9.0.1 10.0.0.5": "10.9.0.1",
		"fd00::1":            "fd00::1",
	} {
		if got := HostSideAddr(bind); got != want {
			t.Errorf("HostSideAddr(%q) = %q, want %q", bind, got, want)
		}
	}
	p := Plan{Port: 7100, Bind: "10.9.0.1"}
	if got := p.HostSide(kind.Host{Name: "s"}, 1).Address; got != "10.9.0.1:7101" {
		t.Errorf("HostSide with bind 10.9.0.1 = %s, want 10.9.0.1:7101", got)
	}
}

// TestServerRefusals: what the distribution's servers cannot do is refused
// with a reason before anything starts, in the file when it can be told
// there and here for a variant's override.
func TestServerRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, server, transport string
		settings                [][2]string
		want                    string
	}{
		{"redis rdma", "redis-server", "rdma", nil, "Redis has no RDMA"},
		{"redis rdma setting", "redis-server", "tcp", [][2]string{{"rdma-rx-size", "65536"}}, "redis-server does not accept it"},
		{"valkey article setting", "valkey-server", "tcp", [][2]string{{"rdma-transport-mode", "unreliable-connected"}}, "in no released Valkey"},
		{"unknown", "keydb-server", "tcp", nil, "use bundled, redis-server, valkey-server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan{Transport: tc.transport, Settings: tc.settings}
			err := p.resolveServer(labs.Value(tc.server), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	p := Plan{Transport: "tcp", Settings: [][2]string{{"rdma-port", "7000"}}}
	if err := p.resolveServer(labs.Value("valkey-server"), nil); err != nil || !p.NeedsRDMA() {
		t.Errorf("valkey with its own rdma-port: %v, needs RDMA %v", err, p.NeedsRDMA())
	}
}

const twoHostsLab = `
id: two
title: Two hosts
summary: a deployment on two hosts
duration: 1m
variables:
  instances:
    type: int
    default: 3
    description: Servers per host.
roles:
  server: the servers
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [server]
    group: g
    instances: "{{.vars.instances}}"
    port: "7000"
    config: redis.conf.tmpl
    bind: 0.0.0.0
    transport: unix
    settings:
      maxmemory: 64mb
`

// TestPlanOnTwoHosts: a deploy step resolved against two hosts plans one
// command per instance on each (the host's agent, the instance's config
// and port, a socket for its unix transport), renders
// each instance's redis.conf from the lab's template with the instance's
// own keys, and tells clients where each instance answers.
func TestPlanOnTwoHosts(t *testing.T) {
	t.Parallel()
	ke := kindtest.New(kindtest.Lab(t, twoHostsLab, map[string]string{
		"redis.conf.tmpl": "# {{.host}} instance {{.instance}} of {{.group}}\nport {{.port}}\ndir {{.dir}}\n",
	}), "h1", "h2")
	env := fakeEnv{Env: ke}
	st := ke.Step(t, "deploy")
	p, err := Resolve(env, st, map[string]string{"instances": "3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Socket || p.Instances != 3 || len(p.Hosts) != 2 {
		t.Fatalf("plan %+v: want 3 instances with sockets on 2 hosts", p)
	}
	cmds := Commands(env, p)
	if len(cmds) != 6 {
		t.Fatalf("%d commands, want 6: %v", len(cmds), cmds)
	}
	for i, c := range cmds {
		host, port := []string{"h1", "h2"}[i/3], 7000+i%3
		dir := fmt.Sprintf("/tmp/dpulab-test-wd/g-%d", port)
		want := fmt.Sprintf("exec /opt/dpulab-on-%s server --config %s/redis.conf --port %d --unixsocket %s/redis.sock", host, dir, port, dir)
		if c.Host != host || c.Cmd != want || c.Sudo {
			t.Errorf("command %d: %+v, want %q on %s", i, c, want, host)
		}
	}
	files, err := Files(env, "deploy", p, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 {
		t.Fatalf("%d files, want 6", len(files))
	}
	f := files[4]
	want := "# h2 instance 1 of g\nport 7001\ndir /tmp/dpulab-test-wd/g-7001\n# settings of the lab step or compare variant\nmaxmemory 64mb\n"
	if f.Host != "h2" || f.Path != "/tmp/dpulab-test-wd/g-7001/redis.conf" || f.Source != "redis.conf.tmpl" || f.Content != want {
		t.Errorf("file %+v, want h2's instance 1 with\n%s", f, want)
	}
	clients := p.ClientSide(ke.Workdir())
	if len(clients) != 6 || clients[3].Address != "192.0.2.1:7000" || clients[3].Host != "h2" || clients[3].Socket != "/tmp/dpulab-test-wd/g-7000/redis.sock" {
		t.Errorf("clients %+v: want each host's address (bound to every address) and the sockets", clients)
	}
	// A variant's overrides: another server, one host's role, more ports.
	v := &labs.Variant{Label: "valkey", Deploy: &labs.DeploySpec{Server: "valkey-server", Instances: "1"}}
	pv, err := Resolve(env, st, nil, v)
	if err != nil {
		t.Fatal(err)
	}
	cmds = Commands(env, pv)
	if len(cmds) != 4 || !cmds[0].Sudo || !strings.Contains(cmds[0].Cmd, "command -v valkey-server") || !strings.HasPrefix(cmds[1].Cmd, "exec valkey-server /tmp/dpulab-test-wd/g-7000/redis.conf --port 7000") {
		t.Errorf("valkey variant's commands %v: want the look-up (with sudo for the install) then valkey-server per host", cmds)
	}
	if pv.Key() == p.Key() {
		t.Error("a different deployment has the same key")
	}
}

// TestResolveRefuses: what cannot be deployed is refused before anything
// runs, saying why.
func TestResolveRefuses(t *testing.T) {
	t.Parallel()
	ke := kindtest.New(kindtest.Lab(t, twoHostsLab, map[string]string{"redis.conf.tmpl": "port {{.port}}\n"}), "h1")
	st := ke.Step(t, "deploy")
	for vars, want := range map[string]string{
		"0":     "0 instances: want 1..512",
		"60000": "60000 instances: want 1..512",
		"x":     "instances",
	} {
		if _, err := Resolve(fakeEnv{Env: ke}, st, map[string]string{"instances": vars}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("instances %s: error %v, want %q", vars, err, want)
		}
	}
}

// TestReadInfo reads INFO server as Redis and Valkey answer it, and
// refuses what is not an INFO reply.
func TestReadInfo(t *testing.T) {
	body := "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.1.1\r\n"
	info, err := readInfo(bufio.NewReader(strings.NewReader(fmt.Sprintf("$%d\r\n%s\r\n", len(body), body))))
	if err != nil || info["valkey_version"] != "8.1.1" || info["server_name"] != "valkey" {
		t.Errorf("info %v, %v", info, err)
	}
	for _, bad := range []string{"-ERR unknown command\r\n", "$99999999999\r\n", "$-5\r\n", "$10\r\nshort"} {
		if _, err := readInfo(bufio.NewReader(strings.NewReader(bad))); err == nil {
			t.Errorf("%q read as INFO", bad)
		}
	}
}
