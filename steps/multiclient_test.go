//go:build unix

package steps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// TestClientsHostsKey: clients_hosts picks that many hosts of the role,
// the plan shows one bench per host with its share, and more hosts than
// the role has is refused saying what to do.
func TestClientsHostsKey(t *testing.T) {
	invPath := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(invPath, []byte(`hosts:
  - {name: c1, address: 10.0.0.1, roles: [client]}
  - {name: c2, address: 10.0.0.2, roles: [client]}
  - {name: c3, address: 10.0.0.3, roles: [client]}
  - {name: s1, address: 10.0.0.9, roles: [server]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	labFor := func(n string) *labs.Lab {
		return loadLab(t, `
id: ch
title: clients_hosts
summary: clients_hosts
duration: 1m
roles:
  client: load
  server: servers
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [server]
    group: g
    instances: "2"
    port: "7000"
    bind: 0.0.0.0
  - id: bench
    title: Bench
    kind: bench
    on: [client]
    target: g
    clients: 4
    requests: 1000
    clients_hosts: `+n+`
`)
	}
	e := newEngine(t, labFor("2"), Options{Inventory: in}, nil)
	cmds, err := e.Plan(1)
	if err != nil {
		t.Fatal(err)
	}
	var on []string
	for _, c := range cmds {
		if strings.Contains(c.Cmd, " bench ") {
			on = append(on, c.Host)
			if !strings.Contains(c.Cmd, "--clients 2 ") || !strings.Contains(c.Cmd, "--requests-total 500 ") {
				t.Errorf("%s's share: %s", c.Host, c.Cmd)
			}
		}
	}
	if strings.Join(on, ",") != "c1,c2" {
		t.Errorf("benches planned on %v, want c1,c2", on)
	}
	e = newEngine(t, labFor("4"), Options{Inventory: in}, nil)
	if _, err := e.Plan(1); err == nil || !strings.Contains(err.Error(), "only 3 hosts play role client") {
		t.Errorf("clients_hosts 4 of 3: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(strings.Replace(`id: ch
title: t
summary: s
duration: 1m
roles: {client: load, server: servers}
steps:
  - {id: deploy, title: D, kind: deploy, on: [server], group: g, instances: "1", port: "7000"}
  - {id: bench, title: B, kind: bench, on: [client], target: g, clients_hosts: N}
`, "N", "0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := labs.Load(os.DirFS(dir), "."); err == nil || !strings.Contains(err.Error(), "clients_hosts") {
		t.Errorf("clients_hosts: 0 was not refused at its line: %v", err)
	}
}
