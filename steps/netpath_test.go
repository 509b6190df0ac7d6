//go:build unix

package steps

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"
)

// requireNetns skips (or, with DPULAB_REQUIRE_PEERS=1, fails) a test that
// makes real network namespaces when this machine cannot.
func requireNetns(t *testing.T) {
	t.Helper()
	testpeer.RequireNetns(t, "run as root (sudo go test ./steps/ -run Emulated)")
	testpeer.Require(t, "taskset")
}

const netpathLab = `
id: netpath-test
title: Emulated paths
summary: The three emulated paths of issue 13, briefly.
duration: 2m
roles:
  local: This machine.
variables:
  port:
    type: int
    default: 7400
    description: First port.
  rules:
    type: int
    default: 50
    description: Firewall rules.
steps:
  - id: deploy
    title: Start the servers
    kind: deploy
    group: local
    instances: 2
    port: "{{.vars.port}}"
  - id: compare
    title: Compare the emulated paths
    kind: compare
    target: local
    clients: 2
    pipeline: 4
    key_maximum: 100
    warmup: 0s
    duration: 1s
    runs: 2
    variants:
      - label: host does it all
        netpath: overlay+firewall
        firewall_rules: "{{.vars.rules}}"
      - label: partial offload
        netpath: firewall
        firewall_rules: "{{.vars.rules}}"
      - label: full offload
        netpath: direct
  - id: cleanup
    title: Clean up
    kind: cleanup
    run: "true"
`

// TestEmulatedPathsCompare runs a compare over the three emulated paths on
// this machine: each carries traffic, the overlay's device and the
// firewall's chain count packets only where the path has them, every
// output is labelled as an emulation, and nothing of the run's paths is
// left afterwards.
func TestEmulatedPathsCompare(t *testing.T) {
	requireNetns(t)
	if testing.Short() {
		t.Skip("makes network namespaces and runs three short benches (about 30 s)")
	}
	lab := loadLab(t, netpathLab)
	rec := &recorder{}
	resDir := t.TempDir()
	e := newEngine(t, lab, Options{Binary: dpulabBinary(t), ResultsDir: resDir, Yes: true,
		Vars: map[string]string{"port": strconv.Itoa(freePorts(t, 2))}}, rec)
	var prefixes []string
	for _, v := range lab.Step("compare").Compare.Variants {
		cfg, err := load.PathConfig(e.workdir(), &v, e.Vars())
		if err != nil {
			t.Fatal(err)
		}
		prefixes = append(prefixes, netpath.RunPrefix(cfg.RunID))
	}
	if err := e.Run(testCtx(t, 4*time.Minute)); err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	out := strings.Join(rec.output(), "\n")
	for _, want := range []string{"made the overlay+firewall path", "made the firewall path", "made the direct path", "removed the direct path", "servers pinned to CPU"} {
		if !strings.Contains(out, want) && !(want == "servers pinned to CPU" && strings.Contains(out, "not pinned")) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(results.RunKind(r), "EMULATION: ") {
		t.Errorf("the run is not labelled an emulation: RunKind = %q", results.RunKind(r))
	}
	if len(r.Benches) != 1 || len(r.Benches[0].Variants) != 3 {
		t.Fatalf("results.json: want one compare with three variants, got %+v", r.Benches)
	}
	for _, v := range r.Benches[0].Variants {
		if v.Emulation == "" || !strings.Contains(v.Emulation, "emulated") {
			t.Errorf("variant %s: emulation %q", v.Label, v.Emulation)
		}
		if len(v.Points) != 1 || v.Points[0].Path == nil {
			t.Fatalf("variant %s: no path counters: %+v", v.Label, v.Points)
		}
		pt := v.Points[0]
		pc := pt.Path
		if len(pt.Runs) != 2 || pt.Stats.OpsPerSec.Mean <= 0 {
			t.Errorf("variant %s: runs %d, mean TPS %v", v.Label, len(pt.Runs), pt.Stats.OpsPerSec.Mean)
		}
		if pc.LinkPackets == 0 {
			t.Errorf("variant %s: no packet crossed the path's veth", v.Label)
		}
		switch pc.Path {
		case string(netpath.OverlayFirewall):
			if pc.EncapPackets == nil || *pc.EncapPackets == 0 || pc.Encap == "" {
				t.Errorf("overlay path: encapsulation counters did not move: %+v", pc)
			}
			if pc.FirewallPackets == nil || *pc.FirewallPackets == 0 || pc.FirewallRules != 50 {
				t.Errorf("overlay path: firewall counters did not move: %+v", pc)
			}
		case string(netpath.Firewall):
			if pc.EncapPackets != nil {
				t.Errorf("firewall path has an overlay: %+v", pc)
			}
			if pc.FirewallPackets == nil || *pc.FirewallPackets == 0 {
				t.Errorf("firewall path: firewall counters did not move: %+v", pc)
			}
		case string(netpath.Direct):
			if pc.EncapPackets != nil || pc.FirewallPackets != nil {
				t.Errorf("direct path has an overlay or a firewall: %+v", pc)
			}
		default:
			t.Errorf("variant %s: path %q", v.Label, pc.Path)
		}
	}
	md, err := os.ReadFile(resDir + "/" + r.Lab + "/" + r.RunID + "/report.md")
	if err == nil && !strings.Contains(string(md), "EMULATION") {
		t.Errorf("report.md does not say EMULATION")
	}
	assertNoPaths(t, prefixes)
	if st := e.state; len(st.Paths) != 0 {
		t.Errorf("saved progress still records paths: %+v", st.Paths)
	}
}

// assertNoPaths checks that no namespace, link or nftables table carries
// one of the prefixes (other tests may make their own dpulab- objects at
// the same time, so only this run's are looked for).
func assertNoPaths(t *testing.T, prefixes []string) {
	t.Helper()
	for _, cmd := range [][]string{{"ip", "netns", "list"}, {"ip", "-br", "link"}, {"nft", "list", "tables"}} {
		out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v: %s", strings.Join(cmd, " "), err, out)
			continue
		}
		for _, p := range prefixes {
			if strings.Contains(string(out), p) {
				t.Errorf("%s still shows %s*:\n%s", strings.Join(cmd, " "), p, out)
			}
		}
	}
}

