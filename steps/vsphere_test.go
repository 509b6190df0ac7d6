//go:build unix

package steps

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/results"
)

// The vCenter these tests see is govmomi's simulator (in-process): every
// host (ESXi) figure they produce is the simulator's made-up data.
const (
	vsUser     = "lab@vsphere.local"
	vsPassword = "Pw-steps-4b1d-never-shown"
)

// vsSim starts the simulator (VPX model: hosts DC0_H0, DC0_C0_H0..2) over
// TLS and returns its SDK URL and its certificate's SHA-256 thumbprint.
func vsSim(t *testing.T) (string, string) {
	t.Helper()
	u, thumb, _ := vsSimModel(t)
	return u, thumb
}

// vsSimModel is vsSim with the model, for tests that change its objects.
func vsSimModel(t *testing.T) (string, string, *simulator.Model) {
	t.Helper()
	m := simulator.VPX()
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	m.Service.TLS = new(tls.Config)
	m.Service.Listen = &url.URL{User: url.UserPassword(vsUser, vsPassword)}
	s := m.Service.NewServer()
	t.Cleanup(func() {
		s.Close()
		m.Remove()
	})
	return "https://" + s.URL.Host + "/sdk", vsphere.Thumbprint(s.Certificate()), m
}

const vsLab = `
id: vslab
title: vSphere lab
summary: a compare on VMs whose ESXi hosts vCenter samples
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
    instances: "1"
    port: "7000"
    bind: 0.0.0.0
  - id: compare
    title: Compare
    kind: compare
    on: [client]
    target: g
    clients: 1
    duration: 3s
    runs: 1
    variants:
      - label: standard
        transport: tcp
      - label: accelerated
        transport: tcp
  - id: cleanup
    title: Cleanup
    kind: cleanup
    on: [server]
    run: "true"
`

// benchFake answers the real bench (not the deploy's PING) with three
// seconds of made-up load and a run summary.
func benchFake(f *fakeTarget) {
	inner := f.handle
	f.handle = func(cmd string) ([]string, int) {
		switch {
		case strings.Contains(cmd, " bench --json ") && !strings.Contains(cmd, "/dev/null"):
			var out []string
			for s := 1; s <= 3; s++ {
				out = append(out, fmt.Sprintf(`{"type":"sample","run":1,"t_seconds":%d,"ops_per_sec":2000000,"latency_ms":{"avg":0.1,"p50":0.1,"p99":0.2,"max":0.3},"errors":0}`, s))
			}
			out = append(out, `{"type":"run","run":1,"duration_seconds":3,"ops":6000000,"ops_per_sec":2000000,"latency_ms":{"avg":0.1,"p50":0.1,"p99":0.2,"max":0.3},"errors":0,"targets":[]}`)
			return out, 0
		case strings.HasPrefix(cmd, "getconf"):
			return []string{"4"}, 0
		}
		if inner != nil {
			return inner(cmd)
		}
		return nil, 0
	}
}

// vsEngine is an engine over vsLab: client host c, server host s (a VM on
// ESXi DC0_H0), vcenter at u with the given thumbprint line (may be "").
func vsEngine(t *testing.T, u, thumbLine string, rec *recorder) (*Engine, map[string]*fakeTarget) {
	t.Helper()
	return vsEngineLab(t, vsLab, u, thumbLine, rec)
}

// vsEngineLab is vsEngine over another lab of the same roles.
func vsEngineLab(t *testing.T, lab, u, thumbLine string, rec *recorder) (*Engine, map[string]*fakeTarget) {
	t.Helper()
	dir := t.TempDir()
	inv := fmt.Sprintf(`vcenter:
  url: %s
  user: %s
%shosts:
  - name: c
    address: 192.0.2.1
    roles: [client]
  - name: s
    address: 192.0.2.2
    roles: [server]
    esxi: DC0_H0
    vm: DC0_H0_VM0
`, u, vsUser, thumbLine)
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
	c, s := serverFake("c"), serverFake("s")
	benchFake(c)
	benchFake(s)
	hosts := map[string]*fakeTarget{"c": c, "s": s}
	targets := func(name string) (runner.Target, error) {
		if f, ok := hosts[name]; ok {
			return f, nil
		}
		return nil, fmt.Errorf("no fake for %s", name)
	}
	e := newEngine(t, loadLab(t, lab), Options{Inventory: in, Targets: targets, Binary: bin, Yes: true}, rec)
	e.vc.tail, e.vc.poll = 20*time.Second, 100*time.Millisecond
	return e, hosts
}

