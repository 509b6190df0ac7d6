package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"

	"github.com/redis/go-redis/v9"

	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
)

// stallGrace is how long after a timed run's end the generator waits for
// outstanding replies before it closes the connections and states the stall.
// stallQuiet is how long a run of --requests may go without a single reply
// (plus ten request intervals under --rate) before it is declared stalled:
// such a run has no end of its own to wait for. Variables for tests only.
var (
	stallGrace = 5 * time.Second
	stallQuiet = 10 * time.Second
)

// connectParallel bounds concurrent connects: 80 targets × 50 clients at
// once would overflow listen backlogs and look like an unreachable server.
const connectParallel = 64

// Run runs the benchmark cfg describes. Every event (Start, Prefill, one
// Sample per interval, a RunResult per run, the Summary) is passed to emit
// in order, from one goroutine at a time. It returns the summary (nil when
// nothing was measured) and an error when the bench could not start, a run
// ended early (server gone, stall, all requests failed) or ctx was cancelled;
// in the last cases the summary and results cover what was measured.
//
// cfg.Password is used as given; reading PasswordEnv is the caller's choice
// (Config.PasswordFromEnv).
//
// With cfg.Capacity set, Run runs a capacity search instead (see Capacity):
// no Summary, a nil one returned.
func Run(ctx context.Context, cfg Config, emit func(Event)) (*Summary, error) {
	sum, _, err := run(ctx, cfg, runOpts{}, emit)
	return sum, err
}

// run is Run and Capacity: a summary, or with cfg.Capacity the search's
// result.
func run(ctx context.Context, cfg Config, opts runOpts, emit func(Event)) (*Summary, *CapacityResult, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	if err := validate(&cfg); err != nil {
		return nil, nil, err
	}
	if err := checkStartAt(cfg.StartAtUnixMs, timeNow()); err != nil {
		return nil, nil, err
	}
	kind := cfg.Client
	if kind == ClientAuto {
		kind = ClientLean
	}
	eps := cfg.Endpoints
	ios := make([]*ioCounters, len(eps))
	for i := range ios {
		ios[i] = &ioCounters{}
	}
	set := &connSet{}
	defer set.closeAll()
	seed := uint64(cfg.Seed)
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	val := valueBytes(maxValueSize(&cfg))

	workers, clients, err := connectAll(ctx, &cfg, opts, kind, eps, ios, set, val, seed)
	for _, cl := range clients {
		defer cl.Close()
	}
	if err != nil {
		return nil, nil, err
	}
	// Ctrl-C: closing the sockets unblocks every worker at once.
	stop := context.AfterFunc(ctx, set.closeAll)
	defer stop()

	// Connected: with --start-at, nothing is sent before the instant.
	late, err := waitStart(ctx, cfg.StartAt())
	if err != nil {
		return nil, nil, err
	}
	st := &Start{Config: cfg, Client: string(kind), Targets: cfg.Labels(), Connections: len(workers), Simulation: simulation(&cfg)}
	if cfg.StartAtUnixMs != 0 {
		v := float64(late) / 1e6
		st.StartLateMs = &v
	}
	emit(st)
	col := newCollector(&cfg, workers, eps, ios)

	if cfg.Prefill {
		t := time.Now()
		if err := prefill(ctx, &cfg, workers); err != nil {
			if ctx.Err() != nil {
				return nil, nil, fmt.Errorf("interrupted during prefill: %w", ctx.Err())
			}
			return nil, nil, err
		}
		emit(&Prefill{Keys: keyCount(&cfg), Seconds: time.Since(t).Seconds()})
	}

	if cfg.Capacity != nil {
		res, err := searchCapacity(ctx, &cfg, workers, set, func(pc *Config) *collector { return newCollector(pc, workers, eps, ios) }, emit)
		return nil, res, err
	}

	var results []*RunResult
	var runErr error
	var fileErrs []error
	for r := 1; r <= cfg.Runs && ctx.Err() == nil; r++ {
		res, err := runOnce(ctx, &cfg, 0, r, workers, col, set, emit)
		results = append(results, res)
		emit(res)
		if cfg.HDRFilePrefix != "" {
			// Written run by run, so an interrupted bench keeps its files.
			fileErrs = append(fileErrs, writeHDRFiles(cfg.HDRFilePrefix, col.records[len(col.records)-1]))
		}
		if err != nil {
			runErr = err
			break
		}
	}
	if len(results) == 0 {
		return nil, nil, fmt.Errorf("interrupted before the first run: %w", ctx.Err())
	}
	sum := summarize(results, col)
	emit(sum)
	if cfg.JSONOutFile != "" {
		b, err := memtierJSON(&cfg, col.records)
		if err == nil {
			err = writeFileAtomic(cfg.JSONOutFile, b)
		}
		fileErrs = append(fileErrs, err)
	}
	if runErr == nil && ctx.Err() != nil {
		runErr = fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if err := errors.Join(fileErrs...); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("results written to the terminal, but: %w", err))
	}
	return sum, nil, runErr
}

