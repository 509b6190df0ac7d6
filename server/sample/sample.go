// Package sample measures a host while a benchmark runs: CPU time split by
// kind (with the share spent on networking: softirq + irq), network bytes per
// second per interface, package power from RAPL when the host exposes it,
// and the traffic and error counters of InfiniBand and RoCE ports (rdma.go),
// which see the RDMA traffic /proc/net/dev cannot. `dpulab sample` prints one Sample per interval as a JSON line; the step
// engine runs it on lab hosts through the runner and reads the stream back
// with a Decoder.
//
// Numbers come only from the kernel's counters: when a source is missing
// (no RAPL, unreadable energy counter) the field is null, never estimated.
package sample

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dpulab/dpulab/internal/wire/samplewire"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The records `dpulab sample` prints, and their decoder, are declared in
// internal/wire/samplewire, which the step engine reads without linking
// this package.
type (
	CPU     = samplewire.CPU
	NetRate = samplewire.NetRate
	Sample  = samplewire.Sample
	Decoder = samplewire.Decoder
)

// NewDecoder reads Samples from r (samplewire.NewDecoder).
func NewDecoder(r io.Reader) *Decoder { return samplewire.NewDecoder(r) }

// DecodeLine parses one JSON line (samplewire.DecodeLine).
func DecodeLine(b []byte, line int) (Sample, error) { return samplewire.DecodeLine(b, line) }

// CPUTimes are the aggregate "cpu" counters of /proc/stat, in clock ticks.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// ParseProcStat reads the aggregate cpu line of /proc/stat.
func ParseProcStat(r io.Reader) (CPUTimes, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 5 {
			return CPUTimes{}, fmt.Errorf("/proc/stat: short cpu line %q", sc.Text())
		}
		v := make([]uint64, 8)
		for i := 0; i < 8 && i+1 < len(f); i++ {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("/proc/stat: cpu field %d: %w", i+1, err)
			}
			v[i] = n
		}
		return CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
	}
	if err := sc.Err(); err != nil {
		return CPUTimes{}, err
	}
	return CPUTimes{}, errors.New("/proc/stat: no aggregate cpu line")
}

// CPUShare turns two readings into percentages. A counter that went
// backwards (it should not) counts as zero.
func CPUShare(prev, cur CPUTimes) CPU {
	d := func(a, b uint64) float64 {
		if b < a {
			return 0
		}
		return float64(b - a)
	}
	user := d(prev.User, cur.User) + d(prev.Nice, cur.Nice)
	sys := d(prev.System, cur.System)
	idle := d(prev.Idle, cur.Idle)
	iow := d(prev.IOWait, cur.IOWait)
	irq := d(prev.IRQ, cur.IRQ)
	sirq := d(prev.SoftIRQ, cur.SoftIRQ)
	steal := d(prev.Steal, cur.Steal)
	total := user + sys + idle + iow + irq + sirq + steal
	if total == 0 {
		return CPU{}
	}
	pct := func(x float64) float64 { return round2(100 * x / total) }
	c := CPU{User: pct(user), System: pct(sys), SoftIRQ: pct(sirq), IRQ: pct(irq), IOWait: pct(iow), Steal: pct(steal), Idle: pct(idle)}
	c.Network = pct(sirq + irq)
	return c
}

func round2(x float64) float64 {
	return float64(int64(x*100+0.5)) / 100
}

// NetCounters are one interface's cumulative byte counters.
type NetCounters struct {
	RxBytes, TxBytes uint64
}

// ParseNetDev reads /proc/net/dev.
func ParseNetDev(r io.Reader) (map[string]NetCounters, error) {
	out := map[string]NetCounters{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(name, "|") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 16 {
			return nil, fmt.Errorf("/proc/net/dev: short line %q", line)
		}
		rx, err1 := strconv.ParseUint(f[0], 10, 64)
		tx, err2 := strconv.ParseUint(f[8], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/net/dev: bad counters in %q", line)
		}
		out[strings.TrimSpace(name)] = NetCounters{RxBytes: rx, TxBytes: tx}
	}
	return out, sc.Err()
}

// raplZone is one RAPL package domain.
type raplZone struct {
	dir      string
	maxRange uint64
}

// raplReading is the energy counters of every package, in µJ.
type raplReading map[string]uint64

// CounterDelta is the increase between two readings of a counter that wraps
// at maxRange (RAPL's max_energy_range_uj). With maxRange 0 (unknown), a
// counter that went backwards (reset, interface re-created) counts as 0.
func CounterDelta(prev, cur, maxRange uint64) uint64 {
	if cur >= prev {
		return cur - prev
	}
	if maxRange == 0 || prev > maxRange {
		return 0
	}
	return maxRange - prev + cur
}

// Sampler takes Samples on this host.
type Sampler struct {
	// Host is put in every Sample (default: os.Hostname()).
	Host string
	// Ifaces restricts the network interfaces reported; empty means all
	// but lo.
	Ifaces []string
	// Root is prefixed to /proc and /sys paths (/proc/stat,
	// /sys/class/powercap, /sys/class/infiniband); tests point it at a
	// tree they build.
	Root string

	primed   bool
	prevT    time.Time
	prevCPU  CPUTimes
	prevNet  map[string]NetCounters
	zones    []raplZone
	prevRAPL raplReading
	prevRDMA map[string]rdmaCounters
	now      func() time.Time
}

func (s *Sampler) path(p string) string { return filepath.Join(s.Root, p) }

