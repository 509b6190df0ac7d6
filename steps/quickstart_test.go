//go:build unix

package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/labs"
)

// dpulabBinary builds ./cmd/dpulab once per test binary.
func dpulabBinary(t testing.TB) string { return testpeer.Dpulab(t) }

// freePorts finds n consecutive free TCP ports on loopback.
func freePorts(t testing.TB, n int) int { return testpeer.FreePorts(t, n) }

// quickVars shortens the quickstart to seconds.
func quickVars(t testing.TB) map[string]string {
	return map[string]string{
		"instances":   "2",
		"port":        fmt.Sprint(freePorts(t, 2)),
		"clients":     "2",
		"duration":    "1s",
		"warmup":      "0s",
		"runs":        "2",
		"key_maximum": "1000",
	}
}

func quickstart(t testing.TB) *labs.Lab {
	t.Helper()
	l, err := labs.Find("quickstart")
	if err != nil {
		t.Fatalf("the embedded quickstart lab: %v", err)
	}
	return l
}

func TestQuickstartEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds dpulab and runs the quickstart lab (about 15 s)")
	}
	bin := dpulabBinary(t)
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	e := newEngine(t, quickstart(t), Options{Binary: bin, Vars: quickVars(t), ResultsDir: resDir, Yes: true}, rec)
	err := e.Run(testCtx(t, 3*time.Minute))
	if err != nil {
		t.Fatalf("quickstart failed: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	for id, f := range rec.finished() {
		if f.Status == results.Failed {
			t.Errorf("step %s failed: %s", id, f.Err)
		}
	}
	if _, err := os.Stat(e.workdir()); !os.IsNotExist(err) {
		t.Errorf("cleanup left the working directory %s (stat: %v)", e.workdir(), err)
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != results.ResultsVersion || r.Lab != "quickstart" || len(r.Hosts) == 0 {
		t.Errorf("results header = version %d lab %q hosts %v", r.Version, r.Lab, r.Hosts)
	}
	var cmp *results.Compare
	for i := range r.Benches {
		if r.Benches[i].Step == "compare" {
			cmp = &r.Benches[i]
		}
	}
	if cmp == nil || len(cmp.Variants) != 2 {
		t.Fatalf("compare results = %+v", cmp)
	}
	for vi, v := range cmp.Variants {
		if len(v.Points) != 1 || len(v.Points[0].Runs) != 2 {
			t.Fatalf("variant %s: points %+v", v.Label, v.Points)
		}
		p := v.Points[0]
		if p.Stats.OpsPerSec.Mean <= 0 || p.Stats.LatencyAvgMs.Mean <= 0 || p.Stats.LatencyP99Ms.Mean <= 0 || p.Stats.OpsPerSec.N != 2 {
			t.Errorf("variant %s stats = %+v", v.Label, p.Stats)
		}
		for _, run := range p.Runs {
			if run.OpsPerSec <= 0 || len(run.Series) == 0 || run.Series[0].OpsPerSec <= 0 {
				t.Errorf("variant %s run %d = %+v", v.Label, run.Run, run)
			}
		}
		if vi == 0 && p.DeltaPct != nil {
			t.Errorf("the baseline has deltas: %v", p.DeltaPct)
		}
		if vi == 1 {
			if _, ok := p.DeltaPct[results.MetricOps]; !ok {
				t.Errorf("no TPS delta for %s: %v", v.Label, p.DeltaPct)
			}
			if _, ok := p.DeltaPct[results.MetricLatP99]; !ok {
				t.Errorf("no p99 delta for %s: %v", v.Label, p.DeltaPct)
			}
		}
		t.Logf("%s: %.0f ± %.0f ops/s, avg %.3f ms, p99 %.3f ms, deltas %v", v.Label, p.Stats.OpsPerSec.Mean, p.Stats.OpsPerSec.Stddev,
			p.Stats.LatencyAvgMs.Mean, p.Stats.LatencyP99Ms.Mean, p.DeltaPct)
	}
	if cmp.Variants[1].Settings["transport"] != "unix" || cmp.Variants[0].Settings["transport"] != "tcp" {
		t.Errorf("variant settings = %v / %v", cmp.Variants[0].Settings, cmp.Variants[1].Settings)
	}
	// The emulated offload: measured and labelled as root, listed as
	// unavailable with the reason otherwise.
	var off *results.Compare
	for i := range r.Benches {
		if r.Benches[i].Step == "offload" {
			off = &r.Benches[i]
		}
	}
	switch {
	case off == nil:
		t.Errorf("no results for the offload step")
	case os.Geteuid() == 0:
		if len(off.Variants) != 3 || len(off.Unavailable) != 0 || !strings.HasPrefix(results.RunKind(r), "EMULATION") {
			t.Errorf("offload as root: %d variants, unavailable %v, run kind %q", len(off.Variants), off.Unavailable, results.RunKind(r))
		}
		for _, v := range off.Variants {
			if v.Emulation == "" || len(v.Points) != 1 || v.Points[0].Path == nil || v.Points[0].Stats.OpsPerSec.Mean <= 0 {
				t.Errorf("offload variant %s: emulation %q, points %+v", v.Label, v.Emulation, v.Points)
				continue
			}
			p := v.Points[0]
			t.Logf("%s: %.0f ± %.0f ops/s, p99 %.3f ms, path %+v", v.Label, p.Stats.OpsPerSec.Mean, p.Stats.OpsPerSec.Stddev, p.Stats.LatencyP99Ms.Mean, *p.Path)
		}
	default:
		if len(off.Variants) != 0 || len(off.Unavailable) != 3 || results.RunKind(r) != "" {
			t.Errorf("offload without root: variants %d, unavailable %v, run kind %q", len(off.Variants), off.Unavailable, results.RunKind(r))
		}
	}
	// The per-second samples reached the event stream.
	samples := 0
	for _, ev := range rec.events() {
		if s, ok := ev.(Sample); ok && s.Step == "compare" && s.Point.OpsPerSec > 0 {
			samples++
		}
	}
	if samples < 4 {
		t.Errorf("%d compare samples emitted, want at least one per second per run", samples)
	}
	var last float64
	progress := 0
	for _, ev := range rec.events() {
		if p, ok := ev.(Progress); ok && p.Step == "compare" {
			progress++
			if p.Fraction < 0 || p.Fraction > 1 || p.Label == "" {
				t.Errorf("progress = %+v", p)
			}
			last = p.Fraction
		}
	}
	if progress < 4 || last < 0.5 {
		t.Errorf("%d progress events, last fraction %.2f", progress, last)
	}
	for _, f := range []string{results.ResultsFile, results.SamplesFile, results.ReportFile} {
		if fi, err := os.Stat(filepath.Join(resDir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(resDir, results.ReportFile))
	for _, want := range []string{"| TCP loopback |", "| Unix socket |", "TPS per second (run 1)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// A delta is better or worse only beyond the runs' noise, and never
	// on a saturated host; otherwise it says which (results.Delta.Format).
	if !regexp.MustCompile(`% better, p|% worse, p|~ no significant difference: |(saturated shared host|client-bound): no verdict`).Match(md) {
		t.Errorf("report.md shows no deltas:\n%s", md)
	}
	// Cleanup stopped every server it started.
	st, _ := LoadState(e.StatePath())
	if st == nil || len(st.Procs) != 0 {
		t.Errorf("processes left in state after cleanup: %+v", st)
	}
	for _, in := range []string{quickVarsPort(e)} {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+in, time.Second); err == nil {
			c.Close()
			t.Errorf("a server still listens on %s after cleanup", in)
		}
	}
}

func quickVarsPort(e *Engine) string { return e.Vars()["port"] }

func TestQuickstartAbortCleansUpAndKeepsFinishedRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds dpulab and runs part of the quickstart lab")
	}
	bin := dpulabBinary(t)
	vars := quickVars(t)
	vars["runs"] = "5"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	var once sync.Once
	inner := rec.emit
	resDir := filepath.Join(t.TempDir(), "results")
	stateDir := t.TempDir()
	e := newEngine(t, quickstart(t), Options{Binary: bin, Vars: vars, ResultsDir: resDir, StateDir: stateDir, Yes: true}, nil)
	// Abort (as Ctrl-C does) once the compare has finished its first run.
	e.opts.Emit = func(ev Event) {
		inner(ev)
		if o, ok := ev.(Output); ok && o.Step == "compare" && strings.Contains(o.Line.Text, "run 1/5") {
			once.Do(cancel)
		}
	}
	err := e.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("Run = %v, want the interrupted step named", err)
	}
	if f := rec.finished()["cleanup"]; f.Status != results.Done {
		t.Errorf("cleanup step after abort = %+v", f)
	}
	if _, err := os.Stat(e.workdir()); !os.IsNotExist(err) {
		t.Errorf("cleanup after the abort left the working directory %s (stat: %v)", e.workdir(), err)
	}
	if f := rec.finished()["compare"]; f.Status != results.Interrupted || strings.Contains(strings.Join(f.Tail, "\n"), `{"type"`) {
		t.Errorf("aborted compare = %+v (its tail must not be the bench's JSON)", f)
	}
	port := e.Vars()["port"]
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
		c.Close()
		t.Errorf("a server still listens on %s after the abort", port)
	}
	st, err := LoadState(e.StatePath())
	if err != nil || st == nil {
		t.Fatal(err)
	}
	if len(st.Procs) != 0 {
		t.Errorf("state still lists processes: %+v", st.Procs)
	}
	if st.Steps["deploy"].Status != results.Pending || st.Steps["bench"].Status != results.Done || st.Steps["compare"].Status != results.Interrupted {
		t.Errorf("saved statuses: deploy %v bench %v compare %v", st.Steps["deploy"].Status, st.Steps["bench"].Status, st.Steps["compare"].Status)
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, b := range r.Benches {
		if b.Step == "compare" {
			for _, v := range b.Variants {
				for _, p := range v.Points {
					runs += len(p.Runs)
				}
			}
		}
	}
	if runs < 1 {
		t.Errorf("the finished compare run is not in results.json")
	}
	// The next run resumes at deploy (its servers were stopped), not at
	// the compare.
	e2 := newEngine(t, quickstart(t), Options{Binary: bin, StateDir: stateDir}, nil)
	if got := e2.Steps()[e2.Resume()].ID; got != "deploy" {
		t.Errorf("resume at %s, want deploy", got)
	}
}

