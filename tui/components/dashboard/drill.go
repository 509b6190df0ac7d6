package dashboard

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/steps"
)

// View is what the dashboard shows: the charts of the whole load, the
// hosts (client hosts, with the saturated ones flagged, and server
// hosts), or the server instances one by one.
type View int

const (
	// ViewCharts is the big numbers and charts of the merged load.
	ViewCharts View = iota
	// ViewHosts is a row per client host and per server host.
	ViewHosts
	// ViewInstances is a row per server instance, hottest first.
	ViewInstances
)

// SortBy orders the instances view.
type SortBy int

const (
	// SortP99 puts the slowest instance (highest p99) first.
	SortP99 SortBy = iota
	// SortOps puts the busiest instance (most TPS) first.
	SortOps
	// SortErrors puts the instance with the most errors first.
	SortErrors
	sortCount
)

func (s SortBy) String() string {
	switch s {
	case SortOps:
		return "TPS"
	case SortErrors:
		return "errors"
	}
	return "p99"
}

// hotFactor: an instance whose p99 or TPS is this many times the median
// instance's stands out as hot.
const hotFactor = 1.5

// targetRow is one server instance's newest second.
type targetRow struct {
	target, host  string
	ops, p50, p99 float64
	errors        int64
}

// clientRow is one client host's newest second, and the most it was busy.
type clientRow struct {
	host     string
	ops, p99 float64
	errors   int64
	busy     float64 // NaN when not read
	peakBusy float64 // NaN when never read
	// boundSecs counts seconds at or above benchwire.ClientBoundPct.
	boundSecs int
}

// drill holds the per-host and per-instance figures of the series shown:
// the newest second of each, in arrival order, found by name.
type drill struct {
	targets  []targetRow
	byTarget map[string]int
	clients  []clientRow
	byClient map[string]int
	// order is targets sorted for the instances view, valid while
	// sortedAt equals version.
	order             []int
	sortedAt, version int
	medP99, medOps    float64
}

func (d *drill) reset() {
	d.targets, d.clients = d.targets[:0], d.clients[:0]
	d.byTarget, d.byClient = nil, nil
	d.version++
}

// add takes one second's per-host and per-instance figures. Names come
// from the engine's inventory and the bench's output: they are kept
// filtered of anything a terminal would act on.
func (d *drill) add(s steps.Sample) {
	if len(s.Targets) == 0 && len(s.Clients) == 0 {
		return
	}
	if d.byTarget == nil {
		d.byTarget = map[string]int{}
		d.byClient = map[string]int{}
	}
	for _, t := range s.Targets {
		i, ok := d.byTarget[t.Target]
		if !ok {
			i = len(d.targets)
			d.byTarget[t.Target] = i
			d.targets = append(d.targets, targetRow{target: termtext.Plain(t.Target), host: termtext.Plain(t.Host)})
		}
		r := &d.targets[i]
		r.ops, r.p50, r.p99, r.errors = t.OpsPerSec, t.P50Ms, t.P99Ms, t.Errors
	}
	for _, c := range s.Clients {
		i, ok := d.byClient[c.Host]
		if !ok {
			i = len(d.clients)
			d.byClient[c.Host] = i
			d.clients = append(d.clients, clientRow{host: termtext.Plain(c.Host), peakBusy: math.NaN()})
		}
		r := &d.clients[i]
		r.ops, r.p99, r.errors, r.busy = c.OpsPerSec, c.P99Ms, c.Errors, math.NaN()
		if c.BusyPct != nil {
			r.busy = *c.BusyPct
			if math.IsNaN(r.peakBusy) || r.busy > r.peakBusy {
				r.peakBusy = r.busy
			}
			if r.busy >= benchwire.ClientBoundPct {
				r.boundSecs++
			}
		}
	}
	d.version++
}

// has reports whether any per-host or per-instance figure came.
func (d *drill) has() bool { return len(d.targets) > 0 || len(d.clients) > 0 }

