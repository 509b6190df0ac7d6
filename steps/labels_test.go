//go:build unix

package steps

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

const labelsLab = `
id: labels
title: Labels
summary: a host label chosen over a variable
duration: 1m
roles:
  web: web servers
variables:
  dev:
    type: string
    default: mlx5_0
    description: the device, unless the host's label names its own
steps:
  - id: say
    title: Say
    kind: run
    on: [web]
    run:
      - echo dev={{or (index .labels "rdma_device") .vars.dev}} nic={{index .labels "nic"}}
`

// TestCommandsSeeHostLabels: .labels is the inventory labels of the host a
// command runs on (a lab gives a per-host setting that way, falling back
// to a variable), empty for a host without labels.
func TestCommandsSeeHostLabels(t *testing.T) {
	dir := t.TempDir()
	inv := "hosts:\n" +
		"  - name: a\n    address: 192.0.2.1\n    roles: [web]\n    labels: {rdma_device: rxe1, nic: \"it's\"}\n" +
		"  - name: b\n    address: 192.0.2.2\n    roles: [web]\n"
	invPath := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(invPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dpulab")
	if err := os.WriteFile(bin, []byte("not really dpulab"), 0o755); err != nil {
		t.Fatal(err)
	}
	hosts := map[string]*fakeTarget{"a": {name: "a"}, "b": {name: "b"}}
	targets := func(name string) (runner.Target, error) {
		if f, ok := hosts[name]; ok {
			return f, nil
		}
		return nil, fmt.Errorf("no fake for %s", name)
	}
	rec := &recorder{}
	e := newEngine(t, loadLab(t, labelsLab), Options{Inventory: in, Targets: targets, Binary: bin, Yes: true}, rec)
	if st := e.RunStep(testCtx(t, 10*time.Second), 0); st != results.Done {
		t.Fatalf("status %v, want done", st)
	}
	for name, want := range map[string]string{"a": `echo dev=rxe1 nic='it'\''s'`, "b": "echo dev=mlx5_0 nic=''"} {
		if got := strings.Join(userCommands(hosts[name].commands()), "\n"); got != want {
			t.Errorf("host %s ran %q, want %q", name, got, want)
		}
	}
}
