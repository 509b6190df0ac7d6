package results

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/steps/results/svgchart"
)

// A capacity search (a bench or compare step's capacity: key, run by
// `dpulab bench --capacity`) finds, at each sweep point of each variant,
// the highest rate at which a latency percentile stays under a cap: "TPS
// at p99 ≤ 1 ms", the figure quoted beside the flat-out TPS. It lives in
// SweepPoint.Capacity with every probe, and its answer is also the metric
// MetricCapacity in the point's Stats, so the compare table (report.md,
// report.html, the TUI) shows it as a column with deltas like any other;
// report.md and report.html add its own table (bracket, precision,
// probes) and the chart of it against the swept variable beside the
// flat-out TPS.

// MetricCapacity is the capped throughput's metric name: the search's
// answer, carried by name in Stats.Metrics (SetCapacity puts it there).
const MetricCapacity = "capacity_ops_per_sec"

func init() {
	if _, err := RegisterMetric(MetricDesc{
		Name: MetricCapacity, Label: "TPS at latency cap", Unit: "ops/s",
		Help:   "the highest rate at which the step's latency objective held (capacity search, e.g. p99 ≤ 1 ms): the capacity lies between it and it × (1 + the search's precision)",
		Better: Higher, Read: StatsMetric(MetricCapacity),
	}); err != nil {
		panic(err) // a programming error: the built-in table's names are fixed
	}
	// Read from Stats.Metrics by name, as the hypervisor's metrics are.
	byNameMetrics = append(byNameMetrics, MetricCapacity)
}

// Capacity is one capacity search: the objective, what it found and how
// precisely, and its probes (server/bench's capacity and capacity_probe
// lines, FORMATS.md).
type Capacity struct {
	// Objective is as written ("p99<=1ms"); Percentile and CapMs are it
	// read.
	Objective  string  `json:"objective"`
	Percentile float64 `json:"percentile"`
	CapMs      float64 `json:"cap_ms"`
	// Precision is the relative width the search narrowed the bracket to
	// (0.05).
	Precision float64 `json:"precision"`
	// RateOpsPerSec is the answer: the highest probed rate that met the
	// objective (0: none did). OpsPerSec, PercentileMs and LatencyMs are
	// what that probe measured.
	RateOpsPerSec float64 `json:"rate_ops_per_sec"`
	OpsPerSec     float64 `json:"ops_per_sec"`
	PercentileMs  float64 `json:"percentile_ms"`
	LatencyMs     Latency `json:"latency_ms"`
	// FailedRateOpsPerSec is the lowest probed rate that missed it (0:
	// none did).
	FailedRateOpsPerSec float64 `json:"failed_rate_ops_per_sec,omitempty"`
	// Probes counts the probes run; ProbeLog is each of them.
	Probes   int             `json:"probes"`
	ProbeLog []CapacityProbe `json:"probe_log,omitempty"`
	// Limit says why the search stopped short of a bracket: "max_rate"
	// (it passed at the highest rate it was allowed) or "min_rate" (it
	// failed down to the lowest rate a probe measures).
	Limit string `json:"limit,omitempty"`
	// ClientBound: the decisive probes ran on a saturated client host, so
	// the figure may be the client's.
	ClientBound bool `json:"client_bound,omitempty"`
	// Err says why the search ended early; what it found is kept.
	Err string `json:"error,omitempty"`
	// Clients, when several client hosts shared every probe, names them
	// (each probe's Clients has their shares).
	Clients []string `json:"clients,omitempty"`
	// ServerCPU is the server hosts' busy CPU (%, mean over the hosts and
	// the probe's seconds, from the samplers) during probe ServerCPUProbe:
	// the probe that found the answer, so the CPU the servers used at the
	// capped throughput. Unset when no probe passed or nothing was
	// sampled.
	ServerCPU      *float64 `json:"server_cpu_pct,omitempty"`
	ServerCPUProbe int      `json:"server_cpu_probe,omitempty"`
}

