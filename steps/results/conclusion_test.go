package results

import (
	"strings"
	"testing"
)

func TestConclude(t *testing.T) {
	point := func(v string, runs ...float64) SweepPoint {
		p := SweepPoint{Value: v}
		for i, o := range runs {
			p.Runs = append(p.Runs, RunResult{Run: i + 1, OpsPerSec: o, LatencyMs: Latency{Avg: 1, P99: 2}})
		}
		p.Stats = Summarize(p.Runs)
		return p
	}
	cmpOf := func(sweep string, base, acc []SweepPoint) Compare {
		return Compare{Step: "c", Sweep: sweep, Variants: []VariantResult{{Label: "tcp", Points: base}, {Label: "rdma", Points: acc}}}
	}
	for _, tt := range []struct {
		name    string
		r       Results
		want    []string
		verdict Verdict
		cmp     bool
	}{
		{"significant at the last sweep point", Results{Benches: []Compare{cmpOf("instances",
			[]SweepPoint{point("1", 100, 102, 98), point("4", 400, 404, 396)},
			[]SweepPoint{point("1", 100, 100, 100), point("4", 520, 524, 516)})}},
			[]string{"rdma: TPS +30.0% ± 0.8% against tcp at instances=4, better beyond the run-to-run noise (p<0.001, 3 runs each)"}, Improved, true},
		{"within the noise", Results{Benches: []Compare{cmpOf("", []SweepPoint{point("", 100, 120)}, []SweepPoint{point("", 105, 125)})}},
			[]string{"rdma: TPS +4.5% ± 12.9%", "against tcp, within the run-to-run noise (p=0.", "2 runs each)"}, Same, true},
		{"one run a side", Results{Benches: []Compare{cmpOf("", []SweepPoint{point("", 100)}, []SweepPoint{point("", 150)})}},
			[]string{"rdma: TPS +50.0% against tcp, not tested against the noise: 1 run a side"}, Untested, true},
		{"one variant", Results{Benches: []Compare{{Step: "b", Variants: []VariantResult{{Label: "tcp", Points: []SweepPoint{point("", 1000, 1200)}}}}}},
			[]string{"tcp: TPS 1,100 ± 141 ops/s over 2 runs (one variant: nothing compared)"}, 0, false},
		{"nothing", Results{}, []string{"No measurement finished"}, 0, false},
	} {
		c := Conclude(&tt.r)
		for _, w := range tt.want {
			if !strings.Contains(c.Text, w) {
				t.Errorf("%s: %q lacks %q", tt.name, c.Text, w)
			}
		}
		if c.Compared != tt.cmp || (c.Compared && c.Verdict != tt.verdict) {
			t.Errorf("%s: compared %v verdict %v, want %v %v", tt.name, c.Compared, c.Verdict, tt.cmp, tt.verdict)
		}
	}
}

// TestConclusionOnASaturatedHost: a difference measured while the load
// generator's host was saturated, which the report warns of, is said with
// its figures and never called better or worse, even beyond the noise.
func TestConclusionOnASaturatedHost(t *testing.T) {
	busy := 100.0
	point := func(host string, bound bool, runs ...float64) VariantResult {
		p := SweepPoint{}
		for i, o := range runs {
			p.Runs = append(p.Runs, RunResult{Run: i + 1, OpsPerSec: o, LatencyMs: Latency{Avg: 1, P99: 2}, ClientBound: bound, ClientHostBusyPct: &busy})
		}
		p.Stats = Summarize(p.Runs)
		return VariantResult{Hosts: []string{host}, Points: []SweepPoint{p}}
	}
	for _, tt := range []struct {
		name, server string
		bound        bool
		kind         WarningKind
		want         string
	}{
		{"shared host", "local", true, WarnSaturated, "measured on a saturated shared host"},
		{"client host of its own", "server1", true, WarnClientBound, "measured with a saturated client host (client-bound)"},
		{"not saturated", "local", false, "", "better beyond the run-to-run noise"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, acc := point(tt.server, tt.bound, 100, 102, 98), point(tt.server, tt.bound, 290, 296, 293)
			base.Label, acc.Label = "host does it all", "full offload"
			r := &Results{Benches: []Compare{{Step: "offload", Client: "local", Variants: []VariantResult{base, acc}}}}
			c := Conclude(r)
			if c.Saturated != tt.kind || !strings.Contains(c.Text, tt.want) {
				t.Fatalf("Conclude = %+v, want saturated %q and %q", c, tt.kind, tt.want)
			}
			if tt.kind == "" {
				return
			}
			for _, no := range []string{"better", "worse"} {
				if strings.Contains(c.Text, no) {
					t.Errorf("%q calls the difference %s", c.Text, no)
				}
			}
			if !strings.Contains(c.Text, "full offload: TPS +193.") || !strings.Contains(c.Text, "not a verdict") || c.Verdict != Moved {
				t.Errorf("Conclude = %+v: want the measured difference and not a verdict", c)
			}
			// The report warns of the same runs the conclusion is about.
			var warned bool
			for _, w := range Warnings(r, &r.Benches[0]) {
				warned = warned || w.Kind == tt.kind
			}
			if !warned {
				t.Errorf("the conclusion says %s, the report's warnings do not: %+v", tt.kind, Warnings(r, &r.Benches[0]))
			}
		})
	}
}

// TestDeltaAtSaturated: a delta beyond the noise between points measured
// on a saturated shared host is no verdict in every table's words (the
// rule the conclusion follows): Format and Short say so, Verdict is
// Moved; with the host not saturated the same runs are "better".
func TestDeltaAtSaturated(t *testing.T) {
	runs := func(tps []float64, bound bool) SweepPoint {
		var p SweepPoint
		for i, v := range tps {
			p.Runs = append(p.Runs, RunResult{Run: i + 1, OpsPerSec: v, ClientBound: bound})
		}
		p.Stats = Summarize(p.Runs)
		return p
	}
	for _, tc := range []struct {
		name   string
		bound  bool
		hosts  []string
		verd   Verdict
		format string
		short  string
	}{
		{"saturated shared host", true, []string{"lab"}, Moved, "saturated shared host: no verdict", "+50.0% !"},
		{"client-bound", true, []string{"server1"}, Moved, "client-bound: no verdict", "+50.0% !"},
		{"not saturated", false, []string{"lab"}, Improved, "+50.0% better", "+50.0% better"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Compare{Client: "lab", Variants: []VariantResult{
				{Label: "base", Hosts: tc.hosts, Points: []SweepPoint{runs([]float64{100, 101, 99}, tc.bound)}},
				{Label: "fast", Hosts: tc.hosts, Points: []SweepPoint{runs([]float64{150, 151, 149}, false)}},
			}}
			d, ok := DeltaAt(c, MetricOps, &c.Variants[1], &c.Variants[1].Points[0], &c.Variants[0].Points[0])
			if !ok {
				t.Fatal("no delta")
			}
			if v := d.Verdict(MetricOps); v != tc.verd {
				t.Errorf("verdict %v, want %v", v, tc.verd)
			}
			if f := d.Format(MetricOps); !strings.Contains(f, tc.format) {
				t.Errorf("Format = %q, want it to contain %q", f, tc.format)
			}
			if s := d.Short(MetricOps); s != tc.short {
				t.Errorf("Short = %q, want %q", s, tc.short)
			}
		})
	}
}
