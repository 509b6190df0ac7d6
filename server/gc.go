package server

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

var tuneOnce sync.Once

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