// TestEmulatedPathUnavailable: a host that cannot make the paths (here: a
// probe answer saying so) lists each variant as unavailable with its
// reason, and the step is skipped, not failed.
func TestEmulatedPathUnavailable(t *testing.T) {
	lab := loadLab(t, netpathLab)
	rec := &recorder{}
	resDir := t.TempDir()
	e := newEngine(t, lab, Options{Binary: dpulabBinary(t), ResultsDir: resDir, Yes: true,
		Vars: map[string]string{"port": strconv.Itoa(freePorts(t, 2))}}, rec)
	why := "making network namespaces needs root: run dpulab as root"
	e.pathProbe = map[string]netpath.Report{"local": {Host: "local", Unavailable: map[netpath.Variant]string{
		netpath.Direct: why, netpath.Firewall: why, netpath.OverlayFirewall: why}}}
	if err := e.Run(testCtx(t, 2*time.Minute)); err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	if f := rec.finished()["compare"]; f.Status != results.Skipped {
		t.Errorf("compare finished %s, want skipped", f.Status)
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Benches) != 1 || len(r.Benches[0].Unavailable) != 3 || len(r.Benches[0].Variants) != 0 {
		t.Fatalf("results.json: want the three variants listed unavailable and none measured: %+v", r.Benches)
	}
	for _, u := range r.Benches[0].Unavailable {
		if u.Reason != why {
			t.Errorf("%s: reason %q", u.Label, u.Reason)
		}
	}
	if results.RunKind(r) != "" {
		t.Errorf("nothing was emulated, but the run says %q", results.RunKind(r))
	}
	if !strings.Contains(strings.Join(rec.output(), "\n"), `variant "full offload" not run: `+why) {
		t.Errorf("output does not say why:\n%s", strings.Join(rec.output(), "\n"))
	}
}
