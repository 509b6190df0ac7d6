//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/pages/lab"
	"github.com/dpulab/dpulab/tui/pages/replay"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// The redis-dpu-uptv2 lab end to end (issue 14): a rehearsal over two real
// sshd hosts on this machine, the same run without --rehearse, and a dry
// run over a full inventory with a vcenter section.

// dpuLabShort copies the shipped redis-dpu-uptv2 lab into a lab dir of the
// test's with two changes only, so that a run takes a minute instead of
// hours: the comparison sweeps 1 and 2 instances instead of 10 to 80, and
// the smoke bench lasts 1 s instead of 10. Every other step, check, text
// and reference is the shipped lab's (a lab in --lab-dir replaces the
// built-in one with the same id). It fails when the lines it changes are
// no longer in the lab, so it keeps following the lab.
func dpuLabShort(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "labs", "redis-dpu-uptv2")
	dst := filepath.Join(t.TempDir(), "redis-dpu-uptv2")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "lab.yaml" {
			s := string(b)
			for _, r := range [][2]string{
				{`    default: "10,20,30,40,50,60,70,80"` + "\n", `    default: "1,2"` + "\n"},
				{`    rehearsal: "10,20"` + "\n", `    rehearsal: "1,2"` + "\n"},
				{"    warmup: 2s\n    duration: 10s\n", "    warmup: 0s\n    duration: 1s\n"},
			} {
				if strings.Count(s, r[0]) != 1 {
					t.Fatalf("the lab no longer has %q once: update dpuLabShort", r[0])
				}
				s = strings.Replace(s, r[0], r[1], 1)
			}
			b = []byte(s)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Dir(dst)
}

// dpuLabIface picks an interface of this machine the lab's checks accept
// (ethtool names its driver; its MTU is within the lab's bounds) and
// returns it with its MTU.
func dpuLabIface(t *testing.T) (string, int) {
	t.Helper()
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		n := e.Name()
		b, err := os.ReadFile(filepath.Join("/sys/class/net", n, "mtu"))
		if err != nil {
			continue
		}
		mtu, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || mtu < 576 || mtu > 9216 {
			continue
		}
		if out, err := exec.Command("ethtool", "-i", n).Output(); err == nil && regexp.MustCompile(`(?m)^driver: \S+`).Match(out) {
			return n, mtu
		}
	}
	t.Skip("no network interface here that ethtool names a driver for, with an MTU between 576 and 9216 (the lab's nic-driver and mtu checks need one)")
	return "", 0
}

// dpuLabPort finds a port P with P..P+2, P+1000..P+1002 and P+2000..P+2002
// free: the lab's three server groups.
func dpuLabPort(t *testing.T) int {
	t.Helper()
	free := func(p int) bool {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return false
		}
		l.Close()
		return true
	}
	for range 200 {
		p := 20000 + rand.IntN(30000)
		ok := true
		for _, base := range []int{p, p + 1000, p + 2000} {
			for i := range 3 {
				ok = ok && free(base+i)
			}
		}
		if ok {
			return p
		}
	}
	t.Fatal("no free port range for the lab's servers")
	return 0
}

