package server

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

var (
	tuneOnce sync.Once
	// gcTuned: TuneGC runs, so the server manages the process's collector.
	gcTuned atomic.Bool
	// returning: a returnMemory collection is pending or running.
	returning atomic.Bool
)

// bigRelease is the size of a dropped buffer worth returning to the OS.
const bigRelease = 16 << 20

// returnMemory runs after a client dropped a buffer of bigRelease or more
// (the intermediate buffers of a big argument, a big reply, a departed
// client's input). Go frees such a buffer only at the next collection,
// which on an idle server is up to two minutes away, and returns its pages
// to the OS later still; so, when TuneGC manages the collector, it asks for
// both now, in the background and at most one at a time.
func returnMemory() {
	if !gcTuned.Load() || !returning.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer returning.Store(false)
		// Let a burst of releases (many clients leaving) end first.
		time.Sleep(100 * time.Millisecond)
		debug.FreeOSMemory()
	}()
}

// gcHeadroom is the heap growth allowed between collections once the
// dataset is large. Go's default (GOGC=100) lets the heap double before
// collecting, so a 4 GB dataset would cost 8 GB of RAM; Redis has no such
// headroom. Past gcHeadroom of live heap, GOGC shrinks so the headroom
// stays about this size (never below 10%).
const gcHeadroom = 64 << 20

// TuneGC keeps the garbage collector's headroom bounded as the dataset
// grows (see gcHeadroom), unless GOGC is set in the environment. It starts
// one background goroutine per process; call it from main, not from
// libraries embedding a Server that manage GC themselves.
func TuneGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	tuneOnce.Do(func() {
		gcTuned.Store(true)
		go func() {
			samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			last := 100
			for {
				time.Sleep(250 * time.Millisecond)
				metrics.Read(samples)
				if samples[0].Value.Kind() != metrics.KindUint64 {
					return
				}
				live := samples[0].Value.Uint64()
				pct := 100
				if live > gcHeadroom {
					pct = int(uint64(100*gcHeadroom) / live)
				}
				pct = max(pct, 10)
				if pct != last {
					debug.SetGCPercent(pct)
					last = pct
				}
			}
		}()
	})
}
