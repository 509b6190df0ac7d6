package results

import (
	"fmt"
	"slices"
	"strings"
)

// renderClients is report.md's client-host section of a bench or compare:
// when several client hosts shared the load, each one's share of every
// run, with its CPU and clock. What a saturated client host or a clock
// spread means for the figures is a warning (Warnings), said above.
func renderClients(b *strings.Builder, c *Compare) {
	type row struct {
		v, sweep string
		r        *RunResult
	}
	var rows []row
	for vi := range c.Variants {
		v := &c.Variants[vi]
		for pi := range v.Points {
			p := &v.Points[pi]
			for ri := range p.Runs {
				r := &p.Runs[ri]
				if len(r.Clients) > 0 {
					rows = append(rows, row{v.Label, p.Value, r})
				}
			}
		}
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
	}
	b.WriteString("\nClock offsets are each host's clock against the machine that ran dpulab, read over SSH (date +%s.%N at the midpoint of the round trip, ± half of it).")
	var skew float64
	for _, x := range rows {
		if x.r.StartSkewMs != nil {
			skew = max(skew, *x.r.StartSkewMs)
		}
	}
	fmt.Fprintf(b, " The hosts' measured parts began at most %.0f ms apart, as seen from that machine.\n\n", skew)
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