// answerVSphere answers the password prompt with pw and a thumbprint
// prompt with choice; it counts both.
func answerVSphere(pw, choice string, secrets, keys *int) func(Prompt) {
	return func(p Prompt) {
		switch p.Type {
		case PromptSecret:
			*secrets++
			p.Reply(Answer{Secret: pw})
		case PromptHostKey:
			*keys++
			p.Reply(Answer{Choice: choice})
		default:
			p.Reply(Answer{Choice: "no"})
		}
	}
}

// everything the run said or wrote, for a secret to be looked for in.
func allOutput(t *testing.T, rec *recorder, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range rec.events() {
		j, _ := json.Marshal(ev)
		b.Write(j)
		fmt.Fprintf(&b, "%+v\n", ev)
	}
	if dir != "" {
		_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				data, _ := os.ReadFile(p)
				b.Write(data)
			}
			return nil
		})
	}
	return b.String()
}

func TestCompareGetsHostESXiMetrics(t *testing.T) {
	u, thumb := vsSim(t)
	rec := &recorder{}
	var secrets, keys int
	rec.onPrompt = answerVSphere(vsPassword, "save", &secrets, &keys)
	e, _ := vsEngine(t, u, "", rec)
	// The dry run's plan shows the sampler's queries on the server host.
	plan, err := e.Plan(1)
	if err != nil {
		t.Fatal(err)
	}
	var shows bool
	for _, c := range plan {
		shows = shows || (c.Host == "s" && strings.Contains(c.Cmd, "QueryPerf on ESXi DC0_H0"))
	}
	if !shows {
		t.Errorf("the compare's plan does not show the vSphere sampler on s: %+v", plan)
	}
	if err := e.Run(testCtx(t, 2*time.Minute)); err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	if secrets != 1 || keys != 1 {
		t.Errorf("%d password prompts and %d thumbprint prompts, want one each (one session for the run)", secrets, keys)
	}
	var shown string
	for _, ev := range rec.events() {
		if p, ok := ev.(Prompt); ok && p.Type == PromptHostKey {
			shown = p.Fingerprint
		}
	}
	if shown != thumb {
		t.Errorf("thumbprint prompt showed %q, want the certificate's %s", shown, thumb)
	}
	dir := e.resDir
	res, err := results.LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Benches) != 1 || len(res.Benches[0].Variants) != 2 {
		t.Fatalf("results: %+v", res.Benches)
	}
	for _, v := range res.Benches[0].Variants {
		runs := v.Points[0].Runs
		if len(runs) != 1 {
			t.Fatalf("%s: %d runs, want 1 (a held run is published once)", v.Label, len(runs))
		}
		n, vmNet := 0, 0
		for _, p := range runs[0].Series {
			cpu, ok := p.Metrics[results.MetricESXiCPU]
			if !ok {
				continue
			}
			n++
			if cpu < 0 || cpu > 100 {
				t.Errorf("%s: host (ESXi) CPU %v%%", v.Label, cpu)
			}
			if _, ok := p.Metrics[results.MetricESXiNetGbps]; !ok {
				t.Errorf("%s: a second with host CPU but no host network: %+v", v.Label, p.Metrics)
			}
			if r, ok := p.Metrics[results.MetricESXiCPUReady]; !ok || r < 0 {
				t.Errorf("%s: a second with host CPU but no CPU ready: %+v", v.Label, p.Metrics)
			}
			if _, ok := p.Metrics[results.MetricESXiVMNetGbps]; ok {
				vmNet++
			}
		}
		if vmNet == 0 {
			t.Errorf("%s: no second carries the server VM's network (ESXi): %+v", v.Label, runs[0].Series)
		}
		if n == 0 {
			t.Errorf("%s: no second carries host (ESXi) metrics: %+v", v.Label, runs[0].Series)
		}
		if _, ok := v.Points[0].Stats.Metric(results.MetricESXiCPU); !ok {
			t.Errorf("%s: the point's summary lacks host (ESXi) CPU: %+v", v.Label, v.Points[0].Stats.Metrics)
		}
	}
	// Where the host figures come from: the simulator, said as such.
	if len(res.HostMetricsFrom) != 1 {
		t.Fatalf("host_metrics_from %+v, want one source", res.HostMetricsFrom)
	}
	src := res.HostMetricsFrom[0]
	if src.Step != "compare" || src.VCenter != u || !src.Simulated || src.Simulator != vsphere.SimulatorProduct || src.Product == "" || src.Version == "" ||
		!slices.Equal(src.ESXiHosts, []string{"DC0_H0"}) || !slices.Equal(src.VMs, []string{"DC0_H0_VM0"}) {
		t.Errorf("host_metrics_from[0] = %+v", src)
	}
	if out := strings.Join(rec.output(), "\n"); !strings.Contains(out, "vSphere figures and checks from: SIMULATED by "+vsphere.SimulatorProduct) {
		t.Errorf("the run does not say its vSphere figures are simulated:\n%s", out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"> **SIMULATED: the host (ESXi) figures come from a vCenter simulator", "Host (ESXi) figures of this step from: SIMULATED: made-up figures from " + vsphere.SimulatorProduct + " at " + u, "ESXi host(s) DC0_H0; VM(s) DC0_H0_VM0"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report.md lacks %q", w)
		}
	}
	if html, err := os.ReadFile(filepath.Join(dir, results.ReportHTMLFile)); err != nil || !strings.Contains(string(html), `id="simulated"`) || !strings.Contains(string(html), "Host (ESXi) figures of this step from: SIMULATED") {
		t.Errorf("report.html (%v) does not say where the host figures come from", err)
	}
	if !strings.Contains(string(md), "| host (ESXi) CPU % |") || !strings.Contains(string(md), "| host (ESXi) server VMs' network Gb/s |") || !strings.Contains(string(md), "| host (ESXi) CPU ready % |") {
		t.Errorf("report.md lacks a host (ESXi) row (CPU, server VMs' network, CPU ready):\n%s", md)
	}
	if html, err := os.ReadFile(filepath.Join(dir, results.ReportHTMLFile)); err != nil || !strings.Contains(string(html), "host (ESXi) CPU %") {
		t.Errorf("report.html (%v) has no host (ESXi) CPU", err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, results.SamplesFile))
	if err == nil && !strings.Contains(string(csv), results.MetricESXiCPU) {
		t.Errorf("samples.csv has no %s column", results.MetricESXiCPU)
	}
	if all := allOutput(t, rec, dir); strings.Contains(all, vsPassword) {
		t.Error("the vCenter password appears in the events or the results")
	}
	// The thumbprint was saved where the run keeps its state: a second
	// session would not ask.
	if b, err := os.ReadFile(filepath.Join(e.opts.StateDir, vsphere.KnownThumbprintsName)); err != nil || !strings.Contains(string(b), thumb) {
		t.Errorf("known thumbprints %q (%v), want %s saved", b, err, thumb)
	}
}

