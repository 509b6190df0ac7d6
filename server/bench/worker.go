package bench

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpulab/dpulab/internal/benchhdr"
)

// worker drives one connection. Its hot loop builds a pipeline, sends it,
// reads the replies and records them into its own accum under its own
// mutex, which only the once-a-second collector ever contends for.
type worker struct {
	id, target int
	c          client
	keys       [nCmd]*keyGen
	sizes      *sizePicker
	rng        *rand.Rand
	// expLo, expSpan: SET expiries are expLo + [0, expSpan) seconds
	// (expSpan 0: no expiry).
	expLo, expSpan int
	ratio          Ratio
	pos            int // position in the SET...GET cycle
	ops            []op
	res            []reply
	due            []int64
	// firstReply: runOpts.firstReplyLatency.
	firstReply bool

	mu  sync.Mutex
	cur *accum
	// last is the nanotime of the last recorded reply (under mu).
	last int64

	// unsent counts requests due before the run's end that were still
	// unsent at its cutoff (set before run returns).
	unsent int64

	// err is the connection error that stopped the worker (set before it
	// returns, read after the run's WaitGroup).
	err error
	// firstErr is the first error reply's text, kept for messages.
	firstErr string
}

// newWorker makes connection id, the local-th of the conns connections of
// its target.
func newWorker(cfg *Config, id, target, local, conns int, c client, seed uint64) *worker {
	rng := rand.New(rand.NewPCG(seed, uint64(id)))
	w := &worker{
		id: id, target: target, c: c, rng: rng,
		keys:  [nCmd]*keyGen{newKeyGen(cfg, cmdSet, rng, local, conns), newKeyGen(cfg, cmdGet, rng, local, conns)},
		sizes: newSizePicker(cfg, rng),
		ratio: cfg.Ratio,
		ops:   make([]op, cfg.Pipeline),
		res:   make([]reply, cfg.Pipeline),
		due:   make([]int64, cfg.Pipeline),
		cur:   &accum{},
	}
	if !cfg.ExpirySeconds.IsZero() {
		w.expLo, w.expSpan = cfg.ExpirySeconds.Min, cfg.ExpirySeconds.Max-cfg.ExpirySeconds.Min+1
	}
	return w
}

// nextOp is the next request of the SET:GET cycle.
func (w *worker) nextOp() op {
	o := op{cmd: w.nextCmd()}
	o.key = w.keys[o.cmd].next()
	if o.cmd == cmdSet {
		o.size = int32(w.sizes.next(o.key))
		if w.expSpan > 0 {
			o.exp = int32(w.expLo + w.rng.IntN(w.expSpan))
		}
	}
	return o
}

// nextCmd follows the ratio exactly: Set SETs, then Get GETs, repeated.
func (w *worker) nextCmd() uint8 {
	c := uint8(cmdGet)
	if w.pos < w.ratio.Set {
		c = cmdSet
	}
	w.pos++
	if w.pos >= w.ratio.Set+w.ratio.Get {
		w.pos = 0
	}
	return c
}

// phase is what a worker does in one run; times are nanotime values.
type phase struct {
	start int64 // load begins (warmup first, if any)
	t0    int64 // measurement begins
	end   int64 // measurement ends (0 with a request count)
	quota int64 // requests to measure (0 with a duration)
	// interval is the time between this worker's requests under --rate
	// (0 = as fast as possible) and offset staggers workers over it.
	interval, offset int64
	// cutoff, when set (capacity probes only), is when a worker still
	// behind the rate schedule gives up on what it has not sent: those
	// requests would wait longer than any latency cap.
	cutoff int64
	// stalled is set when the run closed the connections on a stalled
	// server: requests cut off then count as "timeout", not "closed".
	stalled *atomic.Bool
}

// run is the hot loop for one run. ctx ends the run; user is the caller's
// context: when it is cancelled (Ctrl-C) the requests cut off in flight are
// not errors of the server's and are not counted.
func (w *worker) run(ctx, user context.Context, ph phase) {
	P := len(w.ops)
	var done int64 // measured requests sent
	k := int64(0)  // index of the next request in the rate schedule
	for ctx.Err() == nil {
		now := nanotime()
		n := P
		var due int64
		if ph.interval > 0 {
			due = ph.start + ph.offset + k*ph.interval
			if due > now {
				sleepUntil(ctx, due)
				now = nanotime()
			}
			// Send everything that is due by now, up to the pipeline depth:
			// a late schedule catches up and its latency counts from due.
			n = int(min(int64(P), 1+(now-due)/ph.interval))
			if ph.cutoff > 0 && now >= ph.cutoff && due < ph.end {
				w.unsent = (ph.end - due + ph.interval - 1) / ph.interval
				return
			}
		} else {
			due = now
		}
		measured := due >= ph.t0
		if measured && ph.end > 0 && due >= ph.end {
			return
		}
		if measured && ph.quota > 0 {
			if done >= ph.quota {
				return
			}
			n = int(min(int64(n), ph.quota-done))
		}
		for i := 0; i < n; i++ {
			w.ops[i] = w.nextOp()
			if ph.interval > 0 {
				w.due[i] = due + int64(i)*ph.interval
			} else {
				w.due[i] = now
			}
		}
		k += int64(n)
		got, err := w.c.do(w.ops[:n], w.res[:n])
		if measured {
			done += int64(n)
			w.record(n, got, err, user.Err() == nil, ph.stalled != nil && ph.stalled.Load())
		}
		if err != nil {
			if ctx.Err() == nil {
				w.err = err
			}
			return
		}
	}
}

// record adds one pipeline's outcome to the worker's accum.
func (w *worker) record(n, got int, err error, countFailed, stalled bool) {
	w.mu.Lock()
	a := w.cur
	for i := 0; i < got; i++ {
		r := &w.res[i]
		cmd := w.ops[i].cmd
		a.ops[cmd]++
		at := r.at
		if w.firstReply {
			at = w.res[0].at
		}
		us := (at - w.due[i] + 500) / 1000
		if us < benchhdr.MinValue {
			us = benchhdr.MinValue
		}
		a.lat[cmd] = append(a.lat[cmd], us)
		switch r.kind {
		case rHit:
			a.hits++
		case rMiss:
			a.misses++
		case rErr:
			a.errReplies++
			a.addKind(r.errKind, 1)
			if w.firstErr == "" {
				w.firstErr = r.errMsg
			}
		}
		if r.at > w.last {
			w.last = r.at
		}
	}
	if err != nil && got < n && countFailed {
		a.failed += int64(n - got)
		kind := errKindOf(err)
		if stalled {
			kind = "timeout"
		}
		a.addKind(kind, int64(n-got))
	}
	w.mu.Unlock()
}

// swap hands the worker's accum to the collector and gives it spare.
func (w *worker) swap(spare *accum) (*accum, int64) {
	w.mu.Lock()
	a := w.cur
	w.cur = spare
	last := w.last
	w.mu.Unlock()
	return a, last
}

// sleepUntil sleeps until nanotime reaches t or ctx ends.
func sleepUntil(ctx context.Context, t int64) {
	d := time.Duration(t - nanotime())
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
	}
}