// dpuLabInventory writes an inventory of two sshd hosts: lab-a plays
// client and baseline, lab-b accelerated; no host plays the optional
// offload role.
func dpuLabInventory(t *testing.T) string {
	t.Helper()
	testpeer.Require(t, "sshd")
	a, b := testpeer.StartSSHD(t), testpeer.StartSSHD(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	var known []byte
	for _, s := range []*testpeer.SSHD{a, b} {
		k, err := os.ReadFile(s.KnownHosts)
		if err != nil {
			t.Fatal(err)
		}
		known = append(known, k...)
	}
	if err := os.WriteFile(kh, known, 0o600); err != nil {
		t.Fatal(err)
	}
	host := func(name string, s *testpeer.SSHD, roles string) string {
		return fmt.Sprintf("  - name: %s\n    address: 127.0.0.1\n    port: %d\n    user: %s\n    identity: %s\n    roles: %s\n", name, s.Port, u.Username, s.UserKey, roles)
	}
	inv := filepath.Join(dir, "hosts.yaml")
	body := "known_hosts: " + kh + "\nhosts:\n" + host("lab-a", a, "[client, baseline]") + host("lab-b", b, "[accelerated]")
	if err := os.WriteFile(inv, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return inv
}

// runDpulab runs the real binary and returns its exit status, stdout and
// stderr.
func runDpulab(t *testing.T, ctx context.Context, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("dpulab %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errOut.String()
}

const rehearsalMark = "REHEARSAL: no DPU in this run"

// tcoMoney finds a dollar amount in a line.
var tcoMoney = regexp.MustCompile(`\$[0-9][0-9.,]*\s*[MK]?`)

// TestDPULabRehearsalOverSSH runs `dpulab run redis-dpu-uptv2 --rehearse`
// against two sshd hosts (the lab shortened by dpuLabShort) and checks
// that every output says it is a rehearsal: the headless header and
// summary, report.md's title, results.json, the replay banner and the TUI's
// status line; that no dollar figure appears in report.md unmarked (the
// whitepaper's are labelled as the whitepaper's; no estimate is made from
// a rehearsal); that the optional default-mode variant, with no host, is
// listed as not run with the reason. Without --rehearse the same run stops
// at the first hardware check with its reason, before any server starts.
func TestDPULabRehearsalOverSSH(t *testing.T) {
	testpeer.Require(t, "ethtool")
	iface, mtu := dpuLabIface(t)
	inv := dpuLabInventory(t)
	bin := testpeer.Dpulab(t)
	labDir := dpuLabShort(t)
	port := dpuLabPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	args := func(resDir string, extra ...string) []string {
		return append([]string{"run", "redis-dpu-uptv2", "--lab-dir", labDir, "--inventory", inv, "--yes",
			"--state-dir", t.TempDir(), "--results", resDir,
			"--set", "iface=" + iface, "--set", "mtu=" + strconv.Itoa(mtu), "--set", "port=" + strconv.Itoa(port),
			"--set", "instances=1", "--set", "duration=1s", "--set", "warmup=0s", "--set", "runs=1", "--set", "key_maximum=1000"}, extra...)
	}

	t.Run("rehearse", func(t *testing.T) {
		resDir := filepath.Join(t.TempDir(), "res")
		code, _, errOut := runDpulab(t, ctx, bin, args(resDir, "--rehearse")...)
		if code != 0 {
			t.Fatalf("exit %d, want 0:\n%s", code, errOut)
		}
		for _, want := range []string{
			rehearsalMark,
			"REHEARSAL: hardware check not run",
			`variant "BlueField default mode" not run: no host plays role offload in inventory ` + inv,
		} {
			if !strings.Contains(errOut, want) {
				t.Errorf("the run's output lacks %q:\n%s", want, errOut)
			}
		}
		if strings.Contains(errOut, "FAILED") {
			t.Errorf("a step failed:\n%s", errOut)
		}

		raw, err := os.ReadFile(filepath.Join(resDir, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Rehearsal       bool   `json:"rehearsal"`
			RehearsalReason string `json:"rehearsal_reason"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			t.Fatal(err)
		}
		if !head.Rehearsal || !strings.Contains(head.RehearsalReason, "--rehearse") {
			t.Errorf("results.json: rehearsal %v, reason %q; want true with the reason", head.Rehearsal, head.RehearsalReason)
		}
		res, err := results.LoadResults(resDir)
		if err != nil {
			t.Fatal(err)
		}
		var cmp *results.Compare
		for i := range res.Benches {
			if res.Benches[i].Step == "compare" {
				cmp = &res.Benches[i]
			}
		}
		if cmp == nil {
			t.Fatalf("results.json has no compare step: %+v", res.Benches)
		}
		var measured []string
		for _, v := range cmp.Variants {
			if len(v.Points) > 0 {
				measured = append(measured, v.Label)
			}
		}
		if strings.Join(measured, ", ") != "Standard NIC, BlueField UPTv2" {
			t.Errorf("measured variants %v, want the standard NIC and UPTv2", measured)
		}
		if len(cmp.Unavailable) != 1 || cmp.Unavailable[0].Label != "BlueField default mode" || !strings.Contains(cmp.Unavailable[0].Reason, "no host plays role offload") {
			t.Errorf("unavailable: %+v, want the default-mode variant with its reason", cmp.Unavailable)
		}

		md, err := os.ReadFile(filepath.Join(resDir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		report := string(md)
		lines := strings.SplitN(report, "\n", 6)
		if !strings.HasPrefix(lines[0], "# REHEARSAL: ") {
			t.Errorf("report.md's title does not say it is a rehearsal: %q", lines[0])
		}
		if !strings.Contains(strings.Join(lines[:len(lines)-1], "\n"), rehearsalMark) {
			t.Errorf("report.md's first lines do not say %q:\n%s", rehearsalMark, strings.Join(lines, "\n"))
		}
		if !strings.Contains(report, "**BlueField default mode**: not run here: no host plays role offload") {
			t.Errorf("report.md does not list the default-mode variant as not run:\n%s", report)
		}
		// Every dollar figure is a published one, labelled as the
		// whitepaper's or as not comparable with a rehearsal.
		for _, line := range strings.Split(report, "\n") {
			if !tcoMoney.MatchString(line) {
				continue
			}
			l := strings.ToLower(line)
			if !strings.Contains(l, "whitepaper") && !strings.Contains(l, "rehearsal") && !strings.Contains(l, "not comparable") {
				t.Errorf("report.md has a dollar figure that is not marked as the whitepaper's or a rehearsal's: %q", line)
			}
		}
		if strings.Contains(report, "TCO estimate") && !strings.Contains(report, "REHEARSAL") {
			t.Errorf("report.md has a TCO estimate beside a rehearsal without the mark")
		}

		// The replay of this folder, as `dpulab replay DIR` loads it.
		rr, err := loadReplay(resDir)
		if err != nil {
			t.Fatal(err)
		}
		c := common.NewCommon(true, 120, 40)
		c.NoAnimation = true
		rp := replay.New(c, rr, replay.Options{Step: time.Millisecond})
		rp.SetSize(120, 40)
		if b := replay.Banner(rr); !strings.HasPrefix(b, "REPLAY of a REHEARSAL (no DPU)") {
			t.Errorf("replay banner %q", b)
		}
		if v := rp.View(); !strings.Contains(v, "REPLAY of a REHEARSAL (no DPU)") {
			t.Errorf("the replay view does not say it replays a rehearsal:\n%s", v)
		}

		// The TUI's lab page, given this run's LabStarted.
		f := &sessiontest.Fake{LabInfo: session.LabInfo{ID: "redis-dpu-uptv2", Title: rr.Title}, Script: []sessiontest.Step{{Info: steps.StepInfo{ID: "overview", Title: "Overview", Kind: "read"}}}}
		sess, err := (&sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}).Open("redis-dpu-uptv2", session.Options{Emit: func(steps.Event) {}})
		if err != nil {
			t.Fatal(err)
		}
		lm := lab.New(c, sess, lab.Options{})
		lm.SetSize(120, 40)
		lm.Update(session.EventsMsg{steps.LabStarted{Lab: "redis-dpu-uptv2", Rehearsal: rr.RehearsalReason}})
		if v := lm.View(); !strings.Contains(v, rehearsalMark) {
			t.Errorf("the TUI's lab page does not say REHEARSAL:\n%s", v)
		}
	})

	t.Run("without --rehearse", func(t *testing.T) {
		resDir := filepath.Join(t.TempDir(), "res")
		code, _, errOut := runDpulab(t, ctx, bin, args(resDir)...)
		if code == 0 {
			t.Fatalf("exit 0 without --rehearse and without DPU hardware:\n%s", errOut)
		}
		for _, want := range []string{
			"FAILED: step vsphere-dpus",
			"no vcenter: section",
			"--rehearse",
		} {
			if !strings.Contains(errOut, want) {
				t.Errorf("the run's output lacks %q:\n%s", want, errOut)
			}
		}
		if strings.Contains(errOut, "started server:") || strings.Contains(errOut, "dpulab bench") {
			t.Errorf("servers or a bench ran after the failed hardware check:\n%s", errOut)
		}
		if strings.Contains(errOut, rehearsalMark) {
			t.Errorf("a run not asked to rehearse, on two hosts, says REHEARSAL:\n%s", errOut)
		}
	})
}

// dpuLabDryInventory is a full inventory for the lab: a client and the
// three server roles, each server VM on its own ESXi host, and a vcenter
// section. The addresses are TEST-NET ones: a dry run connects nowhere.
const dpuLabDryInventory = `vcenter:
  url: https://vcenter.lab.example/sdk
  user: administrator@vsphere.local
  password_env: DPULAB_TEST_VC_PASSWORD
hosts:
  - name: client1
    address: 192.0.2.10
    user: lab
    roles: [client]
  - name: std-vm
    address: 192.0.2.11
    user: lab
    roles: [baseline]
    esxi: esx-std.lab.example
  - name: dpu-default-vm
    address: 192.0.2.12
    user: lab
    roles: [offload]
    esxi: esx-dpu1.lab.example
    vm: redis-default
  - name: dpu-uptv2-vm
    address: 192.0.2.13
    user: lab
    roles: [accelerated]
    esxi: esx-dpu2.lab.example
    vm: redis-uptv2
`

// TestDPULabDryRunShowsEveryHost runs `dpulab run redis-dpu-uptv2
// --dry-run` with a client, the three server roles and a vcenter section,
// and checks that every command and every vSphere query is shown on its
// host: the checks on every role, the DPU and network-offload queries on
// both DPU VMs' ESXi hosts and the UPTv2 query on the accelerated VM only,
// each group's servers on its own host and ports, the bench of each
// variant from the client against its group, and the performance-counter
// query on each server's ESXi host. The vCenter password (from the
// environment) is never shown. Without a host for the optional offload
// role, its steps and variant say they will not run, and why.
func TestDPULabDryRunShowsEveryHost(t *testing.T) {
	const secret = "s3cret-vc-Passw0rd"
	t.Setenv("DPULAB_TEST_VC_PASSWORD", secret)
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(inv, []byte(dpuLabDryInventory), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	f := runFlags{inventory: inv, stateDir: t.TempDir(), dryRun: true}
	if err := runLab(context.Background(), "redis-dpu-uptv2", f, &stdout, &stderr); err != nil {
		t.Fatalf("dry run: %v\n%s", err, stderr.String())
	}
	out := stderr.String()
	vc := "# vCenter vcenter.lab.example:443: "
	want := []string{
		"dpu-default-vm$ " + vc + "check dpu: ESXi host esx-dpu1.lab.example: read config.network.pnic[].dpuId",
		"dpu-uptv2-vm$ " + vc + "check dpu: ESXi host esx-dpu2.lab.example: read config.network.pnic[].dpuId",
		"dpu-default-vm$ " + vc + "check network-offload: VM redis-default: ",
		"dpu-uptv2-vm$ " + vc + "check network-offload: VM redis-uptv2: ",
		"dpu-uptv2-vm$ " + vc + "check uptv2: VM redis-uptv2: read config.hardware.device (VirtualVmxnet3.uptv2Enabled)",
		"dpu-default-vm$ " + vc + "check uptv2-off: VM redis-default: read config.hardware.device",
		"std-vm$ exec ", "/dpulab-agent server --config ", "/baseline-7000/redis.conf --port 7000",
		"dpu-uptv2-vm$ exec ", "/accelerated-8000/redis.conf --port 8000",
		"dpu-default-vm$ exec ", "/offload-9000/redis.conf --port 9000",
		"client1$ # variant \"Standard NIC\"\n  client1$ exec ", "--target 192.0.2.11:7000,",
		"client1$ # variant \"BlueField default mode\"\n  client1$ exec ", "--target 192.0.2.12:9000,",
		"client1$ # variant \"BlueField UPTv2\"\n  client1$ exec ", "--target 192.0.2.13:8000,",
		"std-vm$ " + vc + "while a bench runs: PerformanceManager.QueryPerf on ESXi esx-std.lab.example",
		"dpu-default-vm$ " + vc + "while a bench runs: PerformanceManager.QueryPerf on ESXi esx-dpu1.lab.example",
		"dpu-uptv2-vm$ " + vc + "while a bench runs: PerformanceManager.QueryPerf on ESXi esx-dpu2.lab.example",
		// The server VMs' own network, where the inventory names the VM.
		"dpu-default-vm$ " + vc + "while a bench runs: PerformanceManager.QueryPerf on VM redis-default: net.usage.average",
		"dpu-uptv2-vm$ " + vc + "while a bench runs: PerformanceManager.QueryPerf on VM redis-uptv2: net.usage.average",
	}
	for _, h := range []string{"client1", "std-vm", "dpu-default-vm", "dpu-uptv2-vm"} {
		want = append(want, h+"$ uname -sm", h+"$ ethtool -i ens192", h+"$ rm -rf -- /tmp/dpulab-redis-dpu-uptv2-")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the dry run does not show %q", w)
		}
	}
	if strings.Contains(out, "check uptv2: VM redis-default") {
		t.Errorf("the default-mode VM is checked for UPTv2 (its adapter must stay emulated)")
	}
	if strings.Contains(out, secret) || strings.Contains(stdout.String(), secret) {
		t.Errorf("the vCenter password appears in the dry run")
	}
	if strings.Contains(out, "not run:") || strings.Contains(out, rehearsalMark) {
		t.Errorf("with every role played, something says it will not run, or REHEARSAL")
	}
	if t.Failed() {
		t.Logf("dry run output:\n%s", out)
	}

	// The same inventory without the offload host.
	var kept []string
	skip := false
	for _, l := range strings.Split(dpuLabDryInventory, "\n") {
		if strings.HasPrefix(l, "  - name: ") {
			skip = l == "  - name: dpu-default-vm"
		}
		if !skip {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(inv, []byte(strings.Join(kept, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if err := runLab(context.Background(), "redis-dpu-uptv2", runFlags{inventory: inv, stateDir: t.TempDir(), dryRun: true}, &stdout, &stderr); err != nil {
		t.Fatalf("dry run without an offload host: %v\n%s", err, stderr.String())
	}
	out = stderr.String()
	why := "no host plays role offload in inventory " + inv + " (optional in this lab"
	for _, w := range []string{
		"(offload)$ # not run: " + why,
		"client1$ # variant \"BlueField default mode\"\n  client1$ # not run: " + why,
		"dpu-uptv2-vm$ " + vc + "check dpu: ESXi host esx-dpu2.lab.example",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("the dry run without an offload host does not show %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "dpu-default-vm") || strings.Contains(out, "--target 192.0.2.12") {
		t.Errorf("the dry run without an offload host still plans on it:\n%s", out)
	}
}
