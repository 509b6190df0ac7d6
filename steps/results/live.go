package results

import (
	"os"

	"github.com/dpulab/dpulab/internal/osproc"
)

// Live reports whether the process that wrote r (WriterPID on WriterHost)
// still runs: only then does a file saying "running" describe a run going
// on. A file from another host cannot be checked and counts as live; a
// pid reused by another process after a kill reads as live too, which
// errs on the side of "not finished" rather than calling a run killed.
func (r *Results) Live() bool {
	live, _ := r.liveness()
	return live
}

// liveness is Live, and whether it could be checked at all (a writer
// named, on this host).
func (r *Results) liveness() (live, known bool) {
	if r.WriterPID <= 0 {
		return false, false
	}
	if h, err := os.Hostname(); err != nil || h != r.WriterHost {
		return true, false
	}
	return osproc.Alive(r.WriterPID), true
}

// MarkWriter records this process as the writer of a running file, or
// clears it once the run has ended.
func (r *Results) MarkWriter() {
	if r.Status != RunRunning {
		r.WriterPID, r.WriterHost = 0, ""
		return
	}
	r.WriterPID = os.Getpid()
	r.WriterHost, _ = os.Hostname()
}
