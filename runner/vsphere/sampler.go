package vsphere

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/vmware/govmomi/performance"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/dpulab/dpulab/internal/termtext"
)

// Source labels every Point: these are the hypervisor's figures, not the
// guest's.
const Source = "host (ESXi)"

// Point is one second of one ESXi host (or of one VM on it, when VM is
// set), from vSphere's real-time performance counters. vSphere averages
// over Interval (20 s for real-time statistics): each of its samples is
// delivered as one Point per second it covers, all holding the same
// values, so that they line up with the guests' per-second series. Unknown
// values are nil (or absent from the maps), never zero.
type Point struct {
	// T is the start of the second this point stands for, on this
	// machine's clock (vCenter's timestamps shifted by the offset measured
	// at login).
	T time.Time `json:"t"`
	// Source is always "host (ESXi)".
	Source string `json:"source"`
	// Host is the ESXi host's name in vCenter.
	Host string `json:"host"`
	// VM, when set, makes this a VM's point: only VMNetKBps is filled.
	VM string `json:"vm,omitempty"`
	// Interval is the length of the vSphere sample the values come from,
	// SampleEnd its end (this machine's clock).
	Interval  time.Duration `json:"-"`
	SampleEnd time.Time     `json:"sample_end"`

	// CPUUsagePct is cpu.usage.average: the host's CPU use in percent of
	// its total capacity.
	CPUUsagePct *float64 `json:"cpu_usage_pct,omitempty"`
	// CPUUsedCores is cpu.used.summation (milliseconds of CPU time over
	// the interval, all physical CPUs) divided by the interval: the CPU
	// time used, in cores' worth.
	CPUUsedCores *float64 `json:"cpu_used_cores,omitempty"`
	// CPUReadyPct is cpu.ready.summation divided by the interval, in
	// percent of one CPU (VMware's formula: ready ms / (interval s ×
	// 1000) × 100): time worlds waited for a CPU.
	CPUReadyPct *float64 `json:"cpu_ready_pct,omitempty"`
	// NetKBps is net.usage.average per physical NIC (vmnic0, ...), in
	// kilobytes per second, receive + transmit.
	NetKBps map[string]float64 `json:"net_kbps,omitempty"`
	// VMNetKBps is a VM's net.usage.average over all its adapters.
	VMNetKBps *float64 `json:"vm_net_kbps,omitempty"`
	// PowerWatts is power.power.average, where the host reports power.
	PowerWatts *float64 `json:"power_watts,omitempty"`
}

// MarshalJSON adds the interval in seconds, named with its unit.
func (p Point) MarshalJSON() ([]byte, error) {
	type plain Point
	return json.Marshal(struct {
		plain
		IntervalSeconds float64 `json:"interval_seconds"`
	}{plain(p), p.Interval.Seconds()})
}

// counters read, by vSphere's dotted name. Host ones first.
const (
	cUsage    = "cpu.usage.average"
	cUsed     = "cpu.used.summation"
	cReady    = "cpu.ready.summation"
	cNet      = "net.usage.average"
	cPower    = "power.power.average"
	hostNote  = "power is reported only by hosts with a power meter their management controller (IPMI) exposes"
	netAll    = ""
	secondDur = time.Second
)

var hostCounters = []string{cUsage, cUsed, cReady, cNet, cPower}

// Sampler reads ESXi hosts' real-time performance counters while a bench
// runs. Its fields are set before Run and not changed after.
type Sampler struct {
	Client *Client
	// Hosts are the ESXi host names (the inventory's esxi:).
	Hosts []string
	// VMs are VM names whose network use is read too (the inventory's vm:,
	// or the host's name); each must run on one of Hosts or anywhere
	// vCenter knows.
	VMs []string
	// Since is the first second delivered (default: when Run starts).
	// vSphere publishes a sample after its interval ends, so the engine
	// sets it to the bench's start and keeps Run going for up to two
	// intervals after the bench ends to receive its last seconds.
	Since time.Time
	// Poll is how often vCenter is asked for new samples (default: a
	// quarter of the interval, at least one second).
	Poll time.Duration
	// Note receives, once each, what is missing or failing (a counter a
	// host does not report, a query that failed): for the person, not
	// per tick. Text from vCenter in it is filtered for the terminal.
	Note func(string)
}

