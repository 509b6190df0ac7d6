package results

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// warningsFixture is a run with every kind of warning: it failed, after
// an interrupted first attempt; its host figures came from a simulator;
// bench "shared" (measured by the first attempt) ran the load generator on
// its server host, saturated; compare "sweep" lost a variant (not built
// in), ran a variant once at one point and not at the other, with a
// client-bound run that ended early and a clock warning; compare "none"
// finished no run.
func warningsFixture() *Results {
	busy := func(v float64) *float64 { return &v }
	run := func(n int, ops float64) RunResult {
		return RunResult{Run: n, OpsPerSec: ops, LatencyMs: Latency{Avg: 1, P99: 2}, ServerCPU: busy(99), BusyCores: busy(2),
			Series: []Point{{T: 1, OpsPerSec: ops, LatencyMs: Latency{Avg: 1, P99: 2}}, {T: 2, OpsPerSec: ops, LatencyMs: Latency{Avg: 1, P99: 2}}}}
	}
	point := func(v string, runs ...RunResult) SweepPoint {
		return SweepPoint{Value: v, Runs: runs, Stats: Summarize(runs)}
	}
	saturated := func(r RunResult) RunResult {
		r.ClientBound, r.ClientHostBusyPct = true, busy(100)
		return r
	}
	bound := saturated(run(1, 900))
	bound.ClientHostBusyPct = busy(96)
	bound.Err = "bench on client1: connection reset by peer"
	bound.ClockWarning = "the client hosts' clocks are 240 ms apart: synchronise them (chrony) before trusting the per-second figures"
	bound.Clients = []ClientSeries{{Host: "client1", OpsPerSec: 500, ClientHostBusyPct: busy(96), ClientBound: true}, {Host: "client2", OpsPerSec: 400, ClientHostBusyPct: busy(40)}}
	capped := func(p SweepPoint) SweepPoint {
		SetCapacity(&p, &Capacity{Objective: "p99<=1ms", Percentile: 99, CapMs: 1, RateOpsPerSec: 800, PercentileMs: 0.9, FailedRateOpsPerSec: 840, Precision: 0.05, Probes: 7, ClientBound: true})
		return p
	}
	started := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	return &Results{
		Version: ResultsVersion, Lab: "warn", Title: "Every warning", RunID: "20261206T100000Z",
		Started: started, Finished: started.Add(time.Hour),
		Status: RunFailed, FailedStep: "sweep", Error: "deploy: 2 of 4 servers did not answer PING within 10s",
		Attempts:        []Attempt{{Started: started, Status: RunInterrupted, InterruptedBy: "SIGINT (Ctrl-C)", FailedStep: "sweep"}},
		AttemptStarted:  started.Add(time.Minute),
		HostMetricsFrom: []HostMetricsSource{{Step: "sweep", VCenter: "https://127.0.0.1:8989/sdk", Simulated: true, Simulator: "govmomi vCenter simulator (vcsim)", ESXiHosts: []string{"DC0_H0"}}},
		Benches: []Compare{
			{Step: "shared", Title: "Load generator beside the servers", Client: "local", Attempt: 1, Variants: []VariantResult{
				{Label: "TCP loopback", Hosts: []string{"local"}, Points: []SweepPoint{point("", saturated(run(1, 1000)), saturated(run(2, 1010)))}},
				{Label: "Unix socket", Hosts: []string{"local"}, Points: []SweepPoint{point("", saturated(run(1, 3000)), saturated(run(2, 3030)))}},
			}},
			{Step: "sweep", Title: "A sweep with gaps", Sweep: "instances", Client: "client1", Clients: []string{"client1", "client2"},
				Unavailable: []Unavailable{{Label: "RDMA RC", Reason: "transport rdma: built without RDMA support"}},
				Variants: []VariantResult{
					{Label: "TCP", Hosts: []string{"server1"}, Points: []SweepPoint{point("10", run(1, 1000), run(2, 1100)), point("20", run(1, 2000), run(2, 2100))}},
					{Label: "Unix socket", Hosts: []string{"server1"}, Points: []SweepPoint{capped(point("10", bound))}},
				}},
			{Step: "none", Title: "Nothing ran", Unavailable: []Unavailable{{Label: "RDMA UC", Reason: "no host plays role rdma"}}},
		},
	}
}

