package steps

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/results"
)

// The engine's side of vSphere (runner/vsphere): one logged-in vCenter
// session per run, opened when a bench first needs it, the password asked
// through the engine's prompt path (a PromptSecret, never argv, a file or
// a log), the certificate's thumbprint pinned as an SSH host key is; and a
// sampler of the ESXi hosts of a bench job's server hosts, whose
// per-second points are merged into the job's series as the host (ESXi)
// metrics of steps/results.

// vsphereTail bounds the wait, after a bench, for vSphere to publish the
// samples covering its last seconds: two real-time intervals (20 s each),
// as runner/vsphere's doc says.
const vsphereTail = 40 * time.Second

// vcenterConn is the run's vCenter session (zero value: not dialled).
type vcenterConn struct {
	mu     sync.Mutex
	client *vsphere.Client
	// tail and poll, when set, replace vsphereTail and the sampler's
	// default poll (tests against the simulator).
	tail, poll time.Duration
}

// vcenter returns the run's vCenter session, dialling it on first use; nil
// without an error when the inventory has no vcenter section.
func (e *Engine) vcenter(ctx context.Context, step string) (*vsphere.Client, error) {
	inv := e.opts.Inventory
	if inv == nil || inv.VCenter == nil {
		return nil, nil
	}
	e.vc.mu.Lock()
	defer e.vc.mu.Unlock()
	if e.vc.client != nil {
		return e.vc.client, nil
	}
	cfg := vsphere.FromInventory(inv.VCenter, func(ctx context.Context, prompt string) (string, error) {
		noPw := vsphere.NoPasswordError(inv.VCenter.URL, inv.VCenter.User, inv.VCenter.PasswordEnv)
		a, err := e.ask(ctx, Prompt{Step: step, Type: PromptSecret, Host: inv.VCenter.URL, Message: prompt, Fix: noPw.Fix})
		if err != nil {
			return "", fmt.Errorf("no answer to %q: %w", prompt, err)
		}
		if a.NoTerminal {
			return "", noPw
		}
		if a.Choice == "cancel" {
			return "", errors.New("vCenter password: cancelled")
		}
		return a.Secret, nil
	})
	cfg.AcceptNew = e.opts.AcceptNewHostKeys
	if e.opts.StateDir != "" {
		cfg.KnownThumbprints = filepath.Join(e.opts.StateDir, vsphere.KnownThumbprintsName)
	}
	c, err := vsphere.Dial(ctx, cfg)
	var te *vsphere.ThumbprintError
	if errors.As(err, &te) && te.Unknown() && !cfg.AcceptNew {
		// First use: show the thumbprint and ask, as for an SSH host key.
		a, aerr := e.ask(ctx, Prompt{Step: step, Type: PromptHostKey, Host: te.Address,
			Message:     fmt.Sprintf("vCenter %s is not known yet. Compare its certificate's thumbprint with the one vCenter shows (vSphere Client: Administration > Certificates).", te.Address),
			KeyType:     "TLS certificate SHA-256",
			Fingerprint: te.Got,
			Choices:     []string{"once", "save", "refuse"},
		})
		switch {
		case aerr != nil:
			return nil, fmt.Errorf("%w (no answer: %v)", err, aerr)
		case a.Choice == "save":
			cfg.Approved = te.Got
		case a.Choice == "once":
			cfg.Thumbprint = te.Got
		default:
			return nil, err
		}
		c, err = vsphere.Dial(ctx, cfg)
	}
	if err != nil {
		return nil, err
	}
	e.opts.Emit(Output{Step: step, Line: runner.Line{Host: c.Address(), Text: "vSphere figures and checks from: " + c.Origin().Label(), Time: time.Now()}})
	if c.Accepted() {
		e.opts.Emit(Output{Step: step, Line: runner.Line{Host: c.Address(), Text: fmt.Sprintf("vCenter %s: certificate thumbprint %s saved as trusted", c.Address(), c.Thumbprint()), Time: time.Now()}})
	}
	e.vc.client = c
	return c, nil
}