// CapacityProbe is one probe of a search: a run at a fixed rate.
type CapacityProbe struct {
	Probe         int     `json:"probe"`
	RateOpsPerSec float64 `json:"rate_ops_per_sec"`
	OpsPerSec     float64 `json:"ops_per_sec"`
	PercentileMs  float64 `json:"percentile_ms"`
	Errors        int64   `json:"errors,omitempty"`
	Unsent        int64   `json:"unsent,omitempty"`
	Pass          bool    `json:"pass"`
	// Reason says why it failed.
	Reason      string `json:"reason,omitempty"`
	ClientBound bool   `json:"client_bound,omitempty"`
	// ServerCPU is the server hosts' busy CPU (%) during the probe.
	ServerCPU *float64 `json:"server_cpu_pct,omitempty"`
	// Clients are the client hosts' shares of the probe, when several
	// ran it together (the probe's figures above are theirs merged).
	Clients []CapacityShare `json:"clients,omitempty"`
}

// CapacityShare is one client host's share of a probe: the rate it was
// asked for (its share of the total) and what it measured on its own.
type CapacityShare struct {
	Host          string   `json:"host"`
	RateOpsPerSec float64  `json:"rate_ops_per_sec"`
	OpsPerSec     float64  `json:"ops_per_sec"`
	PercentileMs  float64  `json:"percentile_ms"`
	Errors        int64    `json:"errors,omitempty"`
	Unsent        int64    `json:"unsent,omitempty"`
	ClientBusyPct *float64 `json:"client_host_busy_pct,omitempty"`
	ClientBound   bool     `json:"client_bound,omitempty"`
}

// SetCapacity records c at p: the search itself and its answer as the
// point's MetricCapacity (left unmeasured when no rate met the objective:
// its table says so). Call it after the point's runs were summarized
// (Summarize rebuilds Stats from the runs).
func SetCapacity(p *SweepPoint, c *Capacity) {
	p.Capacity = c
	// A new map: copies of the results taken for the writer and the TUI
	// share the old one.
	m := maps.Clone(p.Stats.Metrics)
	delete(m, MetricCapacity)
	if c != nil && c.RateOpsPerSec > 0 {
		if m == nil {
			m = map[string]MeanStd{}
		}
		r := c.RateOpsPerSec
		m[MetricCapacity] = MeanStd{Mean: r, Min: r, Max: r, N: 1}
	}
	if len(m) == 0 {
		m = nil
	}
	p.Stats.Metrics = m
}

// RateText writes a rate in whole ops/s with thousands grouped: "84,000".
func RateText(v float64) string {
	return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
}

// ObjectiveText is an objective as a person reads it: "p99 ≤ 1 ms".
func (c *Capacity) ObjectiveText() string {
	return "p" + strconv.FormatFloat(c.Percentile, 'g', -1, 64) + " ≤ " + msText(c.CapMs)
}

// msText writes a latency in ms, µs under a millisecond: "1 ms", "500 µs".
func msText(ms float64) string {
	if ms < 1 {
		return strconv.FormatFloat(ms*1000, 'g', 4, 64) + " µs"
	}
	return strconv.FormatFloat(ms, 'g', 4, 64) + " ms"
}

// firstCapacity is the first search of c, whose objective names the
// capacity table and chart (one step has one objective).
func firstCapacity(c *Compare) *Capacity {
	for _, v := range c.Variants {
		for _, p := range v.Points {
			if p.Capacity != nil {
				return p.Capacity
			}
		}
	}
	return nil
}

// Outcome says in a few words what the search found beyond its answer:
// its bracket, or the bound it stopped at, and whether it was cut short.
func (c *Capacity) Outcome() string {
	var parts []string
	switch {
	case c.Limit == "max_rate":
		parts = append(parts, "still met at the highest rate allowed (max_rate): the capacity is higher")
	case c.Limit == "min_rate" || (c.RateOpsPerSec == 0 && c.FailedRateOpsPerSec > 0):
		parts = append(parts, fmt.Sprintf("missed down to %s ops/s, the lowest rate a probe measures", RateText(c.FailedRateOpsPerSec)))
	case c.FailedRateOpsPerSec > 0 && c.RateOpsPerSec > 0:
		parts = append(parts, fmt.Sprintf("capacity in [%s, %s) ops/s", RateText(c.RateOpsPerSec), RateText(c.FailedRateOpsPerSec)))
	}
	if c.ClientBound {
		parts = append(parts, "CLIENT-BOUND: the client host was saturated, the figure may be the client's")
	}
	if c.Err != "" {
		parts = append(parts, "ended early: "+c.Err)
	}
	return strings.Join(parts, "; ")
}