// TestEveryWarningKind: the fixture yields each kind, about the bench it
// concerns, with the runs it is about.
func TestEveryWarningKind(t *testing.T) {
	r := warningsFixture()
	want := map[string][]WarningKind{
		"":       {WarnStatus, WarnSimulated},
		"shared": {WarnEarlierAttempt, WarnSaturated, WarnSharedCPU},
		"sweep":  {WarnUnavailable, WarnClientBound, WarnEndedEarly, WarnMissingPoints, WarnNoise, WarnClock},
		"none":   {WarnUnavailable, WarnNoRun},
	}
	got := map[string][]WarningKind{}
	for _, w := range AllWarnings(r) {
		got[w.Step] = append(got[w.Step], w.Kind)
		if w.Title == "" || w.Text == "" {
			t.Errorf("%s: empty title or text: %+v", w.Kind, w)
		}
	}
	for step, kinds := range want {
		if !slices.Equal(got[step], kinds) {
			t.Errorf("step %q: warnings %v, want %v", step, got[step], kinds)
		}
	}
	for _, w := range Warnings(r, &r.Benches[1]) {
		var items []string
		for _, it := range w.Items {
			items = append(items, it.String())
		}
		all := strings.Join(items, "\n")
		switch w.Kind {
		case WarnClientBound:
			if all != "Unix socket: instances=10, capacity search: its decisive probes ran on a saturated client host, so the capped figure may be the client's\nUnix socket: instances=10, run 1: busiest client host 96% busy (client1)" {
				t.Errorf("client-bound items: %q", all)
			}
		case WarnMissingPoints:
			if all != "Unix socket: no run at instances=20" {
				t.Errorf("missing items: %q", all)
			}
		case WarnNoise:
			if all != "Unix socket: instances=10, 1 run against 2 of TCP" {
				t.Errorf("noise items: %q", all)
			}
		case WarnUnavailable:
			if all != "RDMA RC: not run here: transport rdma: built without RDMA support" {
				t.Errorf("unavailable items: %q", all)
			}
		}
	}
	// A complete, measured run on hosts of its own has none.
	clean := &Results{Status: RunComplete, Benches: []Compare{{Step: "c", Client: "client", Variants: []VariantResult{
		{Label: "a", Hosts: []string{"s"}, Points: []SweepPoint{{Runs: []RunResult{{Run: 1}, {Run: 2}}}}},
		{Label: "b", Hosts: []string{"s"}, Points: []SweepPoint{{Runs: []RunResult{{Run: 1}, {Run: 2}}}}},
	}}}}
	if ws := AllWarnings(clean); len(ws) != 0 {
		t.Errorf("a clean run has warnings: %+v", ws)
	}
}

// TestReportsSayEveryWarning: report.md and report.html say each warning
// and each of its items in the source's words, report.md once per bench
// it concerns.
func TestReportsSayEveryWarning(t *testing.T) {
	r := warningsFixture()
	md := RenderMarkdown(r)
	p := renderPage(t, r)
	text := squash(textOf(p.root))
	for _, w := range AllWarnings(r) {
		if !strings.Contains(md, "> **"+w.Line()+"**") {
			t.Errorf("report.md lacks %s: %q", w.Kind, w.Line())
		}
		if !strings.Contains(text, squash(w.Line())) {
			t.Errorf("report.html lacks %s: %q", w.Kind, w.Line())
		}
		for _, it := range w.Items {
			if !strings.Contains(md, it.Text) || !strings.Contains(text, squash(it.String())) {
				t.Errorf("a report lacks %s's item %q", w.Kind, it.String())
			}
		}
	}
	if n := strings.Count(md, "SATURATED SHARED HOST"); n != 1 {
		t.Errorf("report.md says SATURATED SHARED HOST %d times, for one bench", n)
	}
	byID(t, p, "simulated")
}

// squash is s with every run of white space one space, as a browser lays
// text out.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestCaptionsOnlyForWhatWasMeasured: a run without ESXi figures (a
// quickstart) has no "host (ESXi)" caption in either report; a run with
// them keeps theirs.
func TestCaptionsOnlyForWhatWasMeasured(t *testing.T) {
	withESXi := warningsFixture()
	for vi := range withESXi.Benches[0].Variants {
		p := &withESXi.Benches[0].Variants[vi].Points[0]
		for ri := range p.Runs {
			for si := range p.Runs[ri].Series {
				p.Runs[ri].Series[si].Metrics = map[string]float64{MetricESXiCPU: 40}
			}
			p.Runs[ri].Metrics = map[string]float64{MetricESXiCPU: 40}
		}
		p.Stats = Summarize(p.Runs)
	}
	for _, tc := range []struct {
		name string
		r    *Results
		esxi bool
	}{
		{"recorded quickstart", loadFixture(t, "../../tui/testdata/recorded"), false},
		{"with ESXi figures", withESXi, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			md := RenderMarkdown(r)
			text := textOf(renderPage(t, r).root)
			for name, s := range map[string]string{"report.md": md, "report.html": text} {
				if got := strings.Contains(s, "host (ESXi) CPU % per second"); got != tc.esxi {
					t.Errorf("%s has a host (ESXi) CPU per-second chart: %v, want %v", name, got, tc.esxi)
				}
				if !tc.esxi && strings.Contains(s, "host (ESXi)") {
					t.Errorf("%s names host (ESXi) figures the run does not have", name)
				}
				if strings.Contains(s, "(no data)") || strings.Contains(s, "not measured in this run") {
					t.Errorf("%s has a caption for a metric the run did not measure", name)
				}
			}
		})
	}
}