// keepHostMetricsSource records in the results where a bench step's host
// (ESXi) figures come from: vCenter's url and version (SIMULATED for
// govmomi's simulator), the ESXi hosts and VMs read; a step's later jobs
// (sweep points, variants) add their hosts to its entry.
func (e *Engine) keepHostMetricsSource(step string, o vsphere.Origin, hosts, vms []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.results == nil {
		return
	}
	src := &results.HostMetricsSource{Step: step, VCenter: o.URL}
	found := false
	for i := range e.results.HostMetricsFrom {
		if s := &e.results.HostMetricsFrom[i]; s.Step == step && s.VCenter == o.URL {
			src, found = s, true
		}
	}
	src.Product, src.Version, src.Build, src.Simulated = o.Product, o.Version, o.Build, o.Simulated
	if o.Simulated {
		src.Simulator = vsphere.SimulatorProduct
	}
	for _, h := range hosts {
		if !slices.Contains(src.ESXiHosts, h) {
			src.ESXiHosts = append(src.ESXiHosts, h)
		}
	}
	for _, v := range vms {
		if !slices.Contains(src.VMs, v) {
			src.VMs = append(src.VMs, v)
		}
	}
	if !found {
		e.results.HostMetricsFrom = append(e.results.HostMetricsFrom, *src)
	}
}

