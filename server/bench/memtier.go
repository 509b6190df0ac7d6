package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dpulab/dpulab/server/transport"
)

// This file writes what memtier_benchmark users feed to their scripts and
// tools: --json-out-file in memtier's JSON shape and --hdr-file-prefix's
// HdrHistogram files.
//
// The JSON document has memtier's keys: "configuration", then "ALL STATS"
// for one run, or "RUN #N RESULTS" per run, "BEST RUN RESULTS", "WORST RUN
// RESULTS" and "AGGREGATED AVERAGE RESULTS (N runs)" for several; each has
// "Sets", "Gets", "Waits", "Totals" (Count, Ops/sec, Hits/sec, Misses/sec,
// Latency, Average/Min/Max/Accumulated Latency, KB/sec..., "Time-Serie" per
// second, "Percentile Latencies" with "pNN.NN" keys and the compressed HDR
// histogram) and "Runtime". Latencies are milliseconds as in memtier.
// Where dpulab does not measure what memtier reports, the key is left out
// rather than filled with a number that was not measured: the bytes of a
// single command ("KB/sec" and the Time-Serie's "Bytes RX/TX" of Sets and
// Gets; Totals has them) — memtierSampleExceptions in the test lists them.

// second is one interval of a run, per command, for the Time-Serie.
type second struct {
	t          float64
	cmd        [nCmd]secStat
	all        secStat
	sent, recv int64
}

type secStat struct {
	count              int64
	avg, min, max, sum float64
	pct                []float64
}

func statOf(h *hdrhistogram.Histogram, ps []float64) secStat {
	s := secStat{count: h.TotalCount()}
	if s.count == 0 {
		return s
	}
	s.avg, s.min, s.max = h.Mean()/1000, float64(h.Min())/1000, float64(h.Max())/1000
	s.sum = h.Mean() * float64(s.count) / 1000
	for _, p := range ps {
		s.pct = append(s.pct, float64(h.ValueAtQuantile(p))/1000)
	}
	return s
}

// second snapshots the interval that is ending (before resetInterval).
func (c *collector) second(t float64) second {
	s := second{t: t, sent: c.ivSent, recv: c.ivRecv, all: statOf(c.ivHist, c.cfg.Percentiles)}
	for i, h := range c.ivCmdHist {
		s.cmd[i] = statOf(h, c.cfg.Percentiles)
	}
	return s
}

// runRecord is one run kept whole for the files.
type runRecord struct {
	run        int
	res        *RunResult
	all        *hdrhistogram.Histogram
	cmd        [nCmd]*hdrhistogram.Histogram
	series     []second
	sent, recv int64
	start, end time.Time
	connErrors int
}

// obj is a JSON object that keeps its keys in order, as memtier writes them.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.k, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// fixed renders a float as memtier's "%.Nf" does, as a JSON number.
type fixed struct {
	v    float64
	prec int
}

func (f fixed) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, f.v, 'f', f.prec, 64), nil
}

func f2(v float64) fixed { return fixed{v, 2} }
func f3(v float64) fixed { return fixed{v, 3} }

// pctKey is memtier's key for a percentile: "p50.00", "p99.90".
func pctKey(p float64) string { return "p" + strconv.FormatFloat(p, 'f', 2, 64) }