func TestVCenterWrongThumbprintStopsTheRun(t *testing.T) {
	u, thumb := vsSim(t)
	wrong := strings.Repeat("ab", 32)
	rec := &recorder{}
	var secrets, keys int
	rec.onPrompt = answerVSphere(vsPassword, "save", &secrets, &keys)
	e, _ := vsEngine(t, u, "  thumbprint: "+wrong+"\n", rec)
	err := e.Run(testCtx(t, 2*time.Minute))
	if err == nil {
		t.Fatal("a run whose vCenter presents another certificate than the pinned one went on")
	}
	msg := strings.ToLower(err.Error())
	if !strings.Contains(msg, strings.ToLower(strings.ReplaceAll(thumb, ":", ""))) && !strings.Contains(msg, strings.ToLower(thumb)) {
		t.Errorf("error does not show the presented thumbprint %s: %v", thumb, err)
	}
	if !strings.Contains(strings.ReplaceAll(msg, ":", ""), wrong) {
		t.Errorf("error does not show the pinned thumbprint %s: %v", wrong, err)
	}
	if secrets != 0 {
		t.Error("the password was asked for before the certificate was trusted")
	}
	if f := rec.finished()["compare"]; f.Status != results.Failed {
		t.Errorf("compare %v, want failed", f.Status)
	}
}

