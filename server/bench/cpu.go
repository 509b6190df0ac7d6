package bench

import (
	"os"
	"time"

	"github.com/dpulab/dpulab/internal/osproc"
	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/server/sample"
)

// The client saturation guard.
//
// A load generator whose own host is out of CPU measures itself, not the
// server: TPS stops growing and latencies grow with the client's run queue.
// So the bench samples, every interval and over every run, its own process
// CPU (getrusage: user + system time, in percent of one core: 150 = one and
// a half cores busy) and its host's (/proc/stat: 100 − idle − iowait, in
// percent of all the host's CPUs; steal counts as busy, since a guest
// cannot use stolen time). A run whose client host was at least
// ClientBoundPct busy over its measured time is marked client_bound, with
// the figure beside it. When the server runs on the same host (a local
// lab), the flag says the shared host was saturated, which is as true.

// ClientBoundPct is the host CPU busy share, in percent, from which a run
// is marked client_bound (benchwire's, which the TUI reads).
const ClientBoundPct = benchwire.ClientBoundPct

// hostCPUTimes reads the host's aggregate CPU counters; where there is no
// /proc/stat (not Linux) the host figure is left out. A variable so that a
// test can stand in a host of known load.
var hostCPUTimes = func() (sample.CPUTimes, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return sample.CPUTimes{}, err
	}
	defer f.Close()
	return sample.ParseProcStat(f)
}

// cpuReading is one reading of the process's and the host's CPU counters.
type cpuReading struct {
	wall   int64 // nanotime
	proc   time.Duration
	procOK bool
	host   sample.CPUTimes
	hostOK bool
}

func readCPU() cpuReading {
	r := cpuReading{wall: nanotime()}
	if user, sys, err := osproc.CPUTime(); err == nil {
		r.proc = user + sys
		r.procOK = true
	}
	if t, err := hostCPUTimes(); err == nil {
		r.host, r.hostOK = t, true
	}
	return r
}

// cpuBetween returns the process's CPU (percent of one core) and the
// host's busy share (percent of all CPUs) between two readings; nil for a
// figure that could not be read or an empty span.
func cpuBetween(a, b cpuReading) (proc, host *float64) {
	if wall := b.wall - a.wall; a.procOK && b.procOK && wall > 0 {
		v := round2(100 * float64(b.proc-a.proc) / float64(wall))
		proc = &v
	}
	if a.hostOK && b.hostOK && b.host != a.host {
		c := sample.CPUShare(a.host, b.host)
		v := round2(max(0, 100-c.Idle-c.IOWait))
		host = &v
	}
	return proc, host
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// clientBound reports whether a host busy share marks a run client_bound.
func clientBound(host *float64) bool { return host != nil && *host >= ClientBoundPct }
