package steps

import (
	"encoding/json"
	"sync"
	"time"
)

// hostSample is what the engine takes from one `dpulab sample` line.
type hostSample struct {
	CPUBusyPct    *float64
	CPUNetworkPct *float64
	NetGbps       *float64
	PowerWatts    *float64
	Cores         int
	At            time.Time
}

// parseHostSample reads one line of `dpulab sample` output.
func parseHostSample(line []byte) (hostSample, bool) {
	var raw struct {
		BusyPct    *float64 `json:"cpu_busy_pct"`
		NetworkPct *float64 `json:"cpu_network_pct"`
		NetGbps    *float64 `json:"net_gbps"`
		PowerWatts *float64 `json:"power_watts"`
		Cores      int      `json:"cpus"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return hostSample{}, false
	}
	return hostSample{CPUBusyPct: raw.BusyPct, CPUNetworkPct: raw.NetworkPct, NetGbps: raw.NetGbps, PowerWatts: raw.PowerWatts, Cores: raw.Cores, At: time.Now()}, true
}

// sampleBoard keeps the latest sample of every server host, so each bench
// second is merged with what the servers did in (about) the same second.
type sampleBoard struct {
	mu     sync.Mutex
	latest map[string]hostSample
}

func newSampleBoard() *sampleBoard { return &sampleBoard{latest: map[string]hostSample{}} }

func (b *sampleBoard) put(host string, s hostSample) {
	b.mu.Lock()
	b.latest[host] = s
	b.mu.Unlock()
}

// staleAfter drops a host's sample from a merge when it is this old: a
// sampler that stopped must not repeat its last numbers forever.
const staleAfter = 3 * time.Second

// merge fills p's server columns: CPU as the mean over hosts, network
// traffic and power summed over hosts. Unknown stays nil.
func (b *sampleBoard) merge(p Point) Point {
	b.mu.Lock()
	defer b.mu.Unlock()
	var cpu, netcpu []float64
	var gbps, watts float64
	var haveGbps, haveWatts bool
	for _, s := range b.latest {
		if time.Since(s.At) > staleAfter {
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
	}
	if len(cpu) > 0 {
		m := meanStd(cpu).Mean
		p.ServerCPU = &m
	}
	if len(netcpu) > 0 {
		m := meanStd(netcpu).Mean
		p.NetworkCPU = &m
	}
	if haveGbps {
		p.NetGbps = &gbps
	}
	if haveWatts {
		p.PowerWatts = &watts
	}
	return p
}

// cores is the total CPU count of the sampled hosts (for busy cores).
func (b *sampleBoard) cores() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, s := range b.latest {
		n += s.Cores
	}
	// ServerCPU is a mean over hosts, so busy cores ≈ mean% × all cores.
	return float64(n)
}