func TestVCenterWrongPasswordNeverShown(t *testing.T) {
	u, thumb := vsSim(t)
	const bad = "Wrong-9d2e-never-shown"
	rec := &recorder{}
	var secrets, keys int
	rec.onPrompt = answerVSphere(bad, "save", &secrets, &keys)
	e, _ := vsEngine(t, u, "  thumbprint: "+strings.ReplaceAll(thumb, ":", "")+"\n", rec)
	err := e.Run(testCtx(t, 2*time.Minute))
	if err == nil {
		t.Fatal("a refused vCenter login went on")
	}
	if !strings.Contains(err.Error(), "refused the login") {
		t.Errorf("error %v does not say the login was refused", err)
	}
	if keys != 0 {
		t.Error("a thumbprint pinned in the inventory was asked about")
	}
	if all := allOutput(t, rec, e.resDir) + err.Error(); strings.Contains(all, bad) {
		t.Error("the typed password appears in the events, results or error")
	}
}

// uptv2VM makes the simulated VM's first adapter a VMXNET3 with UPT
// support on, and UPTv2 active or not as vSphere would report it.
func uptv2VM(t *testing.T, m *simulator.Model, vmName string, active bool) {
	t.Helper()
	reg := m.Map()
	for _, obj := range reg.All("VirtualMachine") {
		if obj.Entity().Name != vmName {
			continue
		}
		reg.WithLock(m.Service.Context, obj, func() {
			vm := obj.(*simulator.VirtualMachine)
			for i, d := range vm.Config.Hardware.Device {
				card, ok := d.(types.BaseVirtualEthernetCard)
				if !ok {
					continue
				}
				v3 := &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: *card.GetVirtualEthernetCard()}, Uptv2Enabled: types.NewBool(true)}
				vm.Config.Hardware.Device[i] = v3
				state := &types.VirtualMachineDeviceRuntimeInfoVirtualEthernetCardRuntimeState{Uptv2Active: types.NewBool(active)}
				if !active {
					state.Uptv2InactiveReasonVm = []string{"vmNptInsufficientMemoryReservation"}
				}
				vm.Runtime.Device = []types.VirtualMachineDeviceRuntimeInfo{{Key: v3.Key, RuntimeState: state}}
				return
			}
		})
		return
	}
	t.Fatalf("simulator has no VM %s", vmName)
}

const vsCheckLab = `
id: vscheck
title: vSphere check
summary: UPTv2 on the server VM
duration: 1m
roles:
  client: load
  server: servers
steps:
  - id: uptv2
    title: UPTv2
    kind: check
    on: [server]
    hardware: true
    vsphere: uptv2
    hint: the lab's hint
`

func TestVSphereCheckUPTv2(t *testing.T) {
	for _, active := range []bool{true, false} {
		t.Run(fmt.Sprint("active=", active), func(t *testing.T) {
			u, thumb, m := vsSimModel(t)
			uptv2VM(t, m, "DC0_H0_VM0", active)
			rec := &recorder{}
			var secrets, keys int
			rec.onPrompt = answerVSphere(vsPassword, "save", &secrets, &keys)
			e, _ := vsEngineLab(t, vsCheckLab, u, "  thumbprint: "+thumb+"\n", rec)
			plan, err := e.Plan(0)
			if err != nil || len(plan) != 1 || plan[0].Host != "s" || !strings.Contains(plan[0].Cmd, "VM DC0_H0_VM0") || !strings.Contains(plan[0].Cmd, "uptv2Enabled") {
				t.Fatalf("plan %+v (%v), want the vSphere query on host s", plan, err)
			}
			st := e.RunStep(testCtx(t, time.Minute), 0)
			out := strings.Join(rec.output(), "\n")
			fin := rec.finished()["uptv2"]
			switch {
			case active && st != results.Done:
				t.Fatalf("UPTv2 active: %v %s\n%s", st, fin.Err, out)
			case !active && st != results.Failed:
				t.Fatalf("UPTv2 inactive: %v\n%s", st, out)
			case !active && (!strings.Contains(fin.Err, "vmNptInsufficientMemoryReservation") || fin.Hint == ""):
				t.Errorf("failure %q (hint %q) lacks vCenter's reason or a hint", fin.Err, fin.Hint)
			}
			if !strings.Contains(out, "uptv2 VM DC0_H0_VM0") {
				t.Errorf("the result is not said:\n%s", out)
			}
			if secrets != 1 {
				t.Errorf("%d password prompts, want 1", secrets)
			}
			e.Cleanup(testCtx(t, time.Minute))
			if strings.Contains(allOutput(t, rec, ""), vsPassword) {
				t.Error("the password appears in the events")
			}
		})
	}
}

