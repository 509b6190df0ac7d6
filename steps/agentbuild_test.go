//go:build unix

package steps

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/server/transport"
)

// agentBuildLab compares TCP and RDMA from a client host against servers
// on another: every role on SSH hosts.
const agentBuildLab = `
id: agentbuild-test
title: TCP against RDMA on lab hosts
summary: Whether RDMA can run is the hosts' agents' question.
duration: 1m
roles:
  server: The servers.
  client: The load generator.
steps:
  - id: deploy
    title: Start the servers
    kind: deploy
    group: srv
    on: server
    instances: 1
    port: %d
    transport: rdma
  - id: compare
    title: TCP against RDMA
    kind: compare
    target: srv
    on: client
    key_maximum: 100
    warmup: 0s
    duration: 1s
    runs: 1
    variants:
      - label: TCP
        transport: tcp
      - label: RDMA RC
        transport: rdma
`

func agentBuildEngine(t *testing.T, agents *runner.AgentFinder, targets func(string) (runner.Target, error)) *Engine {
	t.Helper()
	inv, err := runner.ParseInventory("hosts.yaml", []byte("hosts:\n  - name: srv1\n    address: 10.0.0.5\n    roles: [server]\n  - name: cli1\n    address: 10.0.0.6\n    roles: [client]\n"))
	if err != nil {
		t.Fatal(err)
	}
	return newEngine(t, loadLab(t, fmt.Sprintf(agentBuildLab, 16379)), Options{Inventory: inv, Agents: agents, Targets: targets, Yes: true, DryRun: true}, nil)
}

func agentPlanText(t *testing.T, e *Engine, step int) string {
	t.Helper()
	plan, err := e.Plan(step)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var cmds []string
	for _, c := range plan {
		cmds = append(cmds, c.Host+": "+c.Cmd)
	}
	return strings.Join(cmds, "\n")
}

// TestRDMAOnLabHostsIsTheAgentsQuestion: an RDMA variant from a Linux SSH
// host is planned to run whatever this controller was built with (go test
// -tags nordma runs it as a controller without RDMA, as a macOS or
// Windows one is): the hosts run the Linux agent, which has it. When the
// agent lacks it (a finder building with nordma) the job is planned with
// its command and a note saying so and what to do; a host that reports
// another platform is refused when the run reaches it, with what to do.
func TestRDMAOnLabHostsIsTheAgentsQuestion(t *testing.T) {
	t.Logf("this build's rdma: %v", transport.Available(transport.RDMA))
	all := agentPlanText(t, agentBuildEngine(t, &runner.AgentFinder{SourceDir: "-"}, nil), 1)
	if strings.Contains(all, "# not run") || !strings.Contains(all, "--target rdma://127.0.0.1:16379") {
		t.Errorf("RDMA from a Linux SSH host is not planned to run:\n%s", all)
	}

	all = agentPlanText(t, agentBuildEngine(t, &runner.AgentFinder{SourceDir: "-", NoRDMA: true}, nil), 1)
	want := "cli1: # not run: transport rdma: the dpulab agent for linux has no RDMA: it is built with -tags nordma (a static binary without the RDMA provider); let dpulab build its agents without nordma, or use transport tcp"
	if !strings.Contains(all, want) || !strings.Contains(all, "--target rdma://127.0.0.1:16379") || strings.Count(all, "# not run") != 1 {
		t.Errorf("an agent without RDMA: the plan does not show the rdma bench and why it will not run (want %q):\n%s", want, all)
	}

	// A client host that reports macOS: refused by its agent's build.
	mac := func(name string) (runner.Target, error) {
		plat := runner.Platform{OS: "linux", Arch: "arm64"}
		if name == "cli1" {
			plat = runner.Platform{OS: "darwin", Arch: "arm64"}
		}
		return platformTarget{plat: plat}, nil
	}
	e := agentBuildEngine(t, &runner.AgentFinder{SourceDir: "-"}, mac)
	hosts := []hostRef{{Name: "srv1", Address: "10.0.0.5"}, {Name: "cli1", Address: "10.0.0.6"}}
	if why := e.hostsLack(hosts, "rdma"); why != "" {
		t.Errorf("before the hosts are reached, Linux is assumed: %s", why)
	}
	why, err := e.hostsLackNow(context.Background(), hosts, "rdma")
	want = "cli1: transport rdma: the dpulab agent for darwin/arm64 has no RDMA: it is built for darwin/arm64, and dpulab's RDMA provider (rdma-core, loaded at run time) is linux/amd64 and linux/arm64 only; give this role a Linux amd64 or arm64 host, or use transport tcp"
	if err != nil || why != want {
		t.Errorf("a macOS client host: %q, %v\nwant %q", why, err, want)
	}
	if why, err := e.hostsLackNow(context.Background(), hosts, "tcp"); why != "" || err != nil {
		t.Errorf("tcp on a macOS host: %q, %v", why, err)
	}

	// On this machine it is this program that runs: its own build.
	local := []hostRef{{Name: runner.LocalName, Local: true}}
	err = transport.Available(transport.RDMA)
	if why := e.hostsLack(local, "rdma"); (why == "") != (err == nil) || (err != nil && why != err.Error()) {
		t.Errorf("this machine: %q, this build: %v", why, err)
	}
}

// platformTarget is a lab host that only says its platform.
type platformTarget struct {
	runner.Target
	plat runner.Platform
}

func (p platformTarget) Platform(context.Context) (runner.Platform, error) { return p.plat, nil }
func (p platformTarget) Close() error                                      { return nil }
