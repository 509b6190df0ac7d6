package server

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Per-command latency histograms: LATENCY HISTOGRAM and INFO
// latencystats, as Redis 7.0 reports them with latency-tracking on (its
// default).
//
// Redis records each call's duration (microseconds × 1000, in ns) in an
// HdrHistogram and reports it through a logarithmic iterator whose levels
// are 1024 ns × 2^k: a sample counts at the first level whose highest
// equivalent value (2 significant digits) holds it, and the level is
// shown as that value in µs (1, 2, 4, 8, 16, 33, 66, 131 ...). We keep
// just those levels, one counter each, so the reply has Redis's shape and
// bucket labels. Durations come from the batch timing INFO commandstats
// already does (chargeTime: one clock read per batch, spread evenly over
// its commands), so a command alone in its batch, the usual case without
// pipelining, is timed on its own and a pipelined one gets its share;
// commands inside MULTI/EXEC are counted in EXEC's time, not on their own.

// latencyLevels are the levels from 2^10 to 2^30 ns (Redis's 1 s bound).
const (
	latencyMinLevel = 10
	latencyLevels   = 31 - latencyMinLevel
)

// latencyHist counts a command's calls per level.
type latencyHist [latencyLevels]int64

// levelHigh is level i's highest equivalent value in ns: 2^m plus
// HdrHistogram's 2-significant-digit sub-bucket size at 2^m, less one.
func levelHigh(i int) int64 {
	m := uint(i + latencyMinLevel)
	return 1<<m + 1<<(m-7) - 1
}

// record counts one call of usec microseconds.
func (h *latencyHist) record(usec int64) {
	ns := max(usec, 0) * 1000
	if usec > 1_000_000 {
		ns = 1_000_000_000 // Redis's LATENCY_HISTOGRAM_MAX_VALUE
	}
	for i := 0; i < latencyLevels; i++ {
		if ns <= levelHigh(i) {
			h[i]++
			return
		}
	}
	h[latencyLevels-1]++
}

func (h *latencyHist) total() int64 {
	var n int64
	for _, v := range h {
		n += v
	}
	return n
}

// recordLatency adds per microseconds to the histogram of each command
// in batch, while latency-tracking is on. Called from chargeTime.
func (s *Server) recordLatency(batch []int, per int64) {
	if !s.latencyTracking {
		return
	}
	for _, id := range batch {
		st := &s.stats.cmd[id]
		if st.hist == nil {
			st.hist = new(latencyHist)
		}
		st.hist.record(per)
	}
}

// writeHistogram is Redis's fillCommandCDF: calls and the cumulative
// count at each level that has samples.
func (c *Client) writeHistogram(h *latencyHist) {
	c.writeMap(2)
	c.writeBulkString("calls")
	c.writeInt(h.total())
	c.writeBulkString("histogram_usec")
	n := 0
	for _, v := range h {
		if v > 0 {
			n++
		}
	}
	c.writeMap(n)
	var cum int64
	for i, v := range h {
		if v == 0 {
			continue
		}
		cum += v
		c.writeInt(levelHigh(i) / 1000)
		c.writeInt(cum)
	}
}

// cmdLatencyHistogram is LATENCY HISTOGRAM [command ...]: every command
// with samples, or the ones named (a container command with its
// subcommands; unknown names are skipped, repeated ones repeated).
func cmdLatencyHistogram(c *Client, args [][]byte) {
	s := c.srv
	type entry struct {
		name string
		h    *latencyHist
	}
	var out []entry
	add := func(cmd *command) {
		if h := s.stats.cmd[cmd.id].hist; h != nil && h.total() > 0 {
			out = append(out, entry{cmd.Name, h})
		}
		for _, sub := range cmd.Subcommands {
			if h := s.stats.cmd[sub.id].hist; h != nil && h.total() > 0 {
				out = append(out, entry{sub.Name, h})
			}
		}
	}
	if len(args) == 2 {
		for _, cmd := range s.cmds.list {
			add(cmd)
		}
	} else {
		for _, a := range args[2:] {
			if cmd := s.lookupFullName(a); cmd != nil {
				add(cmd)
			}
		}
	}
	c.writeMap(len(out))
	for _, e := range out {
		c.writeBulkString(e.name)
		c.writeHistogram(e.h)
	}
}

// lookupFullName finds a command by Redis's full name: "get", or
// "config|get" for a subcommand.
func (s *Server) lookupFullName(name []byte) *command {
	parent, sub, isSub := strings.Cut(string(name), "|")
	cmd := s.cmds.lookup([]byte(parent))
	if cmd == nil || !isSub {
		return cmd
	}
	if cmd.Subcommands == nil {
		return nil
	}
	return findSub(cmd, []byte(sub))
}

// percentile is HdrHistogram's value at percentile p (0..100) in µs: the
// highest equivalent value of the level holding it.
func (h *latencyHist) percentile(p float64) float64 {
	total := h.total()
	if total == 0 {
		return 0
	}
	want := int64(math.Ceil(p / 100 * float64(total)))
	want = max(want, 1)
	var cum int64
	for i, v := range h {
		cum += v
		if cum >= want {
			return float64(levelHigh(i)) / 1000
		}
	}
	return float64(levelHigh(latencyLevels-1)) / 1000
}

// latencyStats is INFO latencystats: per command with samples, the
// latency-tracking-info-percentiles.
func (s *Server) latencyStats(kv func(string, any)) {
	ps := s.cfg.percentiles()
	for _, cmd := range s.cmds.all {
		h := s.stats.cmd[cmd.id].hist
		if h == nil || h.total() == 0 {
			continue
		}
		var b strings.Builder
		for i, p := range ps {
			if i > 0 {
				b.WriteByte(',')
			}
			name := strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(p, 'f', 6, 64), "0"), ".")
			fmt.Fprintf(&b, "p%s=%.3f", name, h.percentile(p))
		}
		kv("latency_percentiles_usec_"+cmd.Name, b.String())
	}
}

// applyLatencyConfig refreshes what the hot path reads of the latency
// settings (from applyDerived).
func (s *Server) applyLatencyConfig() {
	s.latencyTracking = s.cfg.param("latency-tracking") == "yes"
}