func TestVSphereCheckWithoutVCenter(t *testing.T) {
	rec := &recorder{}
	e := newEngine(t, loadLab(t, vsCheckLab), Options{}, rec)
	plan, err := e.Plan(0)
	if err != nil || len(plan) != 1 || !strings.Contains(plan[0].Cmd, "no vcenter: section") {
		t.Fatalf("plan %+v (%v)", plan, err)
	}
	if st := e.RunStep(testCtx(t, time.Minute), 0); st != results.Failed {
		t.Fatalf("status %v, want failed", st)
	}
	f := rec.finished()["uptv2"]
	if !strings.Contains(f.Err, "no vcenter: section") || !strings.Contains(f.Err, "UPT support on") || !strings.Contains(f.Hint, "--rehearse") {
		t.Errorf("failure %q (hint %q) does not say what to add, where to look in vCenter, and how to rehearse", f.Err, f.Hint)
	}
	// skip_if (bare metal) skips it, as for a command check.
	lab := strings.Replace(vsCheckLab, "    vsphere: uptv2\n", "    vsphere: uptv2\n    skip_if: \"true\"\n", 1)
	rec = &recorder{}
	e = newEngine(t, loadLab(t, lab), Options{}, rec)
	if st := e.RunStep(testCtx(t, time.Minute), 0); st != results.Skipped {
		t.Fatalf("with skip_if true: %v, want skipped", st)
	}
}

// TestVSphereCheckUPTv2Off: the default-mode VM's check through the engine
// against govmomi's simulator: an adapter with UPT active fails it with the
// hint, an emulated one passes; the plan shows the query on the host.
func TestVSphereCheckUPTv2Off(t *testing.T) {
	lab := strings.Replace(strings.Replace(vsCheckLab, "vsphere: uptv2\n", "vsphere: uptv2-off\n", 1), "id: uptv2\n", "id: uptoff\n", 1)
	for _, active := range []bool{true, false} {
		t.Run(fmt.Sprint("active=", active), func(t *testing.T) {
			u, thumb, m := vsSimModel(t)
			uptv2VM(t, m, "DC0_H0_VM0", active)
			rec := &recorder{}
			var secrets, keys int
			rec.onPrompt = answerVSphere(vsPassword, "save", &secrets, &keys)
			e, _ := vsEngineLab(t, lab, u, "  thumbprint: "+thumb+"\n", rec)
			plan, err := e.Plan(0)
			if err != nil || len(plan) != 1 || plan[0].Host != "s" || !strings.Contains(plan[0].Cmd, "check uptv2-off: VM DC0_H0_VM0") {
				t.Fatalf("plan %+v (%v), want the uptv2-off query on host s", plan, err)
			}
			st := e.RunStep(testCtx(t, time.Minute), 0)
			out := strings.Join(rec.output(), "\n")
			fin := rec.finished()["uptoff"]
			switch {
			case active && (st != results.Failed || !strings.Contains(fin.Err, "UPT active") || fin.Hint == ""):
				t.Fatalf("UPT active on the default-mode VM: %v, %q (hint %q)\n%s", st, fin.Err, fin.Hint, out)
			case !active && st != results.Done:
				t.Fatalf("UPT inactive (emulated): %v %s\n%s", st, fin.Err, out)
			case !active && !strings.Contains(out, "becomes active once that is resolved"):
				t.Errorf("an inactive UPT passes without saying it may become active:\n%s", out)
			}
		})
	}
}
