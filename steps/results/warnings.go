package results

import (
	"fmt"
	"slices"
	"strings"
)

// Warnings are what the views say about a run or a compare that bears on
// how its figures may be read: the run did not finish, host figures from a
// simulator, an earlier attempt's figures, variants that could not run,
// a saturated shared host, a client-bound run, runs that ended early,
// missing sweep points, noise that was not measured, server CPU that
// includes the load generator, a clock spread. They are decided here, once,
// with a fixed wording per kind; report.md, report.html and the TUI's
// compare view render this list and say nothing of the kind on their own,
// so a warning in one view is in all of them, in the same words.
//
// What the figures are (rehearsal, emulation, software RDMA, replay) is
// not a warning but their label: Figures (kind.go) says it.

// WarningKind names what a warning is about.
type WarningKind string

// The warning kinds, in the order Warnings lists them.
const (
	// Of the whole run (Warnings(r, nil)).
	WarnStatus    WarningKind = "status"
	WarnSimulated WarningKind = "simulated"
	// Of one bench or compare (Warnings(r, c)).
	WarnEarlierAttempt WarningKind = "earlier-attempt"
	WarnUnavailable    WarningKind = "unavailable"
	WarnNoRun          WarningKind = "no-run"
	WarnSaturated      WarningKind = "saturated-shared-host"
	WarnClientBound    WarningKind = "client-bound"
	WarnEndedEarly     WarningKind = "ended-early"
	WarnMissingPoints  WarningKind = "missing-points"
	WarnNoise          WarningKind = "noise-not-measured"
	WarnSharedCPU      WarningKind = "server-cpu-includes-load-generator"
	WarnClock          WarningKind = "clock"
)

// Warning is one thing the views say about a run or a compare. Every view
// shows Line() and each item's String(), word for word.
type Warning struct {
	Kind WarningKind
	// Step is the bench or compare step it is about, "" for the run.
	Step string
	// Title heads it in a few words ("SATURATED SHARED HOST").
	Title string
	// Text says what it means for the figures and, where there is one,
	// what to do.
	Text string
	// Items are what it is about, one each (the runs, the variants).
	Items []WarningItem
}

// WarningItem is one run or variant a warning is about: Label (a variant,
// "" when the text says it all) and what of it.
type WarningItem struct{ Label, Text string }

// String is the item as every view says it.
func (i WarningItem) String() string {
	if i.Label == "" {
		return i.Text
	}
	return i.Label + ": " + i.Text
}

// Line is the warning's title and text, as every view says them.
func (w Warning) Line() string { return w.Title + ": " + w.Text }

// String is the whole warning on one line: Line, then the items joined
// by "; ".
func (w Warning) String() string {
	if len(w.Items) == 0 {
		return w.Line()
	}
	items := make([]string, len(w.Items))
	for i, it := range w.Items {
		items[i] = it.String()
	}
	return w.Line() + " — " + strings.Join(items, "; ")
}

// Saturating reports whether the warning says a host running the load
// generator was saturated, so the figures are that host's limit: no
// difference measured under it is a verdict on the variants (Conclude).
func (w Warning) Saturating() bool { return w.Kind == WarnSaturated || w.Kind == WarnClientBound }

// clientBoundPct is the busy share at which a client host counts as
// saturated; benchwire.ClientBoundPct sets the flags this package
// reads, and its value is said here in words.
const clientBoundPct = 90

