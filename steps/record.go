package steps

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/steps/results"
)

// A run step's record: names a format of figures its commands print; the
// engine reads them from the step's standard output, host by host, and
// keeps them in results (HostFigures), where the reports set them beside
// the benchmarks. One reader per command.RecordFormats entry.
var recorders = map[string]func(lines []string) []results.HostFigure{
	"perftest": perftestFigures,
}

// keepHostFigures replaces what step recorded on host before (a retry)
// with figs.
func (e *Engine) keepHostFigures(step, host string, figs []results.HostFigure) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.results == nil {
		return
	}
	e.results.HostFigures = slices.DeleteFunc(e.results.HostFigures, func(f results.HostFigure) bool {
		return f.Step == step && f.Host == host
	})
	for _, f := range figs {
		f.Step, f.Host = step, host
		e.results.HostFigures = append(e.results.HostFigures, f)
	}
}

// perftest's clients print a banner naming the test ("Send Latency Test",
// "RDMA_Write BW Test"), then a header row of columns and a row per
// message size. Which program printed it follows from the banner.
var (
	perftestBanner = regexp.MustCompile(`\b(Send|RDMA_Write|RDMA_Read|Atomic) (Latency|BW) Test\b`)
	perftestTools  = map[string]string{"Send": "ib_send", "RDMA_Write": "ib_write", "RDMA_Read": "ib_read", "Atomic": "ib_atomic"}
	perftestNumber = regexp.MustCompile(`^[0-9]+$`)
)

// perftestColumns are the columns kept, by header name: the typical and
// average latency and the 99th percentile of a latency test, the average
// and peak bandwidth and the message rate of a bandwidth test.
var perftestColumns = map[string]struct{ label, unit string }{
	"t_typical[usec]":      {"typical latency", "µs"},
	"t_avg[usec]":          {"average latency", "µs"},
	"99% percentile[usec]": {"99th percentile latency", "µs"},
	"BW average[Gb/sec]":   {"average bandwidth", "Gb/s"},
	"BW peak[Gb/sec]":      {"peak bandwidth", "Gb/s"},
	"MsgRate[Mpps]":        {"message rate", "Mpps"},
}

// perftestFigures reads perftest's result tables out of a client's
// output: for every row (one message size), the columns of
// perftestColumns, labelled with the size. Rows of a run over all sizes
// (-a) are all kept.
func perftestFigures(lines []string) []results.HostFigure {
	var out []results.HostFigure
	var tool string
	var cols []string
	for _, l := range lines {
		if m := perftestBanner.FindStringSubmatch(l); m != nil {
			tool, cols = "perftest "+perftestTools[m[1]]+"_"+strings.ToLower(map[string]string{"Latency": "lat", "BW": "bw"}[m[2]]), nil
			continue
		}
		f := strings.Fields(l)
		if len(f) > 1 && f[0] == "#bytes" {
			// "99% percentile[usec]", "BW peak[Gb/sec]" are one column
			// each.
			cols = nil
			for _, c := range f {
				if n := len(cols); n > 0 && (strings.HasSuffix(cols[n-1], "%") || cols[n-1] == "BW") {
					cols[n-1] += " " + c
					continue
				}
				cols = append(cols, c)
			}
			continue
		}
		if tool == "" || len(cols) < 2 || len(f) < len(cols) || !perftestNumber.MatchString(f[0]) {
			continue
		}
		size, _ := strconv.Atoi(f[0])
		for i, c := range cols {
			kept, ok := perftestColumns[c]
			if !ok {
				continue
			}
			// perftest prints "inf" (and ParseFloat takes it) when a
			// test's time rounds to nothing, e.g. a bandwidth peak over
			// one iteration: not a figure, and JSON cannot carry it.
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				continue
			}
			out = append(out, results.HostFigure{Tool: tool, Label: kept.label + ", " + sizeText(size), Value: v, Unit: kept.unit})
		}
	}
	return out
}

// sizeText is a message size as perftest's users say it: 256 B, 4 KiB.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " B"
}