// memtierSection is one of Sets, Gets, Waits, Totals.
func memtierSection(ps []float64, count int64, seconds float64, hits, misses float64, h *hdrhistogram.Histogram,
	series []second, cmd int, bytesRecv, bytesSent int64, withBytes bool, connErrors int) (obj, error) {
	s := statOf(h, nil)
	o := obj{
		{"Count", count},
		{"Ops/sec", f2(perSec(count, seconds))},
		{"Hits/sec", f2(hits)},
		{"Misses/sec", f2(misses)},
		{"Connection Errors/sec", f2(perSec(int64(connErrors), seconds))},
		{"Connection Errors", connErrors},
		{"Latency", f3(s.avg)},
		{"Average Latency", f3(s.avg)},
		{"Accumulated Latency", int64(s.sum)},
		{"Min Latency", f3(s.min)},
		{"Max Latency", f3(s.max)},
	}
	if withBytes {
		rx, tx := perSec(bytesRecv, seconds)/1024, perSec(bytesSent, seconds)/1024
		o = append(o, kv{"KB/sec", f2(rx + tx)}, kv{"KB/sec RX/TX", f2(rx + tx)}, kv{"KB/sec RX", f2(rx)}, kv{"KB/sec TX", f2(tx)})
	}
	ts := obj{}
	for i, sec := range series {
		st := sec.all
		if cmd >= 0 {
			st = sec.cmd[cmd]
		}
		e := obj{}
		if withBytes {
			e = append(e, kv{"Bytes RX", sec.recv}, kv{"Bytes TX", sec.sent})
		}
		e = append(e, kv{"Count", st.count})
		if st.count > 0 {
			e = append(e, kv{"Average Latency", f3(st.avg)}, kv{"Accumulated Latency", int64(st.sum)},
				kv{"Min Latency", f3(st.min)}, kv{"Max Latency", f3(st.max)})
			for j, p := range ps {
				if j < len(st.pct) {
					e = append(e, kv{pctKey(p), f3(st.pct[j])})
				}
			}
		}
		ts = append(ts, kv{strconv.Itoa(i), e})
	}
	o = append(o, kv{"Time-Serie", ts})
	pl := obj{}
	for _, p := range ps {
		v := 0.0
		if h.TotalCount() > 0 {
			v = float64(h.ValueAtQuantile(p)) / 1000
		}
		pl = append(pl, kv{pctKey(p), f3(v)})
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	pl = append(pl, kv{"Histogram log format", obj{{"Compressed Histogram", string(enc)}}})
	o = append(o, kv{"Percentile Latencies", pl})
	return o, nil
}

func (r *runRecord) section(cfg *Config) (obj, error) {
	res := r.res
	sec := res.Seconds
	out := obj{}
	for cmd, name := range [nCmd]string{"Sets", "Gets"} {
		hits, misses := 0.0, 0.0
		if cmd == cmdGet {
			hits, misses = perSec(res.Hits, sec), perSec(res.Misses, sec)
		}
		o, err := memtierSection(cfg.Percentiles, r.cmd[cmd].TotalCount(), sec, hits, misses, r.cmd[cmd], r.series, cmd, 0, 0, false, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, kv{name, o})
	}
	waits, err := memtierSection(cfg.Percentiles, 0, sec, 0, 0, newHist(), nil, cmdSet, 0, 0, false, 0)
	if err != nil {
		return nil, err
	}
	out = append(out, kv{"Waits", waits})
	tot, err := memtierSection(cfg.Percentiles, r.all.TotalCount(), sec, perSec(res.Hits, sec), perSec(res.Misses, sec),
		r.all, r.series, -1, r.recv, r.sent, true, r.connErrors)
	if err != nil {
		return nil, err
	}
	out = append(out, kv{"Totals", tot})
	out = append(out, kv{"Runtime", obj{
		{"Start time", r.start.UnixMilli()},
		{"Finish time", r.end.UnixMilli()},
		{"Total duration", r.end.Sub(r.start).Milliseconds()},
		{"Time unit", "MILLISECONDS"},
		{"Interrupted", res.Partial},
	}})
	return out, nil
}

// aggregate merges runs for "AGGREGATED AVERAGE RESULTS": histograms
// merged, counts summed, durations summed, so rates are averages over the
// measured time.
func aggregate(recs []*runRecord) *runRecord {
	a := &runRecord{run: 0, all: newHist(), res: &RunResult{}}
	for i := range a.cmd {
		a.cmd[i] = newHist()
	}
	for _, r := range recs {
		a.all.Merge(r.all)
		for i := range a.cmd {
			a.cmd[i].Merge(r.cmd[i])
		}
		a.res.Seconds += r.res.Seconds
		a.res.Hits += r.res.Hits
		a.res.Misses += r.res.Misses
		a.res.Partial = a.res.Partial || r.res.Partial
		a.sent += r.sent
		a.recv += r.recv
		a.connErrors += r.connErrors
		if a.start.IsZero() || r.start.Before(a.start) {
			a.start = r.start
		}
		if r.end.After(a.end) {
			a.end = r.end
		}
	}
	return a
}

// memtierJSON builds the --json-out-file document.
func memtierJSON(cfg *Config, recs []*runRecord) ([]byte, error) {
	doc := obj{{"configuration", memtierConfig(cfg)}}
	add := func(name string, r *runRecord) error {
		s, err := r.section(cfg)
		if err != nil {
			return err
		}
		doc = append(doc, kv{name, s})
		return nil
	}
	if len(recs) == 1 {
		if err := add("ALL STATS", recs[0]); err != nil {
			return nil, err
		}
	} else if len(recs) > 1 {
		best, worst := recs[0], recs[0]
		for _, r := range recs {
			if err := add(fmt.Sprintf("RUN #%d RESULTS", r.run), r); err != nil {
				return nil, err
			}
			if r.res.OpsPerSec > best.res.OpsPerSec {
				best = r
			}
			if r.res.OpsPerSec < worst.res.OpsPerSec {
				worst = r
			}
		}
		for _, e := range []struct {
			name string
			r    *runRecord
		}{{"BEST RUN RESULTS", best}, {"WORST RUN RESULTS", worst}, {fmt.Sprintf("AGGREGATED AVERAGE RESULTS (%d runs)", len(recs)), aggregate(recs)}} {
			if err := add(e.name, e.r); err != nil {
				return nil, err
			}
		}
	}
	b, err := json.MarshalIndent(doc, "", "\t")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// memtierConfig is memtier's "configuration" block. The password is never
// written: "authenticate" says only whether there was one.
func memtierConfig(c *Config) obj {
	server, port := "", 0
	sock := ""
	// memtier names one server: the first of each kind.
	for _, ep := range c.Endpoints {
		switch {
		case ep.Transport == transport.Unix && sock == "":
			sock = ep.Address
		case ep.Transport != transport.Unix && server == "":
			server, port, _ = splitHostPort(ep.Address)
		}
	}
	proto := "resp2"
	if c.Protocol == 3 {
		proto = "resp3"
	}
	auth := ""
	if c.Password != "" {
		auth = "(set, not shown)"
	}
	sizeList := ""
	if len(c.DataSizeList) > 0 {
		sizeList = FormatSizeList(c.DataSizeList)
	}
	pattern := c.DataSizePattern
	if pattern == "" {
		pattern = "R"
	}
	return obj{
		{"server", server}, {"port", port}, {"unix socket", sock}, {"protocol", proto},
		{"out_file", ""}, {"run_count", c.Runs}, {"requests", c.RequestsPerClient},
		{"rate_limit", c.RateLimiting}, {"clients", c.Clients}, {"threads", c.Threads},
		{"test_time", int64(c.Duration / time.Second)}, {"ratio", c.Ratio.String()}, {"pipeline", c.Pipeline},
		{"data_size", c.DataSize}, {"data_size_range", c.DataSizeRange.String()}, {"data_size_list", sizeList},
		{"data_size_pattern", pattern}, {"expiry_range", c.ExpirySeconds.String()},
		{"key_prefix", c.KeyPrefix}, {"key_minimum", c.KeyMinimum}, {"key_maximum", c.KeyMaximum},
		{"key_pattern", string(c.KeyPattern)}, {"authenticate", auth}, {"select-db", c.SelectDB},
		{"json-out-file", c.JSONOutFile}, {"hdr-file-prefix", c.HDRFilePrefix},
		// dpulab's own, under names memtier does not use.
		{"dpulab_targets", c.Labels()}, {"dpulab_requests_total", c.Requests},
		{"dpulab_rate_ops_per_sec", c.Rate}, {"dpulab_warmup_ms", c.Warmup.Milliseconds()},
	}
}

func splitHostPort(t string) (string, int, error) {
	i := bytes.LastIndexByte([]byte(t), ':')
	if i < 0 {
		return t, 0, fmt.Errorf("no port in %q", t)
	}
	p, err := strconv.Atoi(t[i+1:])
	h := t[:i]
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	return h, p, err
}

// writeHDRFiles writes one run's HdrHistogram files (see Config.HDRFilePrefix).
// Values are microseconds; the log's max column is that divided by 10^6.
func writeHDRFiles(prefix string, r *runRecord) error {
	files := []struct {
		name string
		h    *hdrhistogram.Histogram
		tag  string
	}{
		{fmt.Sprintf("%s_FULL_RUN_%d.hgrm", prefix, r.run), r.all, "FULL_RUN"},
		{fmt.Sprintf("%s_SET_command_run_%d.hgrm", prefix, r.run), r.cmd[cmdSet], "SET"},
		{fmt.Sprintf("%s_GET_command_run_%d.hgrm", prefix, r.run), r.cmd[cmdGet], "GET"},
	}
	for _, f := range files {
		var b bytes.Buffer
		lw := hdrhistogram.NewHistogramLogWriter(&b)
		h := hdrhistogram.Import(f.h.Export())
		h.SetStartTimeMs(r.start.UnixMilli())
		h.SetEndTimeMs(r.end.UnixMilli())
		h.SetTag(f.tag)
		for _, step := range []func() error{
			lw.OutputLogFormatVersion,
			func() error { return lw.OutputComment("dpulab bench latency histogram, values in microseconds") },
			func() error { return lw.OutputStartTime(r.start.UnixMilli()) },
			func() error { return lw.OutputBaseTime(r.start.UnixMilli()) },
			lw.OutputLegend,
			func() error { lw.SetBaseTime(r.start.UnixMilli()); return lw.OutputIntervalHistogram(h) },
		} {
			if err := step(); err != nil {
				return fmt.Errorf("--hdr-file-prefix %s: %w", f.name, err)
			}
		}
		if err := writeFileAtomic(f.name, b.Bytes()); err != nil {
			return err
		}
	}
	// The percentile distribution in HdrHistogram's classic text form, in
	// milliseconds, as HistogramLogAnalyzer and hdr-plot read it.
	var b bytes.Buffer
	if _, err := r.all.PercentilesPrint(&b, 5, 1000); err != nil {
		return fmt.Errorf("--hdr-file-prefix: percentiles: %w", err)
	}
	return writeFileAtomic(fmt.Sprintf("%s_FULL_RUN_%d.txt", prefix, r.run), b.Bytes())
}

// writeFileAtomic writes via a temporary file in the same directory and a
// rename, so a reader never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
