package results

import (
	"fmt"
	"slices"
	"strings"
)

// renderClients is report.md's client-host section of a bench or compare:
// the runs whose client host was saturated (any bench), and, when several
// client hosts shared the load, each one's share of every run, with its
// CPU and clock, and the clock check's verdict.
func renderClients(b *strings.Builder, c *Compare) {
	type row struct {
		v, sweep string
		r        *RunResult
	}
	var rows, bound, shared []row
	for vi := range c.Variants {
		v := &c.Variants[vi]
		serves := len(c.SharedClientHosts(v)) > 0
		for pi := range v.Points {
			p := &v.Points[pi]
			for ri := range p.Runs {
				r := &p.Runs[ri]
				if len(r.Clients) > 0 {
					rows = append(rows, row{v.Label, p.Value, r})
				}
				switch {
				case r.ClientBound && serves:
					shared = append(shared, row{v.Label, p.Value, r})
				case r.ClientBound:
					bound = append(bound, row{v.Label, p.Value, r})
				}
			}
		}
	}
	if len(shared) > 0 {
		// The busy share is the host's, and the host also ran the server:
		// saturation then says the host was full, not that the client was
		// the bottleneck.
		fmt.Fprintf(b, "**Saturated shared hosts**: the load generator ran on a host that also served (%s), and that host was at least 90%% busy: the load generator and the server competed for its CPUs, so these figures are that one host's limit with both on it, not the server's alone. To measure the server, run the client role on another host:\n\n",
			strings.Join(c.sharedHosts(), ", "))
		for _, x := range shared {
			fmt.Fprintf(b, "- %s%s run %d", x.v, sweepNote(c, x.sweep), x.r.Run)
			if x.r.ClientHostBusyPct != nil {
				fmt.Fprintf(b, ": host %.0f%% busy", *x.r.ClientHostBusyPct)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if len(bound) > 0 {
		b.WriteString("**Client-bound runs**: a client host was at least 90% busy, so the load generator, not only the server, limited these figures (they understate the server); add client hosts (`clients_hosts`) or lower the load per host:\n\n")
		for _, x := range bound {
			fmt.Fprintf(b, "- %s%s run %d", x.v, sweepNote(c, x.sweep), x.r.Run)
			if x.r.ClientHostBusyPct != nil {
				fmt.Fprintf(b, ": busiest client host %.0f%% busy", *x.r.ClientHostBusyPct)
			}
			var hosts []string
			for _, cs := range x.r.Clients {
				if cs.ClientBound {
					hosts = append(hosts, cs.Host)
				}
			}
			if len(hosts) > 0 {
				fmt.Fprintf(b, " (%s)", strings.Join(hosts, ", "))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "### Client hosts\n\nThe load came from %d client hosts (%s), each running a share of it, started together. The figures above are theirs merged second by second: TPS summed, latency percentiles read from the merged HDR histograms (never averaged percentiles). Each host's share:\n\n",
		len(rows[0].r.Clients), strings.Join(clientHostNames(rows[0].r), ", "))
	b.WriteString("| variant |")
	if c.Sweep != "" {
		fmt.Fprintf(b, " %s |", c.Sweep)
	}
	b.WriteString(" run | client host | TPS | avg ms | p99 ms | client host CPU | clock offset |\n|---|")
	if c.Sweep != "" {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|---|---|---|---|\n")
	var warnings []string
	for _, x := range rows {
		for _, cs := range x.r.Clients {
			fmt.Fprintf(b, "| %s |", mdCell(x.v))
			if c.Sweep != "" {
				fmt.Fprintf(b, " %s |", mdCell(x.sweep))
			}
			cpu := "–"
			if cs.ClientHostBusyPct != nil {
				cpu = fmt.Sprintf("%.0f%%", *cs.ClientHostBusyPct)
				if cs.ClientBound {
					cpu += " **client-bound**"
				}
			}
			clock := "–"
			if cs.ClockOffsetMs != nil {
				clock = fmt.Sprintf("%+.1f ms", *cs.ClockOffsetMs)
				if cs.ClockUncertaintyMs != nil {
					clock += fmt.Sprintf(" ± %.1f", *cs.ClockUncertaintyMs)
				}
			}
			fmt.Fprintf(b, " %d | %s | %s | %.3f | %.3f | %s | %s |\n", x.r.Run, mdCell(cs.Host), FormatNumber(cs.OpsPerSec), cs.LatencyMs.Avg, cs.LatencyMs.P99, cpu, clock)
		}
		if x.r.ClockWarning != "" && !slices.Contains(warnings, x.r.ClockWarning) {
			warnings = append(warnings, x.r.ClockWarning)
		}
	}
	b.WriteString("\nClock offsets are each host's clock against the machine that ran dpulab, read over SSH (date +%s.%N at the midpoint of the round trip, ± half of it).")
	var skew float64
	for _, x := range rows {
		if x.r.StartSkewMs != nil {
			skew = max(skew, *x.r.StartSkewMs)
		}
	}
	fmt.Fprintf(b, " The hosts' measured parts began at most %.0f ms apart, as seen from that machine.\n\n", skew)
	for _, w := range warnings {
		fmt.Fprintf(b, "> **Clock warning**: %s\n\n", w)
	}
}

// SharedClientHosts are the client hosts of c that also served variant v
// (named among its Hosts): there the load generator and the server share
// one host's CPUs, and a busy host is not a client-bound one.
func (c *Compare) SharedClientHosts(v *VariantResult) []string {
	clients := c.Clients
	if len(clients) == 0 && c.Client != "" {
		clients = []string{c.Client}
	}
	var out []string
	for _, h := range clients {
		if slices.Contains(v.Hosts, h) {
			out = append(out, h)
		}
	}
	return out
}

// sharedHosts are the client hosts that served any of c's variants.
func (c *Compare) sharedHosts() []string {
	var out []string
	for i := range c.Variants {
		for _, h := range c.SharedClientHosts(&c.Variants[i]) {
			if !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	return out
}

func clientHostNames(r *RunResult) []string {
	out := make([]string, len(r.Clients))
	for i, cs := range r.Clients {
		out[i] = cs.Host
	}
	return out
}

func sweepNote(c *Compare, v string) string {
	if c.Sweep == "" || v == "" {
		return ""
	}
	return fmt.Sprintf(" (%s=%s)", c.Sweep, v)
}