// TestQuickstartResumeAfterSIGKILLKeepsServers kills `dpulab run` (all of
// it, SIGKILL) in the middle of the compare: the next run resumes at the
// compare and uses the servers the killed run left running (they still
// answer), then cleanup stops them.
func TestQuickstartResumeAfterSIGKILLKeepsServers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds dpulab and runs the quickstart lab twice")
	}
	bin := dpulabBinary(t)
	vars := quickVars(t)
	vars["duration"] = "2s"
	stateDir := t.TempDir()
	vb, _ := json.Marshal(vars)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DPULAB_STEPS_CHILD=1", "CHILD_STATE="+stateDir, "CHILD_LAB=quickstart", "CHILD_VARS="+string(vb), "CHILD_BIN="+bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(stateDir, "quickstart.json")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if s, err := LoadState(statePath); err == nil && s != nil && s.Steps["bench"].Status == results.Done {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			t.Fatal("the child never finished the bench step")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // into the compare
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()

	st, err := LoadState(statePath)
	if err != nil || st == nil || len(st.Procs) != 2 {
		t.Fatalf("state after SIGKILL = %+v, %v; want the 2 servers recorded", st, err)
	}
	rec := &recorder{}
	// No ResultsDir: a resumed run writes where the killed one did.
	e, err := New(quickstart(t), Options{Binary: bin, StateDir: stateDir, Yes: true, Emit: rec.emit})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Steps()[e.Resume()].ID; got != "compare" {
		t.Fatalf("resume at %s, want compare", got)
	}
	if err := e.Run(testCtx(t, 2*time.Minute)); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	for _, ev := range rec.events() {
		// The offload step (as root) starts its own servers inside its
		// emulated paths; the compare must not.
		if o, ok := ev.(Output); ok && o.Step == "compare" && strings.HasPrefix(o.Line.Text, "started server:") {
			t.Errorf("the resumed run started servers again: %s", o.Line.Text)
		}
	}
	r, err := results.LoadResults(filepath.Join(stateDir, "res"))
	if err != nil {
		t.Fatal(err)
	}
	var cmp *results.Compare
	for i := range r.Benches {
		if r.Benches[i].Step == "compare" {
			cmp = &r.Benches[i]
		}
	}
	if cmp == nil || len(cmp.Variants) != 2 || len(cmp.Variants[1].Points) != 1 || cmp.Variants[1].Points[0].Stats.OpsPerSec.Mean <= 0 {
		t.Fatalf("compare after resume = %+v", cmp)
	}
	if len(r.Benches) < 2 || r.Benches[0].Step != "bench" {
		t.Errorf("the bench step's result from the killed run is not kept: %d benches", len(r.Benches))
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+vars["port"], time.Second); err == nil {
		c.Close()
		t.Errorf("a server still listens after cleanup")
	}
}