// connectAll opens every connection (clients per target), authenticated and
// ready, before anything is timed. The first failure names its target.
func connectAll(ctx context.Context, cfg *Config, opts runOpts, kind ClientKind, eps []transport.Endpoint, ios []*ioCounters, set *connSet, val []byte, seed uint64) ([]*worker, []*redis.Client, error) {
	var clients []*redis.Client
	if kind == ClientGoRedis {
		for i, ep := range eps {
			clients = append(clients, newGoRedisClient(cfg, ep, ios[i], set))
		}
	}
	per := cfg.ConnsPerTarget()
	n := len(eps) * per
	workers := make([]*worker, n)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, connectParallel)
	)
	for i := 0; i < n; i++ {
		ti := i / per
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-cctx.Done():
				return
			}
			defer func() { <-sem }()
			if cctx.Err() != nil {
				return
			}
			tctx, tcancel := context.WithTimeout(cctx, cfg.ConnectTimeoutFor(eps[ti]))
			defer tcancel()
			var c client
			var err error
			if kind == ClientGoRedis {
				c, err = dialGoRedis(tctx, clients[ti], cfg, val)
			} else {
				c, err = dialLean(tctx, cfg, eps[ti], ios[ti], set, val)
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil && ctx.Err() == nil {
					switch {
					case errors.Is(err, rdma.ErrModeMismatch):
						// The server said what is wrong: --rdma-mode.
						firstErr = fmt.Errorf("connect to %s: %w (set --rdma-mode to match the server's rdma-transport-mode)", eps[ti].Label(), err)
					case errors.Is(err, transport.ErrHostLacks):
						// This host lacks rdma-core or a device, and says
						// what to do; the server was never tried.
						firstErr = fmt.Errorf("connect to %s: %w (on the load generator's host)", eps[ti].Label(), err)
					default:
						firstErr = fmt.Errorf("connect to %s: %w; is the server running there and reachable (address, port, firewall, password)?", eps[ti].Label(), err)
					}
				}
				mu.Unlock()
				cancel()
				return
			}
			workers[i] = newWorker(cfg, i, ti, i%per, per, c, seed)
			workers[i].firstReply = opts.firstReplyLatency
		}()
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = fmt.Errorf("interrupted while connecting: %w", ctx.Err())
	}
	if firstErr != nil {
		for _, w := range workers {
			if w != nil {
				w.c.close()
			}
		}
		return nil, clients, firstErr
	}
	return workers, clients, nil
}