// The fixed words of each warning (the ones with no figures in them), so
// a test can look for them in every view.
const (
	simulatedText   = "the host (ESXi) figures come from a vCenter simulator, not from a real vCenter (sources under each table)"
	unavailableText = "these variants could not run on these hosts, so this step has no figures for them"
	noRunText       = "no variant of this step finished a run, so it has no figures"
	saturatedText   = "the load generator ran on a host that also served (%s), and that host was at least %d%% busy: the load generator and the servers competed for its CPUs, so these figures are that one host's limit with both on it, not the servers' alone%s. To measure the servers, run the client role on another host"
	clientBoundText = "a client host was at least %d%% busy, so the load generator, not only the server, limited these figures (they understate the server); add client hosts (the clients_hosts variable) or lower the load per host"
	endedEarlyText  = "their partial numbers are kept"
	missingText     = "these variants have no run at some sweep points, so they have no figures and no deltas there"
	noiseText       = "with one run a side the run-to-run noise was not measured, so no delta of these is called better or worse; run the compare with 2 runs or more"
	sharedCPUText   = "measured on the server hosts, and %s also runs the load generator, so its CPU figures include the load generator's work"
)

// Warnings is what the views say about r (c nil: the whole run) or about
// its bench or compare c, in a fixed order and wording.
func Warnings(r *Results, c *Compare) []Warning {
	if r == nil {
		return nil
	}
	if c == nil {
		return runWarnings(r)
	}
	var out []Warning
	add := func(k WarningKind, title, text string, items []WarningItem) {
		out = append(out, Warning{Kind: k, Step: c.Step, Title: title, Text: text, Items: items})
	}
	if n := c.Attempt; n > 0 && n <= len(r.Attempts) {
		add(WarnEarlierAttempt, earlierAttemptTitle, r.earlierAttemptText(c), nil)
	}
	if len(c.Unavailable) > 0 {
		var items []WarningItem
		for _, u := range c.Unavailable {
			items = append(items, WarningItem{u.Label, "not run here: " + u.Reason})
		}
		add(WarnUnavailable, "Not run here", unavailableText, items)
	}
	if len(c.Variants) == 0 {
		add(WarnNoRun, "No run finished", noRunText, nil)
		return out
	}
	shared, bound := saturatedRuns(c)
	if len(shared) > 0 {
		verdict := ""
		if len(c.Variants) > 1 {
			verdict = ", and a difference between the variants is not a verdict on them"
		}
		add(WarnSaturated, "SATURATED SHARED HOST", fmt.Sprintf(saturatedText, strings.Join(c.sharedHosts(), ", "), clientBoundPct, verdict), shared)
	}
	if len(bound) > 0 {
		add(WarnClientBound, "CLIENT-BOUND", fmt.Sprintf(clientBoundText, clientBoundPct), bound)
	}
	var ended []WarningItem
	for _, v := range c.Variants {
		for _, p := range v.Points {
			for _, run := range p.Runs {
				if run.Err != "" {
					ended = append(ended, WarningItem{v.Label, fmt.Sprintf("%srun %d: %s", pointNote(c, p.Value), run.Run, run.Err)})
				}
			}
		}
	}
	if len(ended) > 0 {
		add(WarnEndedEarly, "Runs that ended early", endedEarlyText, ended)
	}
	if items := missingPoints(c); len(items) > 0 {
		add(WarnMissingPoints, "Missing points", missingText, items)
	}
	if items := unmeasuredNoise(c); len(items) > 0 {
		add(WarnNoise, "Noise not measured", noiseText, items)
	}
	if c.Client != "" && measured(c, MetricServerCPU) {
		for _, v := range c.Variants {
			if slices.Contains(v.Hosts, c.Client) {
				add(WarnSharedCPU, "Server CPU includes the load generator", fmt.Sprintf(sharedCPUText, c.Client), nil)
				break
			}
		}
	}
	var clocks []string
	for _, v := range c.Variants {
		for _, p := range v.Points {
			for _, run := range p.Runs {
				if run.ClockWarning != "" && !slices.Contains(clocks, run.ClockWarning) {
					clocks = append(clocks, run.ClockWarning)
					add(WarnClock, "Clock warning", run.ClockWarning, nil)
				}
			}
		}
	}
	return out
}

// AllWarnings is every warning of r: the run's, then each bench's in turn.
func AllWarnings(r *Results) []Warning {
	out := Warnings(r, nil)
	if r == nil {
		return out
	}
	for i := range r.Benches {
		out = append(out, Warnings(r, &r.Benches[i])...)
	}
	return out
}

