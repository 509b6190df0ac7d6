package results

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/labs/tco"
)

// The TCO's two halves that need the results model: the saving measured
// from a compare (MeasuredSaving, the engine's tco step uses it) and the
// estimate as every view shows it (ViewTCO: report.md, report.html, the
// headless output and the TUI's TCO view all render from it).

// CPU sources of a measured saving.
const (
	CPUHostESXi   = "host (ESXi)"
	CPUServerHost = "server hosts"
)

// MeasuredSaving reads the share of servers a compare says a fleet would
// save, at every sweep point: the cores each of its first and last variant
// used per million TPS (the ESXi hosts' own counters when vSphere was read
// for both, else the server hosts' busy cores), 1 − accelerated/standard,
// and whether that is a saving beyond the runs' noise. reason says why
// there is nothing to read.
func MeasuredSaving(c *Compare) (b *tco.Basis, reason string) {
	if c == nil {
		return nil, "no compare results"
	}
	if len(c.Variants) < 2 {
		return nil, fmt.Sprintf("step %s compared fewer than two variants", c.Step)
	}
	base, acc := c.Variants[0], c.Variants[len(c.Variants)-1]
	metric, cpu := MetricESXiCoresPerMOps, CPUHostESXi
	if !measuredBoth(base, acc, metric) {
		metric, cpu = MetricOpsPerCore, CPUServerHost
		if !measuredBoth(base, acc, metric) {
			return nil, fmt.Sprintf("step %s measured no CPU on the server hosts (neither vSphere's host counters nor the servers' /proc/stat)", c.Step)
		}
	}
	b = &tco.Basis{Step: c.Step, Baseline: base.Label, Accelerated: acc.Label, CPU: cpu, Metric: metric, Sweep: c.Sweep}
	for _, bp := range base.Points {
		ap := pointAt(acc, bp.Value)
		if ap == nil {
			continue
		}
		bs, ok1 := bp.Stats.Metric(metric)
		as, ok2 := ap.Stats.Metric(metric)
		if !ok1 || !ok2 || bs.Mean <= 0 || as.Mean <= 0 {
			continue
		}
		// Cores per million TPS, whichever way the metric counts.
		B, A := bs.Mean, as.Mean
		if metric == MetricOpsPerCore {
			B, A = 1e6/bs.Mean, 1e6/as.Mean
		}
		pt := tco.BasisPoint{Value: bp.Value, BaselineCoresPerMOps: B, AcceleratedCoresPerMOps: A,
			AcceleratedMOps: ap.Stats.OpsPerSec.Mean / 1e6, SavedPct: (1 - A/B) * 100}
		pt.CoresFreed = (B - A) * pt.AcceleratedMOps
		d, _ := DeltaOf(metric, ap.Stats, bp.Stats)
		pt.P, pt.HasP, pt.Runs = d.P, d.HasP, d.Runs
		switch {
		case pt.SavedPct <= 0:
			pt.Why = fmt.Sprintf("%s used %.1f%% more cores per million TPS than %s (%s), no cores freed", acc.Label, -pt.SavedPct, base.Label, d.Format(metric))
		case d.Verdict(metric) == Untested:
			pt.Why = fmt.Sprintf("%.1f%% fewer cores per million TPS, but with %d run a side the noise was not measured (run the compare with runs of 2 or more)", pt.SavedPct, max(d.Runs, 1))
		case d.Verdict(metric) != Improved:
			pt.Why = fmt.Sprintf("%.1f%% fewer cores per million TPS is within the runs' noise (%s)", pt.SavedPct, d.Format(metric))
		default:
			pt.Saving = true
		}
		b.Points = append(b.Points, pt)
	}
	if len(b.Points) == 0 {
		return nil, fmt.Sprintf("step %s has no point where both %s and %s measured CPU", c.Step, base.Label, acc.Label)
	}
	b.Chosen = b.Points[len(b.Points)-1].Value
	return b, ""
}

func measuredBoth(a, b VariantResult, metric string) bool {
	for _, p := range a.Points {
		q := pointAt(b, p.Value)
		if q == nil {
			continue
		}
		if _, ok := p.Stats.Metric(metric); !ok {
			continue
		}
		if _, ok := q.Stats.Metric(metric); ok {
			return true
		}
	}
	return false
}

func pointAt(v VariantResult, value string) *SweepPoint {
	for i := range v.Points {
		if v.Points[i].Value == value {
			return &v.Points[i]
		}
	}
	return nil
}

// TCORow is one input or output as shown: its name, value (formatted), unit
// and, for an input, where it came from (assumed, measured, entered).
type TCORow struct {
	Name, Value, Unit, Source string
}

// TCOView is an estimate as every view shows it.
type TCOView struct {
	// Notes come first: the REHEARSAL label, how the saving was measured,
	// why there is no saving.
	Notes []string
	// Inputs in the order the docs explain them; Outputs with the servers
	// saved first (empty when there is no saving).
	Inputs, Outputs []TCORow
	// Points is the measured saving at each sweep point, when measured.
	Points  []TCORow
	Formula string
}

