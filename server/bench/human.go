package bench

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dpulab/dpulab/internal/wire/benchwire"

	"github.com/dpulab/dpulab/internal/termtext"
)

// HumanPrinter renders the event stream for a person, like memtier's
// report: a progress line per sample on Progress (stderr, so that stdout
// holds only the tables), a table per run and the across-run summary on Out.
type HumanPrinter struct {
	Out      io.Writer
	Progress io.Writer
	start    *Start
}

// Event renders one event; use it as Run's emit.
func (h *HumanPrinter) Event(ev Event) {
	switch e := ev.(type) {
	case *Start:
		h.start = e
		h.header(e)
	case *Prefill:
		fmt.Fprintf(h.Out, "prefilled %d keys in %.2f s\n", e.Keys, e.Seconds)
	case *Sample:
		if e.Target != "" || h.Progress == nil {
			return
		}
		what := "run"
		if h.start != nil && h.start.Config.Capacity != nil {
			what = "probe"
		}
		line := fmt.Sprintf("[%s %d] %6.1fs %12s ops/s  avg %s  p50 %s  p99 %s  max %s ms",
			what, e.Run, e.T, thousands(e.OpsPerSec), ms(e.LatencyMs.Avg), ms(e.LatencyMs.P50), ms(e.LatencyMs.P99), ms(e.LatencyMs.Max))
		if e.Errors > 0 {
			line += fmt.Sprintf("  errors %d (%s)", e.Errors, benchwire.KindsText(e.ErrorsByKind))
		}
		fmt.Fprintln(h.Progress, line)
	case *RunResult:
		h.run(e)
	case *Summary:
		h.summary(e)
	case *CapacityProbe:
		h.probe(e)
	case *CapacityResult:
		h.capacity(e)
	}
}

func (h *HumanPrinter) probe(p *CapacityProbe) {
	verdict := "pass"
	if !p.Pass {
		verdict = "fail: " + termtext.Line(p.Reason)
	}
	bound := ""
	if p.ClientBound && p.ClientHostBusyPct != nil {
		bound = fmt.Sprintf("  CLIENT-BOUND (host %.1f%% busy)", *p.ClientHostBusyPct)
	}
	fmt.Fprintf(h.Out, "probe %d: rate %s ops/s for %.1f s: answered %s ops/s, p50 %s  p99 %s  max %s ms, objective's percentile %s ms: %s%s\n",
		p.Probe, thousands(p.RateOpsPerSec), p.DurationSeconds, thousands(p.OpsPerSec), ms(p.LatencyMs.P50), ms(p.LatencyMs.P99), ms(p.LatencyMs.Max),
		ms(p.PercentileMs), verdict, bound)
}

func (h *HumanPrinter) capacity(r *CapacityResult) {
	fmt.Fprintf(h.Out, "\nCAPACITY AT %s%s\n", termtext.Line(r.Objective), h.simulated())
	switch {
	case r.RateOpsPerSec == 0:
		fmt.Fprintf(h.Out, "no probed rate met the objective (lowest tried %s ops/s)\n", thousands(r.FailedRateOpsPerSec))
	default:
		fmt.Fprintf(h.Out, "highest rate that met it: %s ops/s (answered %s ops/s, objective's percentile %s ms, p99 %s ms)\n",
			thousands(r.RateOpsPerSec), thousands(r.OpsPerSec), ms(r.PercentileMs), ms(r.LatencyMs.P99))
		if r.FailedRateOpsPerSec > 0 {
			fmt.Fprintf(h.Out, "lowest rate that missed it: %s ops/s: the capacity is in between (precision %.0f%%)\n", thousands(r.FailedRateOpsPerSec), 100*r.Precision)
		}
	}
	switch r.Limit {
	case "max_rate":
		fmt.Fprintln(h.Out, "(the search stopped at --capacity-max-rate: the capacity may be higher)")
	case "min_rate":
		fmt.Fprintln(h.Out, "(the search stopped at the lowest rate a probe of this --duration can measure)")
	}
	if r.ClientBound {
		fmt.Fprintln(h.Out, "CLIENT-BOUND: the decisive probes saturated this client host's CPU: the capacity found may be the client's")
	}
	fmt.Fprintf(h.Out, "%d probes\n", r.Probes)
	if r.Err != "" {
		fmt.Fprintf(h.Out, "the search did not complete: %s\n", termtext.Line(r.Err))
	}
}