func runWarnings(r *Results) []Warning {
	var out []Warning
	if r.State() != RunComplete {
		// Said first, so nobody reads the figures as a finished run's.
		out = append(out, Warning{Kind: WarnStatus, Title: "Run status", Text: r.Describe()})
	}
	if r.SimulatedHostMetrics() {
		out = append(out, Warning{Kind: WarnSimulated, Title: "SIMULATED", Text: simulatedText})
	}
	return out
}

// saturatedRuns are c's runs whose client host was saturated: shared when
// that host also served the variant (the host was full, not the client
// the bottleneck), bound when it ran the load generator alone.
func saturatedRuns(c *Compare) (shared, bound []WarningItem) {
	for vi := range c.Variants {
		v := &c.Variants[vi]
		serves := len(c.SharedClientHosts(v)) > 0
		for _, p := range v.Points {
			if k := p.Capacity; k != nil && k.ClientBound {
				// The capacity search's decisive probes.
				it := WarningItem{v.Label, pointNote(c, p.Value) + "capacity search: its decisive probes ran on a saturated client host, so the capped figure may be the client's"}
				if serves {
					shared = append(shared, it)
				} else {
					bound = append(bound, it)
				}
			}
			for _, run := range p.Runs {
				if !run.ClientBound {
					continue
				}
				text := fmt.Sprintf("%srun %d", pointNote(c, p.Value), run.Run)
				if serves {
					if run.ClientHostBusyPct != nil {
						text += fmt.Sprintf(": host %.0f%% busy", *run.ClientHostBusyPct)
					}
					shared = append(shared, WarningItem{v.Label, text})
					continue
				}
				if run.ClientHostBusyPct != nil {
					text += fmt.Sprintf(": busiest client host %.0f%% busy", *run.ClientHostBusyPct)
				}
				var hosts []string
				for _, cs := range run.Clients {
					if cs.ClientBound {
						hosts = append(hosts, cs.Host)
					}
				}
				if len(hosts) > 0 {
					text += " (" + strings.Join(hosts, ", ") + ")"
				}
				bound = append(bound, WarningItem{v.Label, text})
			}
		}
	}
	return shared, bound
}

// missingPoints are the sweep points of the baseline that another
// variant has no run at.
func missingPoints(c *Compare) []WarningItem {
	if c.Sweep == "" {
		return nil
	}
	var out []WarningItem
	for _, v := range c.Variants[1:] {
		for _, bp := range c.Variants[0].Points {
			i := slices.IndexFunc(v.Points, func(p SweepPoint) bool { return p.Value == bp.Value })
			if i < 0 || len(v.Points[i].Runs) == 0 {
				out = append(out, WarningItem{v.Label, "no run at " + c.Sweep + "=" + bp.Value})
			}
		}
	}
	return out
}

// unmeasuredNoise are the points where a variant and the baseline are
// compared with one run on a side.
func unmeasuredNoise(c *Compare) []WarningItem {
	if len(c.Variants) < 2 {
		return nil
	}
	var out []WarningItem
	for _, v := range c.Variants[1:] {
		for _, p := range v.Points {
			bp := basePoint(c, p.Value)
			if bp == nil || len(p.Runs) == 0 || len(bp.Runs) == 0 {
				continue
			}
			if n := min(len(p.Runs), len(bp.Runs)); n < 2 {
				out = append(out, WarningItem{v.Label, fmt.Sprintf("%s%d run against %d of %s", pointNote(c, p.Value), len(p.Runs), len(bp.Runs), c.Variants[0].Label)})
			}
		}
	}
	return out
}

// pointNote names sweep value v before a run ("instances=30, "), "" when
// c has no sweep.
func pointNote(c *Compare, v string) string {
	if c.Sweep == "" || v == "" {
		return ""
	}
	return c.Sweep + "=" + v + ", "
}
