package load

import (
	"maps"
	"sync"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/wire/samplewire"
)

// hostSample is what a bench's samplers take from one `dpulab sample` line.
type hostSample struct {
	CPUBusyPct    *float64
	CPUNetworkPct *float64
	NetGbps       *float64
	PowerWatts    *float64
	// Metrics are the figures carried by name (RDMA ports: sampler_rdma.go).
	Metrics map[string]float64
	At      time.Time
}

// ParseHostSample reads one line of `dpulab sample` output. Busy CPU is
// everything but idle and iowait; the network share is softirq + irq (the
// sampler's "network"); traffic is rx + tx over the sampled interfaces.
func ParseHostSample(line []byte) (hostSample, bool) {
	s, err := samplewire.DecodeLine(line, 0)
	if err != nil {
		return hostSample{}, false
	}
	busy := 100 - s.CPU.Idle - s.CPU.IOWait
	if busy < 0 {
		busy = 0
	}
	netcpu := s.CPU.Network
	hs := hostSample{CPUBusyPct: &busy, CPUNetworkPct: &netcpu, PowerWatts: s.PowerWatts, Metrics: rdmaMetrics(s), At: time.Now()}
	if len(s.Net) > 0 {
		var bps float64
		for _, r := range s.Net {
			bps += r.RxBytesPerSec + r.TxBytesPerSec
		}
		g := bps * 8 / 1e9
		hs.NetGbps = &g
	}
	return hs, true
}

// SampleBoard keeps the latest sample of every server host, so each bench
// second is merged with what the servers did in (about) the same second.
type SampleBoard struct {
	mu     sync.Mutex
	latest map[string]hostSample
	// ncpu is each host's CPU count, for busy cores.
	ncpu map[string]int
	// ready is closed when every expected host has sent a sample.
	ready   chan struct{}
	waitFor map[string]bool
}

func NewSampleBoard() *SampleBoard {
	return &SampleBoard{latest: map[string]hostSample{}, ncpu: map[string]int{}, ready: make(chan struct{}), waitFor: map[string]bool{}}
}

// expect adds a host whose first sample ready waits for.
func (b *SampleBoard) Expect(host string) {
	b.mu.Lock()
	b.waitFor[host] = true
	b.mu.Unlock()
}

// WaitReady waits until every expected host has sent a sample or its
// sampler ended, or d passes, or ctx ends: the bench should not start before its samplers
// are measuring, or a short run gets no server numbers at all.
func (b *SampleBoard) WaitReady(done <-chan struct{}, d time.Duration) {
	b.mu.Lock()
	if len(b.waitFor) == 0 {
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	select {
	case <-b.ready:
	case <-done:
	case <-time.After(d):
	}
}

// gone says host's sampler ended (it failed to start, or its host went
// away): nothing more is to be waited for from it.
func (b *SampleBoard) Gone(host string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waitFor[host] {
		delete(b.waitFor, host)
		if len(b.waitFor) == 0 {
			close(b.ready)
		}
	}
}

func (b *SampleBoard) SetCPUs(host string, n int) {
	b.mu.Lock()
	b.ncpu[host] = n
	b.mu.Unlock()
}

func (b *SampleBoard) Put(host string, s hostSample) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.latest[host] = s
	if b.waitFor[host] {
		delete(b.waitFor, host)
		if len(b.waitFor) == 0 {
			close(b.ready)
		}
	}
}

// staleAfter drops a host's sample from a merge when it is this old: a
// sampler that stopped must not repeat its last numbers forever.
const staleAfter = 3 * time.Second

// merge fills p's server columns from each host's latest sample taken
// after since (the start of the measured run, so nothing of the previous
// variant or the idle time before leaks in): CPU as the mean over hosts,
// network traffic and power summed over hosts. Unknown stays nil.
func (b *SampleBoard) Merge(p results.Point, since time.Time) results.Point {
	b.mu.Lock()
	defer b.mu.Unlock()
	var cpu, netcpu []float64
	var gbps, watts float64
	var haveGbps, haveWatts bool
	var byName map[string]float64
	for _, s := range b.latest {
		if time.Since(s.At) > staleAfter || s.At.Before(since) {
			continue
		}
		if s.CPUBusyPct != nil {
			cpu = append(cpu, *s.CPUBusyPct)
		}
		if s.CPUNetworkPct != nil {
			netcpu = append(netcpu, *s.CPUNetworkPct)
		}
		if s.NetGbps != nil {
			gbps += *s.NetGbps
			haveGbps = true
		}
		if s.PowerWatts != nil {
			watts += *s.PowerWatts
			haveWatts = true
		}
		byName = addMetrics(byName, s.Metrics)
	}
	if len(cpu) > 0 {
		m := results.MeanStdOf(cpu).Mean
		p.ServerCPU = &m
	}
	if len(netcpu) > 0 {
		m := results.MeanStdOf(netcpu).Mean
		p.NetworkCPU = &m
	}
	if haveGbps {
		p.NetGbps = &gbps
	}
	if haveWatts {
		p.PowerWatts = &watts
	}
	if byName != nil {
		p.Metrics = addMetrics(maps.Clone(p.Metrics), byName)
	}
	return p
}

// cores is the total CPU count of the sampled hosts (for busy cores).
func (b *SampleBoard) Cores() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for h := range b.latest {
		if b.ncpu[h] == 0 {
			return 0 // unknown for one host: unknown for all
		}
		n += b.ncpu[h]
	}
	// ServerCPU is a mean over hosts, so busy cores ≈ mean% × all cores.
	return float64(n)
}