func (s *Sampler) read() (time.Time, CPUTimes, map[string]NetCounters, raplReading, error) {
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	t := now()
	b, err := os.ReadFile(s.path("/proc/stat"))
	if err != nil {
		return t, CPUTimes{}, nil, nil, fmt.Errorf("sample: %w", err)
	}
	cpu, err := ParseProcStat(bytes.NewReader(b))
	if err != nil {
		return t, CPUTimes{}, nil, nil, fmt.Errorf("sample: %w", err)
	}
	b, err = os.ReadFile(s.path("/proc/net/dev"))
	if err != nil {
		return t, CPUTimes{}, nil, nil, fmt.Errorf("sample: %w", err)
	}
	net, err := ParseNetDev(bytes.NewReader(b))
	if err != nil {
		return t, CPUTimes{}, nil, nil, fmt.Errorf("sample: %w", err)
	}
	return t, cpu, net, s.readRAPL(), nil
}

// findRAPL lists the package-level zones (intel-rapl:N, not the :N:M
// subzones, which are parts of their package and would count twice).
func (s *Sampler) findRAPL() {
	dirs, _ := filepath.Glob(s.path("/sys/class/powercap/intel-rapl:*"))
	sort.Strings(dirs)
	for _, d := range dirs {
		if strings.Count(filepath.Base(d), ":") != 1 {
			continue
		}
		rel := strings.TrimPrefix(d, filepath.Clean(s.Root))
		mr, err := readUint(s.path(filepath.Join(rel, "max_energy_range_uj")))
		if err != nil {
			continue
		}
		s.zones = append(s.zones, raplZone{dir: rel, maxRange: mr})
	}
}

// readRAPL returns nil unless every package counter is readable: a partial
// sum would under-report power.
func (s *Sampler) readRAPL() raplReading {
	if len(s.zones) == 0 {
		return nil
	}
	r := raplReading{}
	for _, z := range s.zones {
		v, err := readUint(s.path(filepath.Join(z.dir, "energy_uj")))
		if err != nil {
			return nil
		}
		r[z.dir] = v
	}
	return r
}

func readUint(p string) (uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// Next returns the Sample for the interval since the previous call. The
// first call only takes the starting readings and returns ok=false.
func (s *Sampler) Next() (Sample, bool, error) {
	if !s.primed && s.zones == nil {
		s.findRAPL()
	}
	t, cpu, net, rapl, err := s.read()
	if err != nil {
		return Sample{}, false, err
	}
	ib := s.readRDMA()
	if !s.primed {
		s.primed = true
		s.prevT, s.prevCPU, s.prevNet, s.prevRAPL, s.prevRDMA = t, cpu, net, rapl, ib
		return Sample{}, false, nil
	}
	dt := t.Sub(s.prevT).Seconds()
	smp := Sample{T: t.UTC(), Host: s.host(), CPU: CPUShare(s.prevCPU, cpu), Net: map[string]NetRate{}}
	for name, c := range net {
		if !s.wantIface(name) {
			continue
		}
		p, ok := s.prevNet[name]
		if !ok || dt <= 0 {
			continue
		}
		smp.Net[name] = NetRate{
			RxBytesPerSec: round2(float64(CounterDelta(p.RxBytes, c.RxBytes, 0)) / dt),
			TxBytesPerSec: round2(float64(CounterDelta(p.TxBytes, c.TxBytes, 0)) / dt),
		}
	}
	if rapl != nil && s.prevRAPL != nil && dt > 0 {
		var uj uint64
		for _, z := range s.zones {
			uj += CounterDelta(s.prevRAPL[z.dir], rapl[z.dir], z.maxRange)
		}
		w := round2(float64(uj) / 1e6 / dt)
		smp.PowerWatts = &w
	}
	smp.RDMA = rdmaRates(s.prevRDMA, ib, dt)
	s.prevT, s.prevCPU, s.prevNet, s.prevRAPL, s.prevRDMA = t, cpu, net, rapl, ib
	return smp, true, nil
}

func (s *Sampler) host() string {
	if s.Host != "" {
		return s.Host
	}
	h, _ := os.Hostname()
	s.Host = h
	return h
}

func (s *Sampler) wantIface(name string) bool {
	if len(s.Ifaces) == 0 {
		return name != "lo"
	}
	for _, i := range s.Ifaces {
		if i == name {
			return true
		}
	}
	return false
}

// CheckIfaces returns an error naming any requested interface this host
// does not have, with the ones it has.
func (s *Sampler) CheckIfaces() error {
	b, err := os.ReadFile(s.path("/proc/net/dev"))
	if err != nil {
		return fmt.Errorf("sample: %w", err)
	}
	net, err := ParseNetDev(bytes.NewReader(b))
	if err != nil {
		return err
	}
	var have []string
	for n := range net {
		have = append(have, n)
	}
	sort.Strings(have)
	for _, i := range s.Ifaces {
		if _, ok := net[i]; !ok {
			return fmt.Errorf("sample: no interface %q on this host (have: %s)", i, strings.Join(have, ", "))
		}
	}
	return nil
}

// Run writes a JSON line to w every interval until ctx ends or count
// samples (if count > 0) have been written.
func (s *Sampler) Run(ctx context.Context, w io.Writer, interval time.Duration, count int) error {
	if interval <= 0 {
		return fmt.Errorf("sample: interval %s must be positive", interval)
	}
	if _, _, err := s.Next(); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; count <= 0 || n < count; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		smp, ok, err := s.Next()
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := enc.Encode(smp); err != nil {
			return fmt.Errorf("sample: write: %w", err)
		}
	}
	return nil
}