// sorted returns the instances in the order of by, recomputing it (and
// the medians hot is judged against) only when a second came since.
func (d *drill) sorted(by SortBy) []int {
	if d.sortedAt == d.version && len(d.order) == len(d.targets) {
		return d.order
	}
	d.order = d.order[:0]
	p99s := make([]float64, 0, len(d.targets))
	opss := make([]float64, 0, len(d.targets))
	for i, t := range d.targets {
		d.order = append(d.order, i)
		p99s = append(p99s, t.p99)
		opss = append(opss, t.ops)
	}
	d.medP99, d.medOps = median(p99s), median(opss)
	key := func(t targetRow) float64 {
		switch by {
		case SortOps:
			return t.ops
		case SortErrors:
			return float64(t.errors)
		}
		return t.p99
	}
	slices.SortStableFunc(d.order, func(a, b int) int {
		if c := cmp.Compare(key(d.targets[b]), key(d.targets[a])); c != 0 {
			return c
		}
		return cmp.Compare(d.targets[a].target, d.targets[b].target)
	})
	d.sortedAt = d.version
	return d.order
}

// median of xs (reordered); 0 when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m]
	}
	return (xs[m-1] + xs[m]) / 2
}

// hot says why an instance stands out against the median one, or "".
func (d *drill) hot(t targetRow) string {
	switch {
	case d.medP99 > 0 && t.p99 >= hotFactor*d.medP99:
		return fmt.Sprintf("hot: p99 %.1f× median", t.p99/d.medP99)
	case d.medOps > 0 && t.ops >= hotFactor*d.medOps:
		return fmt.Sprintf("hot: TPS %.1f× median", t.ops/d.medOps)
	}
	return ""
}

// bound lists the client hosts at or above benchwire.ClientBoundPct busy in
// their newest second.
func (d *drill) bound() []clientRow {
	var out []clientRow
	for _, c := range d.clients {
		if c.busy >= benchwire.ClientBoundPct {
			out = append(out, c)
		}
	}
	return out
}

// summary is the charts view's one line about hosts and instances: the
// hottest instance and the saturated client hosts.
func (m *Model) summary(w int) string {
	// The longest form that fits w: at 80 columns the instance count and
	// the views' keys get their shorter words, not a cut "(keys: 2 hosts
	// view, 3 inst…".
	var s string
	for form := range 4 {
		if s = m.summaryForm(form); ansi.StringWidth(s) <= w {
			break
		}
	}
	return s
}

// summaryForm is the summary line in form 0 (whole) to 3 (shortest):
// the keys' words shorten first, then the instance count's.
func (m *Model) summaryForm(form int) string {
	d := &m.drill
	st := m.Styles
	var parts []string
	if b := d.bound(); len(b) > 0 {
		names := make([]string, 0, len(b))
		for _, c := range b {
			names = append(names, fmt.Sprintf("%s %.0f%%", c.host, c.busy))
		}
		parts = append(parts, st.Worse.Render(fmt.Sprintf("CLIENT-BOUND: %s (≥%.0f%% CPU)", strings.Join(names, ", "), benchwire.ClientBoundPct)))
	}
	if len(d.targets) > 0 {
		order := d.sorted(SortP99)
		t := d.targets[order[0]]
		if form < 2 {
			parts = append(parts, fmt.Sprintf("slowest of %d instances: %s p99 %s ms", len(d.targets), t.target, fmtMs(t.p99)))
		} else {
			parts = append(parts, fmt.Sprintf("slowest of %d: %s p99 %s ms", len(d.targets), t.target, fmtMs(t.p99)))
		}
	}
	if !m.noKeys {
		// The views' keys, said as keys: "2 hosts · 3 instances" beside
		// "slowest of 2 instances" read as a count.
		k2, k3 := m.KeyMap.Tab2.Help().Key, m.KeyMap.Tab3.Help().Key
		keys := fmt.Sprintf("(keys: %s hosts view, %s instances view)", k2, k3)
		switch form {
		case 1, 2:
			keys = fmt.Sprintf("(keys: %s hosts, %s instances)", k2, k3)
		case 3:
			keys = fmt.Sprintf("(key %s hosts, %s inst.)", k2, k3)
		}
		parts = append(parts, st.Muted.Render(keys))
	}
	return strings.Join(parts, "  ")
}