// prefill writes every key once to every target, each connection its
// slice of the key range, 64 per pipeline.
func prefill(ctx context.Context, cfg *Config, workers []*worker) error {
	const depth = 64
	per := cfg.ConnsPerTarget()
	var wg sync.WaitGroup
	errs := make([]error, len(workers))
	for i, w := range workers {
		lo, hi := partition(keyCount(cfg), i%per, per)
		lo, hi = lo+cfg.KeyMinimum, hi+cfg.KeyMinimum
		wg.Add(1)
		go func() {
			defer wg.Done()
			ops := make([]op, depth)
			res := make([]reply, depth)
			for k := lo; k < hi && ctx.Err() == nil; {
				n := int(min(int64(depth), hi-k))
				for j := 0; j < n; j++ {
					ops[j] = op{cmd: cmdSet, key: k + int64(j), size: int32(w.sizes.next(k + int64(j)))}
				}
				got, err := w.c.do(ops[:n], res[:n])
				if err != nil {
					errs[i] = fmt.Errorf("prefill: connection lost: %w", err)
					return
				}
				for j := 0; j < got; j++ {
					if res[j].kind == rErr {
						errs[i] = fmt.Errorf("prefill: server replied %q to SET", res[j].errMsg)
						return
					}
				}
				k += int64(n)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runOnce runs one run and returns its result (partial when it ended early).
func runOnce(ctx context.Context, cfg *Config, cutoff time.Duration, run int, workers []*worker, col *collector, set *connSet, emit func(Event)) (*RunResult, error) {
	col.startRun()
	W := len(workers)
	start := nanotime()
	t0 := start + int64(cfg.Warmup)
	stalledFlag := &atomic.Bool{}
	base := phase{start: start, t0: t0, stalled: stalledFlag}
	if cfg.Requests == 0 && cfg.RequestsPerClient == 0 {
		base.end = t0 + int64(cfg.Duration)
		if cutoff > 0 {
			base.cutoff = base.end + int64(cutoff)
		}
	}
	switch {
	case cfg.Rate > 0:
		base.interval = int64(float64(W) / cfg.Rate * 1e9)
	case cfg.RateLimiting > 0:
		base.interval = int64(1e9 / float64(cfg.RateLimiting))
	}
	if base.interval != 0 {
		base.interval = max(base.interval, 1)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	for i, w := range workers {
		w.err, w.unsent = nil, 0
		ph := base
		switch {
		case cfg.RequestsPerClient > 0:
			ph.quota = cfg.RequestsPerClient
		case cfg.Requests > 0:
			ph.quota = quota(cfg.Requests, W, i)
			if ph.quota == 0 {
				continue
			}
		}
		ph.offset = int64(i) * ph.interval / int64(W)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(runCtx, ctx, ph)
			if w.err != nil {
				select {
				case failed <- struct{}{}:
				default:
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	// Warmup: nothing is kept until t0.
	if wait := time.Duration(t0 - nanotime()); wait > 0 {
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-done:
		case <-ctx.Done():
		}
		timer.Stop()
	}
	col.baselineBytes()

	iv := int64(cfg.Interval)
	quiet := stallQuiet
	if base.interval > 0 {
		// Ten of the whole run's request intervals.
		quiet += time.Duration(10 * base.interval / int64(W))
	}
	var stall <-chan time.Time
	if base.end > 0 {
		st := time.NewTimer(time.Duration(base.end-nanotime()) + cutoff + stallGrace)
		defer st.Stop()
		stall = st.C
	}
	stalled, connFailed := false, false
	lastT := 0.0
	tick := time.NewTimer(time.Duration(t0 + iv - nanotime()))
	defer tick.Stop()
	next := t0 + iv
loop:
	for {
		select {
		case <-tick.C:
			// In a timed run the last interval is closed by the run's end
			// (below), not by a tick at the same instant that would leave
			// a sliver of stragglers as a sample of its own.
			if base.end > 0 && next >= base.end {
				continue
			}
			col.gather(true)
			if base.end == 0 && !stalled && nanotime()-max(col.last, t0) > int64(quiet) {
				stalled = true
				stalledFlag.Store(true)
				set.closeAll()
			}
			t := float64(next-t0) / 1e9
			for _, s := range col.samples(run, t, t-lastT) {
				emit(s)
			}
			lastT = t
			next += iv
			tick.Reset(time.Duration(next - nanotime()))
		case <-done:
			break loop
		case <-failed:
			connFailed = true
			cancel() // the run ends: stop the other workers after their pipeline
		case <-stall:
			stalled = true
			stalledFlag.Store(true)
			set.closeAll()
		case <-ctx.Done():
			// Sockets are being closed by Run's AfterFunc; wait for workers.
		}
	}
	col.gather(true)
	endT := col.last
	if endT <= t0 {
		endT = nanotime()
	}
	seconds := float64(endT-t0) / 1e9
	if seconds < 0 {
		seconds = 0
	}
	if dt := seconds - lastT; dt > 0 && (col.ivCounts.total() > 0 || col.ivCounts.errors() > 0) {
		for _, s := range col.samples(run, seconds, dt) {
			emit(s)
		}
	}
	res := col.runResult(run, seconds)
	for _, w := range workers {
		res.Unsent += w.unsent
	}
	if col.keep {
		wall := func(ns int64) time.Time { return time.Now().Add(time.Duration(ns - nanotime())) }
		rec := col.records[len(col.records)-1]
		rec.start, rec.end = wall(t0), wall(max(endT, t0))
		for _, w := range workers {
			if w.err != nil {
				rec.connErrors++
			}
		}
	}

	// Per-target errors, and the run's. A connection this run closed
	// itself because ctx ended is not lost: the run was interrupted.
	var firstConnErr string
	for _, w := range workers {
		if w.err == nil || ctx.Err() != nil && errors.Is(w.err, net.ErrClosed) {
			continue
		}
		msg := fmt.Sprintf("connection lost: %v", w.err)
		tr := &res.Targets[w.target]
		if tr.Err == "" {
			tr.Err = msg
		}
		if firstConnErr == "" {
			firstConnErr = fmt.Sprintf("%s: %s", tr.Target, msg)
		}
	}
	var err error
	switch {
	case stalled && base.end > 0:
		err = fmt.Errorf("run %d: no reply within %s after the run's end; connections closed, partial results kept", run, stallGrace)
	case stalled:
		err = fmt.Errorf("run %d: no reply for %s; the server stalled, connections closed, partial results kept", run, quiet)
	case connFailed || firstConnErr != "":
		err = fmt.Errorf("run %d ended early: %s (is the server still running?); partial results kept", run, firstConnErr)
	case ctx.Err() != nil:
		err = fmt.Errorf("run %d interrupted: %w; partial results kept", run, ctx.Err())
	}
	if err != nil {
		res.Partial = true
	} else if res.Errors > 0 && col.runCounts.total()-col.runCounts.errReplies == 0 {
		err = fmt.Errorf("run %d: all %d requests failed (%s), first error: %s", run, res.Errors, benchwire.KindsText(res.ErrorsByKind), firstErrorText(workers))
	}
	if err != nil {
		res.Err = err.Error()
	}
	return res, err
}

func firstErrorText(workers []*worker) string {
	for _, w := range workers {
		if w.firstErr != "" {
			return w.firstErr
		}
	}
	return "(none recorded)"
}

// summarize computes the across-run statistics.
func summarize(results []*RunResult, col *collector) *Summary {
	s := &Summary{Runs: len(results), OpsPerSecByCmd: map[string]float64{}, LatencyMs: latencyOf(col.allHist)}
	var ops, sent, recv []float64
	fields := make([][]float64, 6)
	for _, r := range results {
		ops = append(ops, r.OpsPerSec)
		sent = append(sent, r.BytesSentPerSec)
		recv = append(recv, r.BytesRecvPerSec)
		l := r.LatencyMs
		for i, v := range []float64{l.Avg, l.P50, l.P90, l.P99, l.P999, l.Max} {
			fields[i] = append(fields[i], v)
		}
		for k, v := range r.OpsPerSecByCmd {
			s.OpsPerSecByCmd[k] += v / float64(len(results))
		}
		s.Ops += r.Ops
		s.Errors += r.Errors
		for k, v := range r.ErrorsByKind {
			if s.ErrorsByKind == nil {
				s.ErrorsByKind = map[string]int64{}
			}
			s.ErrorsByKind[k] += v
		}
		if r.Partial {
			s.Partial = true
		}
		if s.Err == "" && r.Err != "" {
			s.Err = r.Err
		}
		s.ClientBound = s.ClientBound || r.ClientBound
		if h := r.ClientHostBusyPct; h != nil && (s.ClientHostBusyPctMax == nil || *h > *s.ClientHostBusyPctMax) {
			s.ClientHostBusyPctMax = h
		}
	}
	s.OpsPerSec, s.OpsPerSecStddev = meanStd(ops)
	s.OpsPerSecMin, s.OpsPerSecMax = minMax(ops)
	s.BytesSentPerSec, _ = meanStd(sent)
	s.BytesRecvPerSec, _ = meanStd(recv)
	var mean, std [6]float64
	for i := range fields {
		mean[i], std[i] = meanStd(fields[i])
	}
	s.LatencyMsMean = Latency{Avg: mean[0], P50: mean[1], P90: mean[2], P99: mean[3], P999: mean[4], Max: mean[5]}
	s.LatencyMsStddev = Latency{Avg: std[0], P50: std[1], P90: std[2], P99: std[3], P999: std[4], Max: std[5]}
	for _, v := range []*float64{&s.OpsPerSec, &s.OpsPerSecStddev} {
		if math.IsNaN(*v) {
			*v = 0
		}
	}
	return s
}