// ownHint is the fix an error carries itself (a *vsphere.Error's, a
// refused certificate's): it replaces the step's hint, written for what
// the step checks, not for failing to ask.
func ownHint(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// closeVCenter logs the run's vCenter session out (every exit path: the
// engine's Cleanup calls it).
func (e *Engine) closeVCenter(ctx context.Context) {
	e.vc.mu.Lock()
	c := e.vc.client
	e.vc.client = nil
	e.vc.mu.Unlock()
	if c != nil {
		if err := c.Close(ctx); err != nil {
			e.opts.Emit(Output{Line: runner.Line{Host: c.Address(), Stream: runner.Stderr, Text: err.Error(), Time: time.Now()}})
		}
	}
}

// esxiHosts lists the distinct ESXi hosts (inventory esxi:) of hosts.
func (e *Engine) esxiHosts(hosts []hostRef) []string {
	return e.vsphereNames(hosts, func(h runner.Host) string { return h.ESXi })
}

// serverVMs lists the distinct VMs (inventory vm:) of those of hosts that
// run on an ESXi host the sampler reads: their network use is read too.
func (e *Engine) serverVMs(hosts []hostRef) []string {
	return e.vsphereNames(hosts, func(h runner.Host) string {
		if h.ESXi == "" {
			return ""
		}
		return h.VM
	})
}

// vsphereNames lists the distinct non-empty names that name gives the
// inventory entries of hosts, in the order of hosts; nil without a vCenter.
func (e *Engine) vsphereNames(hosts []hostRef, name func(runner.Host) string) []string {
	inv := e.opts.Inventory
	if inv == nil || inv.VCenter == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, h := range hosts {
		ih, ok := inv.Host(h.Name)
		if !ok {
			continue
		}
		if n := name(ih); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// vsphereJob samples the ESXi hosts of one bench job. Finished runs are
// held until vSphere has published the seconds they cover (hold), so that
// each run reaches the results once, with its host (ESXi) figures.
type vsphereJob struct {
	e     *Engine
	step  string
	hosts []string
	// vms are the server VMs whose network use is read (their seconds
	// are not waited for: a second without all of them has no VM figure).
	vms  []string
	tail time.Duration

	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// pts holds each host's points by Unix second, vmPts each VM's.
	pts, vmPts map[string]map[int64]vsphere.Point
	// upTo is the second after each host's newest point.
	upTo    map[string]time.Time
	ended   bool
	pending []heldRun
	// changed is signalled (non-blocking) when points arrive or the
	// sampler ends.
	changed chan struct{}
}

type heldRun struct {
	r          results.RunResult
	start, end time.Time
}

// startVSphere starts the vSphere sampler of job's server hosts: nil when
// the inventory has no vcenter section or none of them has an esxi: name.
// An error (a refused thumbprint, a failed login) stops the step.
func (e *Engine) startVSphere(ctx context.Context, job benchJob) (*vsphereJob, error) {
	hosts := e.esxiHosts(job.Servers)
	if len(hosts) == 0 {
		return nil, nil
	}
	c, err := e.vcenter(ctx, job.Step)
	if err != nil {
		return nil, &StepError{Host: e.opts.Inventory.VCenter.URL, Err: fmt.Errorf("host (ESXi) metrics: %w", err)}
	}
	e.keepHostMetricsSource(job.Step, c.Origin(), hosts, e.serverVMs(job.Servers))
	vj := &vsphereJob{e: e, step: job.Step, hosts: hosts, vms: e.serverVMs(job.Servers), tail: vsphereTail, done: make(chan struct{}),
		pts: map[string]map[int64]vsphere.Point{}, vmPts: map[string]map[int64]vsphere.Point{}, upTo: map[string]time.Time{}, changed: make(chan struct{}, 1)}
	if e.vc.tail > 0 {
		vj.tail = e.vc.tail
	}
	s := &vsphere.Sampler{Client: c, Hosts: hosts, VMs: vj.vms, Since: time.Now(), Poll: e.vc.poll, Note: vj.note}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	vj.cancel = cancel
	go func() {
		defer close(vj.done)
		err := s.Run(sctx, vj.put)
		if err != nil {
			vj.note("host (ESXi) metrics stopped: " + err.Error())
		}
		vj.mu.Lock()
		vj.ended = true
		vj.mu.Unlock()
		vj.signal()
	}()
	return vj, nil
}

func (vj *vsphereJob) note(msg string) {
	vj.e.opts.Emit(Output{Step: vj.step, Line: runner.Line{Host: vsphere.Source, Stream: runner.Stderr, Text: msg, Time: time.Now()}})
}

func (vj *vsphereJob) signal() {
	select {
	case vj.changed <- struct{}{}:
	default:
	}
}

// put takes one point of the sampler: a host's, or a server VM's.
func (vj *vsphereJob) put(p vsphere.Point) {
	vj.mu.Lock()
	if p.VM != "" {
		m := vj.vmPts[p.VM]
		if m == nil {
			m = map[int64]vsphere.Point{}
			vj.vmPts[p.VM] = m
		}
		m[p.T.Unix()] = p
		vj.mu.Unlock()
		return
	}
	m := vj.pts[p.Host]
	if m == nil {
		m = map[int64]vsphere.Point{}
		vj.pts[p.Host] = m
	}
	m[p.T.Unix()] = p
	if next := p.T.Add(time.Second); next.After(vj.upTo[p.Host]) {
		vj.upTo[p.Host] = next
	}
	vj.mu.Unlock()
	vj.signal()
}

// coveredLocked reports whether every host's points reach t (or the
// sampler ended: nothing more will come).
func (vj *vsphereJob) coveredLocked(t time.Time) bool {
	if vj.ended {
		return true
	}
	for _, h := range vj.hosts {
		if vj.upTo[h].Before(t) {
			return false
		}
	}
	return true
}

// hold takes a finished run that started (its measured part) at start and
// returns the held runs, in order, whose seconds vSphere has covered, each
// with its host (ESXi) metrics merged and its summary redone.
func (vj *vsphereJob) hold(r results.RunResult, start time.Time, cores float64) []results.RunResult {
	end := start
	if n := len(r.Series); n > 0 {
		end = start.Add(time.Duration(r.Series[n-1].T * float64(time.Second)))
	}
	vj.mu.Lock()
	defer vj.mu.Unlock()
	vj.pending = append(vj.pending, heldRun{r: r, start: start, end: end})
	return vj.releaseLocked(false, cores)
}

func (vj *vsphereJob) releaseLocked(all bool, cores float64) []results.RunResult {
	var out []results.RunResult
	for len(vj.pending) > 0 && (all || vj.coveredLocked(vj.pending[0].end)) {
		h := vj.pending[0]
		vj.pending = vj.pending[1:]
		out = append(out, vj.mergeLocked(h, cores))
	}
	return out
}

// drain waits until vSphere has covered the held runs (at most the tail,
// or until ctx ends), stops the sampler and returns them merged.
func (vj *vsphereJob) drain(ctx context.Context, cores float64) []results.RunResult {
	deadline := time.NewTimer(vj.tail)
	defer deadline.Stop()
	for {
		vj.mu.Lock()
		n := len(vj.pending)
		ok := n == 0 || vj.coveredLocked(vj.pending[n-1].end)
		vj.mu.Unlock()
		if ok {
			break
		}
		select {
		case <-vj.changed:
			continue
		case <-deadline.C:
			vj.note(fmt.Sprintf("host (ESXi) metrics: vCenter had not published the bench's last seconds %v after it ended; they are left unknown", vj.tail))
		case <-ctx.Done():
		}
		break
	}
	vj.stop()
	vj.mu.Lock()
	defer vj.mu.Unlock()
	return vj.releaseLocked(true, cores)
}

// stop ends the sampler and waits for it (idempotent).
func (vj *vsphereJob) stop() {
	if vj == nil {
		return
	}
	vj.cancel()
	<-vj.done
}

// mergeLocked fills each second of the run with the ESXi hosts' figures of
// that second, when every host has one: CPU use as the mean over hosts,
// cores used, power and network traffic summed over hosts, the per-million-
// TPS figures from that second's TPS.
func (vj *vsphereJob) mergeLocked(h heldRun, cores float64) results.RunResult {
	r := h.r
	series := make([]results.Point, len(r.Series))
	for i, p := range r.Series {
		// A bench second T covers (start+T-1s, start+T]: take vSphere's
		// point of the second it mostly lies in.
		at := h.start.Add(time.Duration(p.T*float64(time.Second)) - 500*time.Millisecond).Truncate(time.Second).Unix()
		if m := vj.metricsAt(at, p.OpsPerSec); len(m) > 0 {
			merged := make(map[string]float64, len(p.Metrics)+len(m))
			for k, v := range p.Metrics {
				merged[k] = v
			}
			for k, v := range m {
				merged[k] = v
			}
			p.Metrics = merged
		}
		series[i] = p
	}
	r.Series = series
	r.SummarizeSeries(cores)
	return r
}

// metricsAt is the host (ESXi) metrics of one second, nil when a host has
// no point for it.
func (vj *vsphereJob) metricsAt(sec int64, ops float64) map[string]float64 {
	var cpu, used, ready, watts, kbps float64
	nCPU, nUsed, nReady, nWatts, nNet := 0, 0, 0, 0, 0
	for _, h := range vj.hosts {
		p, ok := vj.pts[h][sec]
		if !ok {
			return nil
		}
		if p.CPUUsagePct != nil {
			cpu += *p.CPUUsagePct
			nCPU++
		}
		if p.CPUReadyPct != nil {
			ready += *p.CPUReadyPct
			nReady++
		}
		if p.CPUUsedCores != nil {
			used += *p.CPUUsedCores
			nUsed++
		}
		if p.PowerWatts != nil {
			watts += *p.PowerWatts
			nWatts++
		}
		if len(p.NetKBps) > 0 {
			nNet++
		}
		nics := make([]string, 0, len(p.NetKBps))
		for n := range p.NetKBps {
			nics = append(nics, n)
		}
		sort.Strings(nics) // a fixed order of addition
		for _, n := range nics {
			kbps += p.NetKBps[n]
		}
	}
	all := len(vj.hosts)
	out := map[string]float64{}
	if nCPU == all {
		out[results.MetricESXiCPU] = cpu / float64(all)
	}
	mops := ops / 1e6
	if nUsed == all && mops > 0 {
		out[results.MetricESXiCoresPerMOps] = used / mops
	}
	if nWatts == all && mops > 0 {
		out[results.MetricESXiWattsPerMOps] = watts / mops
	}
	if nReady == all {
		out[results.MetricESXiCPUReady] = ready / float64(all)
	}
	if nNet == all {
		// net.usage.average is in KBps (vSphere's kilobytes: 1,024 bytes).
		out[results.MetricESXiNetGbps] = kbps * 1024 * 8 / 1e9
	}
	if len(vj.vms) > 0 {
		var vmKBps float64
		n := 0
		for _, v := range vj.vms {
			if p, ok := vj.vmPts[v][sec]; ok && p.VMNetKBps != nil {
				vmKBps += *p.VMNetKBps
				n++
			}
		}
		if n == len(vj.vms) {
			out[results.MetricESXiVMNetGbps] = vmKBps * 1024 * 8 / 1e9
		}
	}
	return out
}