func (h *HumanPrinter) header(s *Start) {
	c := s.Config
	sizes := fmt.Sprintf("%d-byte values", c.DataSize)
	switch {
	case len(c.DataSizeList) > 0:
		sizes = "value sizes " + FormatSizeList(c.DataSizeList) + " (size:weight mix)"
	case !c.DataSizeRange.IsZero():
		sizes = fmt.Sprintf("value sizes %s bytes (%s)", c.DataSizeRange, map[bool]string{true: "growing with the key", false: "random"}[c.DataSizePattern == "S"])
	}
	if !c.ExpirySeconds.IsZero() {
		sizes += fmt.Sprintf(", expiring in %s s", c.ExpirySeconds)
	}
	length := c.Duration.String() + " per run"
	switch {
	case c.RequestsPerClient > 0:
		length = fmt.Sprintf("%d requests per client", c.RequestsPerClient)
	case c.Requests > 0:
		length = fmt.Sprintf("%d requests per run", c.Requests)
	}
	if c.Warmup > 0 {
		length += " after " + c.Warmup.String() + " warmup"
	}
	rate := "as fast as possible"
	switch {
	case c.Rate > 0:
		rate = fmt.Sprintf("fixed rate %s ops/s (latency from when each request was due)", thousands(c.Rate))
	case c.RateLimiting > 0:
		rate = fmt.Sprintf("fixed rate %d ops/s per connection (latency from when each request was due)", c.RateLimiting)
	}
	if c.Capacity != nil {
		rate = "rate set by the capacity search, probe by probe"
	}
	fmt.Fprintf(h.Out, "dpulab bench: %d target(s) × %d threads × %d clients = %d connections, %s client, RESP%d\n",
		len(s.Targets), max(c.Threads, 1), c.Clients, s.Connections, s.Client, c.Protocol)
	fmt.Fprintf(h.Out, "  pipeline %d, SET:GET %s, %s, keys %s%d..%d %s, %s, %s, %d run(s)\n",
		c.Pipeline, c.Ratio, sizes, termtext.Line(c.KeyPrefix), c.KeyMinimum, c.KeyMaximum, c.KeyPattern, length, rate, c.Runs)
	if k := c.Capacity; k != nil {
		fmt.Fprintf(h.Out, "  capacity search: the highest rate with %s, from %s ops/s, precision %.0f%%, probes of at least %s\n",
			k.Objective(), thousands(k.StartRate), 100*k.Precision, c.Duration)
	}
	if s.Simulation != "" {
		fmt.Fprintf(h.Out, "  SIMULATION: %s\n", termtext.Line(s.Simulation))
	}
}

// simulated marks a results heading when the start said the transport is
// simulated.
func (h *HumanPrinter) simulated() string {
	if h.start != nil && h.start.Simulation != "" {
		return " — SIMULATED transport, not real figures"
	}
	return ""
}