// ViewTCO lays t out for a view.
func ViewTCO(t *tco.Estimate) TCOView {
	var v TCOView
	if t == nil {
		return v
	}
	v.Formula = t.Formula
	if t.Rehearsal != "" {
		v.Notes = append(v.Notes, "REHEARSAL: no DPU in this run ("+t.Rehearsal+"); the estimate below is not a measurement of one")
	}
	if b := t.Basis; b != nil {
		if s := basisSentence(t, b); s != "" {
			v.Notes = append(v.Notes, s)
		}
		for _, p := range b.Points {
			val := fmt.Sprintf("%.1f%%", p.SavedPct)
			verdict := "saving"
			if !p.Saving {
				verdict = "no saving: " + p.Why
			}
			at := p.Value
			if at == "" {
				at = "(no sweep)"
			}
			v.Points = append(v.Points, TCORow{Name: at, Value: val, Unit: fmt.Sprintf("%s / %s cores per M TPS, %.1f cores freed at %s", FormatNumber(p.BaselineCoresPerMOps), FormatNumber(p.AcceleratedCoresPerMOps), p.CoresFreed, millions(p.AcceleratedMOps)), Source: verdict})
		}
	}
	if t.NoSaving != "" {
		v.Notes = append(v.Notes, "No savings shown: "+t.NoSaving)
	}
	names := slices.Clone(tco.InputNames)
	for k := range t.Inputs {
		if !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	for _, k := range names {
		val, ok := t.Inputs[k]
		if !ok {
			continue
		}
		src := t.Sources[k]
		if src == "" {
			src = tco.Assumed
		}
		unit := t.Units[k]
		if unit == "" {
			unit = tco.Units[k]
		}
		v.Inputs = append(v.Inputs, TCORow{Name: k, Value: FormatInput(val), Unit: unit, Source: src})
	}
	outs := sortedKeys(t.Outputs)
	sort.SliceStable(outs, func(i, j int) bool { return outs[i] == tco.ServersSaved })
	for _, k := range outs {
		val := t.Outputs[k]
		s, unit := FormatNumber(val), "servers"
		if strings.HasSuffix(k, "usd") || strings.HasSuffix(k, "per_year") {
			s, unit = FormatDollars(val), "$"
		}
		v.Outputs = append(v.Outputs, TCORow{Name: k, Value: s, Unit: unit})
	}
	return v
}

// FormatInput renders an input as entered: no digits it does not have,
// thousands separated (10,000; 16.5; 0.12).
func FormatInput(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) >= 1000 {
		return FormatNumber(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func millions(m float64) string { return FormatNumber(math.Round(m*1e6)) + " TPS" }

// basisSentence says how servers_saved_pct was measured, or why the
// measurement was not used.
func basisSentence(t *tco.Estimate, b *tco.Basis) string {
	p, ok := b.Point(b.Chosen)
	if !ok {
		return ""
	}
	at := "at " + b.Chosen + " " + b.Sweep
	switch {
	case b.Sweep == tco.Instances:
		at = "at " + b.Chosen + " instances per host"
	case b.Sweep == "":
		at = "over the compare"
	}
	s := fmt.Sprintf("Measured (step %s, %s, %s CPU): %s used %s cores per million TPS, %s %s, so serving %s's %s frees %.1f cores per host, %.1f%% of what %s would need",
		b.Step, at, b.CPU, b.Baseline, FormatNumber(p.BaselineCoresPerMOps), b.Accelerated, FormatNumber(p.AcceleratedCoresPerMOps),
		b.Accelerated, millions(p.AcceleratedMOps), p.CoresFreed, p.SavedPct, b.Baseline)
	if p.HasP {
		s += fmt.Sprintf(" (%s, %d runs a side)", formatP(p.P), p.Runs)
	}
	s += "."
	if b.Note != "" {
		s += " " + strings.ToUpper(b.Note[:1]) + b.Note[1:] + "."
	}
	if b.CPU == CPUServerHost {
		s += " These are the servers' own CPUs: on vSphere they cannot see the hypervisor's networking work, which is what a DPU takes over."
	}
	switch {
	case t.Sources[tco.SavedPct] == tco.Entered:
		s += " The estimate uses the entered servers_saved_pct instead."
	case t.Sources[tco.SavedPct] == tco.Assumed:
		if _, ok := t.Inputs[tco.SavedPct]; ok {
			s += " The estimate uses the lab's assumed servers_saved_pct instead."
		}
	case !p.Saving:
		s += " Not a saving: " + p.Why + "."
	}
	return s
}

// renderTCO is report.md's TCO section.
func renderTCO(b *strings.Builder, t *tco.Estimate) {
	v := ViewTCO(t)
	b.WriteString("## TCO estimate\n\n")
	for _, n := range v.Notes {
		fmt.Fprintf(b, "> %s\n\n", n)
	}
	b.WriteString("| input | value | unit | source |\n|---|---|---|---|\n")
	for _, r := range v.Inputs {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", r.Name, r.Value, mdCell(r.Unit), r.Source)
	}
	if len(v.Outputs) > 0 {
		b.WriteString("\n| output | value |\n|---|---|\n")
		for _, r := range v.Outputs {
			fmt.Fprintf(b, "| %s | %s |\n", r.Name, r.Value)
		}
	}
	if len(v.Points) > 0 {
		b.WriteString("\nMeasured saving at each point (cores per million TPS, standard / accelerated):\n\n| point | fewer cores | cores | verdict |\n|---|---|---|---|\n")
		for _, r := range v.Points {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdCell(r.Name), r.Value, mdCell(r.Unit), mdCell(r.Source))
		}
	}
	fmt.Fprintf(b, "\n```\n%s\n```\n\n", t.Formula)
}
