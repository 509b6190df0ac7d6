package steps

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kinds/load"
)

// clientRun is one client host's bench in a job (runBench).
type clientRun struct {
	share load.ClientShare
	t     runner.Target
	cmd   string
	out   load.BenchOutput
	// seconds joins each totals sample with its per-target lines.
	seconds load.SecondJoiner
	// started is the bench's start line: the --start-at it received and
	// how late after it it began.
	started *benchwire.Start
	res     runner.Result
	err     error
}

// failed says the host's bench failed: it could not run, or it exited
// with an error.
func (cr *clientRun) failed() bool { return cr.err != nil || cr.res.ExitCode != 0 }

// line takes one line of client host i's bench into the merge m.
func (cr *clientRun) line(e *Engine, step string, m *load.ClientMerge, mu *sync.Mutex, i int, l runner.Line) {
	// A line that does not parse is shown; it does not stop the others'
	// merge.
	ev := cr.out.Take(l, showOutput(e.opts.Emit, step))
	if ev == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	switch ev := ev.(type) {
	case *benchwire.Sample:
		for _, sec := range cr.seconds.Add(ev) {
			m.Sample(i, sec.Total, time.Now(), sec.Targets...)
		}
	case *benchwire.Start:
		cr.started = ev
	case *benchwire.RunResult:
		for _, sec := range cr.seconds.Flush() {
			m.Sample(i, sec.Total, time.Now(), sec.Targets...)
		}
		m.RunDone(i, ev)
	}
}

// startedNote says how each host's bench began against its --start-at,
// from its start line (its own clock): the latest, and any host that did
// not say (an older bench, or one that failed before connecting).
func startedNote(runs []*clientRun, perHost []int64) string {
	var latest time.Duration
	var who string
	var silent, wrong []string
	for i, cr := range runs {
		st := cr.started
		switch {
		case st == nil || st.StartLateMs == nil:
			silent = append(silent, cr.share.Host.Name)
		case st.Config.StartAtUnixMs != perHost[i]:
			wrong = append(wrong, fmt.Sprintf("%s (asked %d, got %d)", cr.share.Host.Name, perHost[i], st.Config.StartAtUnixMs))
		default:
			if d := time.Duration(*st.StartLateMs * 1e6); who == "" || d > latest {
				latest, who = d, cr.share.Host.Name
			}
		}
	}
	var parts []string
	if who != "" {
		whom := "every client host"
		if len(silent)+len(wrong) > 0 {
			whom = "the other client hosts"
		}
		parts = append(parts, fmt.Sprintf("%s began within %s of the common instant by its own clock (latest: %s)", whom, load.Millis(latest), who))
	}
	if len(silent) > 0 {
		parts = append(parts, "no start reported by "+strings.Join(silent, ", "))
	}
	if len(wrong) > 0 {
		parts = append(parts, "a different --start-at reached "+strings.Join(wrong, ", "))
	}
	return strings.Join(parts, "; ")
}

// servedBy says whether host also serves the job's load.
func (j benchJob) servedBy(host string) bool {
	for _, h := range j.Servers {
		if h.Name == host {
			return true
		}
	}
	return false
}