// renderCapacity is report.md's capacity table and chart for c (nothing
// when c ran no search).
func renderCapacity(b *strings.Builder, r *Results, c *Compare) {
	first := firstCapacity(c)
	if first == nil {
		return
	}
	obj := first.ObjectiveText()
	pct := "p" + strconv.FormatFloat(first.Percentile, 'g', -1, 64)
	fmt.Fprintf(b, "### TPS at %s (capacity search)\n\n", obj)
	b.WriteString("| variant |")
	if c.Sweep != "" {
		fmt.Fprintf(b, " %s |", c.Sweep)
	}
	fmt.Fprintf(b, " flat-out TPS | TPS at %s | %s there ms | server CPU there | lowest failing rate | precision | probes | outcome |\n|---|", obj, pct)
	if c.Sweep != "" {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|---|---|---|---|---|\n")
	var clients []string
	for vi, v := range c.Variants {
		for _, p := range v.Points {
			k := p.Capacity
			if k == nil {
				continue
			}
			fmt.Fprintf(b, "| %s |", mdCell(rowLabel(r, c, &c.Variants[vi])))
			if c.Sweep != "" {
				fmt.Fprintf(b, " %s |", mdCell(p.Value))
			}
			flat := "–"
			if ms, ok := p.Stats.Metric(MetricOps); ok {
				flat = FormatMeanStd(ms)
			}
			capped, there, failed, cpu := "none met it", "–", "–", "–"
			if k.RateOpsPerSec > 0 {
				capped, there = RateText(k.RateOpsPerSec), FormatNumber(k.PercentileMs)
			}
			if k.ServerCPU != nil {
				cpu = fmt.Sprintf("%.1f%%", *k.ServerCPU)
			}
			if len(k.Clients) > len(clients) {
				clients = k.Clients
			}
			if k.FailedRateOpsPerSec > 0 {
				failed = RateText(k.FailedRateOpsPerSec)
			}
			fmt.Fprintf(b, " %s | %s | %s | %s | %s | %s%% | %d | %s |\n", flat, capped, there, cpu, failed,
				strconv.FormatFloat(k.Precision*100, 'g', 3, 64), k.Probes, mdCell(k.Outcome()))
		}
	}
	fmt.Fprintf(b, "\nEach capped figure is the highest rate at which a probe met %s: a run at that fixed rate, every request's latency counted from when it was due (coordinated omission corrected), nothing failed and the rate kept. The rate doubled while probes passed, halved while they failed, then was bisected until the lowest failing rate was within the precision of the highest passing one, so the capacity lies between the two. Probes near the capacity are noisy: a repeated search may land a step apart. Flat-out TPS is the mean of the runs without a rate cap. Server CPU there is the server hosts' busy CPU (mean over the hosts and the probe's seconds, from the samplers) during the probe that found the capped figure.\n\n", obj)
	if len(clients) > 1 {
		fmt.Fprintf(b, "The load came from %d client hosts (%s): every probe ran on all of them at once, each at its share of the probe's rate, and was judged on the union of their latency histograms, not on averaged percentiles.\n\n", len(clients), mdCell(strings.Join(clients, ", ")))
	}
	if xs, series, legends := capacitySeries(r, c, obj); xs != nil {
		b.WriteString("```\n" + chart("TPS at "+obj+" and flat out, against "+c.Sweep+" ("+sweepValues(c)+")", legends, series, chartWidth, sweepChartHeight) + "```\n\n")
	}
}

// capacitySeries are the chart's lines in the sweep's order (report.md's
// text chart): per variant, its capped TPS, then its flat-out TPS where
// measured, each legend with its variant's label (legendLabel). Nil
// without a sweep of several points.
func capacitySeries(r *Results, c *Compare, obj string) (xs []string, series [][]float64, legends []string) {
	if c.Sweep == "" || maxPoints(c) < 2 {
		return nil, nil, nil
	}
	order := strings.Split(sweepValues(c), ", ")
	for _, v := range c.Variants {
		capped := make([]float64, len(order))
		flat := make([]float64, len(order))
		anyFlat := false
		for i, at := range order {
			capped[i], flat[i] = nan, nan
			for _, p := range v.Points {
				if p.Value != at {
					continue
				}
				if p.Capacity != nil && p.Capacity.RateOpsPerSec > 0 {
					capped[i] = p.Capacity.RateOpsPerSec
				}
				if ms, ok := p.Stats.Metric(MetricOps); ok {
					flat[i], anyFlat = ms.Mean, true
				}
			}
		}
		series = append(series, capped)
		legends = append(legends, LegendLabel(r, &v)+" at "+obj)
		if anyFlat {
			series = append(series, flat)
			legends = append(legends, LegendLabel(r, &v)+" flat out")
		}
	}
	return order, series, legends
}

// capacityChart is report.html's (and the PNG export's) chart of the
// searches of c: TPS at the cap against the swept variable, a line per
// variant, with its flat-out TPS beside it; its notes say the objective,
// the precision and the probes. Without a sweep, one point per variant.
// Each legend carries its variant's label (legendLabel).
func capacityChart(r *Results, c *Compare) (ReportChart, bool) {
	first := firstCapacity(c)
	if first == nil {
		return ReportChart{}, false
	}
	obj := first.ObjectiveText()
	xs, ticks := sweepAxis(c)
	title := "TPS at " + obj + " and flat out"
	xlabel := clean(c.Sweep)
	if c.Sweep != "" {
		title += " against " + clean(c.Sweep)
	} else {
		xlabel = "(no sweep)"
		ticks = []svgchart.Tick{{Value: 0, Label: "–"}}
	}
	ch := svgchart.Chart{Title: title, XLabel: xlabel, YLabel: "TPS (ops/s)", XTicks: ticks}
	minProbes, maxProbes := math.MaxInt, 0
	var notes []string
	for vi, v := range c.Variants {
		capped := svgchart.Series{Label: clean(LegendLabel(r, &c.Variants[vi]) + " at " + obj)}
		flat := svgchart.Series{Label: clean(LegendLabel(r, &c.Variants[vi]) + " flat out")}
		for _, p := range v.Points {
			x := xs[p.Value]
			if p.Capacity != nil {
				k := p.Capacity
				minProbes, maxProbes = min(minProbes, k.Probes), max(maxProbes, k.Probes)
				y := nan
				if k.RateOpsPerSec > 0 {
					y = k.RateOpsPerSec
				}
				capped.X, capped.Y = append(capped.X, x), append(capped.Y, y)
				if o := k.Outcome(); o != "" && (k.Limit != "" || k.ClientBound || k.Err != "" || k.RateOpsPerSec == 0) {
					at := v.Label
					if c.Sweep != "" {
						at += ", " + c.Sweep + "=" + p.Value
					}
					notes = append(notes, clean(at+": "+o))
				}
			}
			if ms, ok := p.Stats.Metric(MetricOps); ok {
				e := nan
				if ms.N >= 2 {
					e = ms.Stddev
				}
				flat.X, flat.Y, flat.Err = append(flat.X, x), append(flat.Y, ms.Mean), append(flat.Err, e)
			}
		}
		ch.Series = append(ch.Series, capped)
		if len(flat.X) > 0 {
			ch.Series = append(ch.Series, flat)
		}
	}
	probes := strconv.Itoa(minProbes)
	if maxProbes != minProbes {
		probes += "–" + strconv.Itoa(maxProbes)
	}
	ch.Notes = append([]string{clean(fmt.Sprintf("capacity search: highest rate meeting %s, precision %s%% (the capacity lies below it × %s), %s probes a point", obj,
		strconv.FormatFloat(first.Precision*100, 'g', 3, 64), strconv.FormatFloat(1+first.Precision, 'g', 4, 64), probes))}, notes...)
	return ReportChart{Step: c.Step, Name: fileStem(c.Step) + "-capacity", Chart: ch}, true
}