type entity struct {
	ref      types.ManagedObjectReference
	host, vm string // host: ESXi name; vm set for a VM
	interval int32
	ids      []types.PerfMetricId
	lastEnd  time.Time // vCenter's clock: the last sample end read
	emitted  time.Time // our clock: the last second delivered
}

// Run delivers points to emit until ctx ends, then returns nil. It fails
// at once when a host or VM cannot be found or has no real-time
// statistics, and when vCenter stops answering (three polls in a row).
func (s *Sampler) Run(ctx context.Context, emit func(Point)) error {
	c := s.Client
	if c == nil {
		return errors.New("vsphere sampler: no client")
	}
	noted := map[string]bool{}
	var noteMu sync.Mutex
	note := func(msg string) {
		noteMu.Lock()
		defer noteMu.Unlock()
		if noted[msg] || s.Note == nil {
			return
		}
		noted[msg] = true
		s.Note(termtext.Line(msg))
	}
	since := s.Since
	if since.IsZero() {
		since = time.Now()
	}
	since = since.Truncate(time.Second)

	pm := performance.NewManager(c.vim)
	byName, err := pm.CounterInfoByName(ctx)
	if err != nil {
		return stopped(ctx, fmt.Errorf("vCenter %s: read the performance counter list: %w", c.addr, err))
	}
	byKey := map[int32]*types.PerfCounterInfo{}
	for _, ci := range byName {
		byKey[ci.Key] = ci
	}
	var ents []*entity
	for _, h := range s.Hosts {
		e, err := s.setup(ctx, pm, byName, "HostSystem", h, "", note)
		if err != nil {
			return stopped(ctx, err)
		}
		ents = append(ents, e)
	}
	for _, v := range s.VMs {
		e, err := s.setup(ctx, pm, byName, "VirtualMachine", "", v, note)
		if err != nil {
			return stopped(ctx, err)
		}
		ents = append(ents, e)
	}
	poll := s.Poll
	if poll <= 0 {
		minIv := int32(20)
		for _, e := range ents {
			if e.interval < minIv {
				minIv = e.interval
			}
		}
		poll = max(time.Duration(minIv)*time.Second/4, time.Second)
	}
	failures := 0
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		err := s.poll(ctx, pm, byKey, ents, since, emit, note)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			failures++
			note(err.Error())
			if failures >= 3 {
				return err
			}
		default:
			failures = 0
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// stopped is nil when ctx ended (a cancel is how Run is stopped, even
// while it is still setting up), else err.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// setup finds one host or VM, its real-time interval and which of the
// counters it has; what it lacks is noted once.
func (s *Sampler) setup(ctx context.Context, pm *performance.Manager, byName map[string]*types.PerfCounterInfo, kind, host, vm string, note func(string)) (*entity, error) {
	c := s.Client
	name := host
	if kind == "VirtualMachine" {
		name = vm
	}
	ref, err := c.find(ctx, kind, name)
	if err != nil {
		return nil, err
	}
	e := &entity{ref: ref, host: host, vm: vm}
	if kind == "VirtualMachine" {
		var o mo.VirtualMachine
		if err := property.DefaultCollector(c.vim).RetrieveOne(ctx, ref, []string{"runtime.host"}, &o); err == nil && o.Runtime.Host != nil {
			if n, err := c.name(ctx, *o.Runtime.Host); err == nil {
				e.host = n
			}
		}
	}
	what := fmt.Sprintf("%s %s", kindWord(kind), name)
	sum, err := pm.ProviderSummary(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("vCenter %s: %s: performance provider: %w", c.addr, what, err)
	}
	if !sum.CurrentSupported || sum.RefreshRate <= 0 {
		return nil, fmt.Errorf("vCenter %s: %s has no real-time statistics (is it connected and powered on?)", c.addr, what)
	}
	e.interval = sum.RefreshRate
	avail, err := pm.AvailableMetric(ctx, ref, e.interval)
	if err != nil {
		return nil, fmt.Errorf("vCenter %s: %s: available counters: %w", c.addr, what, err)
	}
	has := map[int32][]string{}
	for _, m := range avail {
		has[m.CounterId] = append(has[m.CounterId], m.Instance)
	}
	want := hostCounters
	if kind == "VirtualMachine" {
		want = []string{cNet}
	}
	for _, name := range want {
		ci, ok := byName[name]
		if !ok || len(has[ci.Key]) == 0 {
			why := ""
			if name == cPower {
				why = ": " + hostNote
			}
			note(fmt.Sprintf("%s does not report %s%s; it stays empty (%s)", what, name, why, Source))
			continue
		}
		switch {
		case name == cNet && kind == "HostSystem":
			n := 0
			for _, inst := range has[ci.Key] {
				if inst != netAll {
					e.ids = append(e.ids, types.PerfMetricId{CounterId: ci.Key, Instance: inst})
					n++
				}
			}
			if n == 0 {
				note(fmt.Sprintf("%s reports %s for no vmnic; per-NIC network use stays empty (%s)", what, name, Source))
			}
		case hasInstance(has[ci.Key], ""):
			e.ids = append(e.ids, types.PerfMetricId{CounterId: ci.Key, Instance: ""})
		case name == cNet:
			// No total for this VM: its adapters' values are summed.
			for _, inst := range has[ci.Key] {
				e.ids = append(e.ids, types.PerfMetricId{CounterId: ci.Key, Instance: inst})
			}
		default:
			note(fmt.Sprintf("%s reports %s only per instance, not as a total; it stays empty (%s)", what, name, Source))
		}
	}
	if len(e.ids) == 0 {
		return nil, fmt.Errorf("vCenter %s: %s reports none of %v at its real-time interval: check the statistics level in vCenter (Configure > Settings > General > Statistics)", c.addr, what, want)
	}
	return e, nil
}

func hasInstance(insts []string, want string) bool {
	for _, i := range insts {
		if i == want {
			return true
		}
	}
	return false
}

// poll asks for every entity's samples since the last one read and
// delivers the new seconds.
func (s *Sampler) poll(ctx context.Context, pm *performance.Manager, byKey map[int32]*types.PerfCounterInfo, ents []*entity, since time.Time, emit func(Point), note func(string)) error {
	c := s.Client
	specs := make([]types.PerfQuerySpec, len(ents))
	for i, e := range ents {
		start := e.lastEnd
		if start.IsZero() {
			// One interval before Since, on vCenter's clock: the
			// sample that covers Since ends after it.
			start = since.Add(c.offset - time.Duration(e.interval)*time.Second)
		}
		specs[i] = types.PerfQuerySpec{Entity: e.ref, MetricId: e.ids, IntervalId: e.interval, StartTime: &start, Format: string(types.PerfFormatNormal)}
	}
	res, err := pm.Query(ctx, specs)
	if err != nil {
		return fmt.Errorf("vCenter %s: performance query: %w", c.addr, err)
	}
	byRef := map[types.ManagedObjectReference]*entity{}
	for _, e := range ents {
		byRef[e.ref] = e
	}
	for _, r := range res {
		m, ok := r.(*types.PerfEntityMetric)
		if !ok {
			continue
		}
		e := byRef[m.Entity]
		if e == nil {
			continue
		}
		for _, p := range s.points(e, m, byKey, since, note) {
			emit(p)
		}
	}
	return nil
}

// points turns one entity's query result into per-second points, oldest
// first, skipping seconds already delivered (vCenter returns each sample
// once, but a sample may overlap the previous one where intervals are not
// aligned, as in govmomi's simulator).
func (s *Sampler) points(e *entity, m *types.PerfEntityMetric, byKey map[int32]*types.PerfCounterInfo, since time.Time, note func(string)) []Point {
	type sample struct {
		end time.Time
		iv  int32
		idx int
	}
	var samples []sample
	for i, si := range m.SampleInfo {
		samples = append(samples, sample{si.Timestamp, si.Interval, i})
	}
	// vCenter returns them oldest first; the simulator newest first.
	sort.Slice(samples, func(a, b int) bool { return samples[a].end.Before(samples[b].end) })
	var out []Point
	for _, sm := range samples {
		if !sm.end.After(e.lastEnd) {
			continue
		}
		e.lastEnd = sm.end
		iv := time.Duration(sm.iv) * time.Second
		if iv <= 0 {
			iv = time.Duration(e.interval) * time.Second
		}
		end := sm.end.Add(-s.Client.offset).Truncate(time.Second)
		p := Point{Source: Source, Host: e.host, VM: e.vm, Interval: iv, SampleEnd: end}
		for _, v := range m.Value {
			ser, ok := v.(*types.PerfMetricIntSeries)
			if !ok {
				continue
			}
			ci := byKey[ser.Id.CounterId]
			if ci == nil {
				continue
			}
			name := ci.Name()
			if len(ser.Value) != len(m.SampleInfo) {
				// Not one value per sample: which is which cannot be told.
				note(fmt.Sprintf("%s %s lists %s but sent no values for it; it stays empty (%s)", kindOf(e), nameOf(e), name, Source))
				continue
			}
			raw := ser.Value[sm.idx]
			if raw < 0 {
				// -1: vSphere had no value for this sample.
				note(fmt.Sprintf("%s %s: no value for %s in some samples; those seconds stay empty (%s)", kindOf(e), nameOf(e), name, Source))
				continue
			}
			val := float64(raw)
			if ci.UnitInfo != nil && ci.UnitInfo.GetElementDescription().Key == "percent" {
				// vSphere's percentages are in hundredths.
				val /= 100
			}
			switch name {
			case cUsage:
				p.CPUUsagePct = ptr(val)
			case cUsed:
				p.CPUUsedCores = ptr(val / (iv.Seconds() * 1000))
			case cReady:
				p.CPUReadyPct = ptr(val / (iv.Seconds() * 1000) * 100)
			case cPower:
				p.PowerWatts = ptr(val)
			case cNet:
				if e.vm != "" {
					if p.VMNetKBps == nil {
						p.VMNetKBps = ptr(0)
					}
					*p.VMNetKBps += val
				} else {
					if p.NetKBps == nil {
						p.NetKBps = map[string]float64{}
					}
					p.NetKBps[termtext.Line(ser.Id.Instance)] = val
				}
			}
		}
		first := end.Add(-iv)
		if first.Before(since) {
			first = since
		}
		if !e.emitted.IsZero() && !first.After(e.emitted) {
			first = e.emitted.Add(secondDur)
		}
		for t := first; t.Before(end); t = t.Add(secondDur) {
			q := p
			q.T = t
			if p.NetKBps != nil {
				q.NetKBps = make(map[string]float64, len(p.NetKBps))
				for k, v := range p.NetKBps {
					q.NetKBps[k] = v
				}
			}
			out = append(out, q)
			e.emitted = t
		}
	}
	return out
}

func kindOf(e *entity) string {
	if e.vm != "" {
		return "VM"
	}
	return "ESXi host"
}

func nameOf(e *entity) string {
	if e.vm != "" {
		return e.vm
	}
	return e.host
}

func ptr(v float64) *float64 { return &v }