func (h *HumanPrinter) run(r *RunResult) {
	fmt.Fprintf(h.Out, "\nRUN %d RESULTS (%.2f s measured)%s\n", r.Run, r.Seconds, h.simulated())
	tw := tabwriter.NewWriter(h.Out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Type\tOps/sec\tHits/sec\tMisses/sec\tAvg ms\tp50 ms\tp90 ms\tp99 ms\tp99.9 ms\tMax ms\tKB/sec\t")
	for _, name := range cmdNames {
		ops, ok := r.OpsPerSecByCmd[name]
		if !ok {
			continue
		}
		l := r.LatencyMsByCmd[name]
		hits, misses := "---", "---"
		if name == "get" {
			hits, misses = thousands(perSec(r.Hits, r.Seconds)), thousands(perSec(r.Misses, r.Seconds))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", strings.ToUpper(name[:1])+name[1:]+"s",
			thousands(ops), hits, misses, ms(l.Avg), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max), "---")
	}
	l := r.LatencyMs
	fmt.Fprintf(tw, "Totals\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", thousands(r.OpsPerSec),
		thousands(perSec(r.Hits, r.Seconds)), thousands(perSec(r.Misses, r.Seconds)),
		ms(l.Avg), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max),
		thousands((r.BytesSentPerSec+r.BytesRecvPerSec)/1024))
	tw.Flush()
	if len(r.LatencyMsPercentiles) > 0 {
		keys := make([]string, 0, len(r.LatencyMsPercentiles))
		for k := range r.LatencyMsPercentiles {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, _ := strconv.ParseFloat(keys[i], 64)
			b, _ := strconv.ParseFloat(keys[j], 64)
			return a < b
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("p%s %s ms", k, ms(r.LatencyMsPercentiles[k]))
		}
		fmt.Fprintf(h.Out, "percentiles: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(h.Out, "requests answered: %d", r.Ops)
	if r.Errors > 0 {
		fmt.Fprintf(h.Out, "; errors: %d (%s)", r.Errors, benchwire.KindsText(r.ErrorsByKind))
	} else {
		fmt.Fprint(h.Out, "; errors: 0")
	}
	fmt.Fprintln(h.Out)
	if r.ClientBound && r.ClientHostBusyPct != nil {
		fmt.Fprintf(h.Out, "CLIENT-BOUND: this client host was %.1f%% busy (from %.0f%%), the bench itself %.0f%% of a core: the figures measure the client as much as the server; add client hosts or connections elsewhere\n",
			*r.ClientHostBusyPct, ClientBoundPct, deref(r.ClientCPUPct))
	}
	if len(r.Targets) > 1 {
		h.targets(r.Targets)
	}
	if r.Err != "" {
		fmt.Fprintf(h.Out, "run %d did not complete: %s\n", r.Run, termtext.Line(r.Err))
	}
}

func (h *HumanPrinter) targets(ts []TargetResult) {
	sorted := append([]TargetResult(nil), ts...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].OpsPerSec > sorted[j].OpsPerSec })
	fmt.Fprintln(h.Out, "per target:")
	tw := tabwriter.NewWriter(h.Out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Target\tOps/sec\tp50 ms\tp99 ms\tMax ms\tErrors\t\t")
	for _, t := range sorted {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", termtext.Line(t.Target), thousands(t.OpsPerSec),
			ms(t.LatencyMs.P50), ms(t.LatencyMs.P99), ms(t.LatencyMs.Max), t.Errors, termtext.Line(t.Err))
	}
	tw.Flush()
}

func (h *HumanPrinter) summary(s *Summary) {
	if s.Runs < 2 && s.Err == "" {
		return
	}
	fmt.Fprintf(h.Out, "\nSUMMARY OVER %d RUNS%s\n", s.Runs, h.simulated())
	fmt.Fprintf(h.Out, "ops/sec: mean %s ± %s (stddev), min %s, max %s\n",
		thousands(s.OpsPerSec), thousands(s.OpsPerSecStddev), thousands(s.OpsPerSecMin), thousands(s.OpsPerSecMax))
	l := s.LatencyMs
	fmt.Fprintf(h.Out, "latency (all runs' requests): avg %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s ms\n",
		ms(l.Avg), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max))
	fmt.Fprintf(h.Out, "p99 across runs: mean %s ± %s ms\n", ms(s.LatencyMsMean.P99), ms(s.LatencyMsStddev.P99))
	fmt.Fprintf(h.Out, "requests answered: %d; errors: %d", s.Ops, s.Errors)
	if s.Errors > 0 {
		fmt.Fprintf(h.Out, " (%s)", benchwire.KindsText(s.ErrorsByKind))
	}
	fmt.Fprintln(h.Out)
	if s.Partial {
		fmt.Fprintln(h.Out, "(partial: a run ended early; numbers cover what was measured)")
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func ms(v float64) string { return fmt.Sprintf("%.3f", v) }

// thousands formats v with two decimals and thousands separators.
func thousands(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String() + "." + frac
	if neg {
		out = "-" + out
	}
	return out
}