// viewHosts is the hosts view: client hosts (saturated ones flagged) and
// server hosts with their instances summed.
func (m *Model) viewHosts(h int) []string {
	d := &m.drill
	st := m.Styles
	var lines []string
	if len(d.clients) == 0 {
		lines = append(lines, st.Muted.Render("One client host ran the load (no per-client-host figures): its CPU is in the charts' client figures."))
	} else {
		lines = append(lines, st.Bold.Render(fmt.Sprintf("Client hosts (%d)", len(d.clients))))
		lines = append(lines, st.TableHeader.Render(fmt.Sprintf("%-24s %12s %9s %9s %9s  %s", "host", "TPS", "p99 ms", "CPU %", "peak %", "")))
		for _, c := range d.clients {
			flag := ""
			if c.busy >= benchwire.ClientBoundPct {
				flag = st.Worse.Render("CLIENT-BOUND: the client, not the server, limits the load")
			} else if c.boundSecs > 0 {
				flag = st.Muted.Render(fmt.Sprintf("was client-bound %d s", c.boundSecs))
			}
			lines = append(lines, fmt.Sprintf("%-24s %12s %9s %9s %9s  %s", ansi.Truncate(c.host, 24, "…"), fmtOps(c.ops), fmtMs(c.p99), fmtPct(c.busy), fmtPct(c.peakBusy), flag))
		}
	}
	if len(d.targets) > 0 {
		type agg struct {
			host     string
			n        int
			ops      float64
			worst    targetRow
			hasWorst bool
			errors   int64
		}
		var hosts []*agg
		byHost := map[string]*agg{}
		for _, t := range d.targets {
			a, ok := byHost[t.host]
			if !ok {
				a = &agg{host: t.host}
				byHost[t.host] = a
				hosts = append(hosts, a)
			}
			a.n++
			a.ops += t.ops
			a.errors += t.errors
			if !a.hasWorst || t.p99 > a.worst.p99 {
				a.worst, a.hasWorst = t, true
			}
		}
		lines = append(lines, "", st.Bold.Render(fmt.Sprintf("Server hosts (%d)", len(hosts))))
		lines = append(lines, st.TableHeader.Render(fmt.Sprintf("%-24s %9s %12s %9s  %s", "host", "instances", "TPS", "errors", "slowest instance (p99 ms)")))
		for _, a := range hosts {
			name := a.host
			if name == "" {
				name = "?"
			}
			lines = append(lines, fmt.Sprintf("%-24s %9d %12s %9d  %s %s", ansi.Truncate(name, 24, "…"), a.n, fmtOps(a.ops), a.errors, a.worst.target, fmtMs(a.worst.p99)))
		}
	}
	return clip(lines, m.scroll, h)
}

// viewInstances is a row per instance in the chosen order, from the
// scroll offset.
func (m *Model) viewInstances(h int) []string {
	d := &m.drill
	st := m.Styles
	if len(d.targets) == 0 {
		return []string{st.Muted.Render("No per-instance figures: this bench did not report its targets one by one.")}
	}
	order := d.sorted(m.sortBy)
	head := st.TableHeader.Render(fmt.Sprintf("%4s %-22s %-12s %9s %8s %8s %6s  %s", "#", "instance", "host", "TPS", "p50 ms", "p99 ms", "errors", ""))
	rows := h - 1
	if rows < 1 {
		return []string{head}
	}
	m.scroll = min(m.scroll, max(len(order)-rows, 0))
	lines := []string{head}
	for k := m.scroll; k < len(order) && len(lines) <= rows; k++ {
		t := d.targets[order[k]]
		mark := d.hot(t)
		if mark != "" {
			mark = st.Worse.Render(mark)
		}
		lines = append(lines, fmt.Sprintf("%4d %-22s %-12s %9s %8s %8s %6d  %s", k+1, ansi.Truncate(t.target, 22, "…"), ansi.Truncate(t.host, 12, "…"), fmtOps(t.ops), fmtMs(t.p50), fmtMs(t.p99), t.errors, mark))
	}
	return lines
}

// clip keeps h lines from offset (which it bounds).
func clip(lines []string, offset, h int) []string {
	if h <= 0 {
		return nil
	}
	offset = min(max(offset, 0), max(len(lines)-h, 0))
	return lines[offset:min(len(lines), offset+h)]
}

func fmtOps(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtMs(v float64) string {
	if math.IsNaN(v) || v <= 0 {
		return "—"
	}
	if v < 10 {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func fmtPct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.0f", v)
}
