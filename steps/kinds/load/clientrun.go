package load

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
)

// ClientRun is one client host's bench in a job: its share of the load,
// where it runs, its command, its output and how it ended.
type ClientRun struct {
	Share ClientShare
	T     runner.Target
	Cmd   string
	Out   BenchOutput
	// Seconds joins each totals sample with its per-target lines.
	Seconds SecondJoiner
	// Started is the bench's start line: the --start-at it received and
	// how late after it it began.
	Started *benchwire.Start
	Res     runner.Result
	Err     error
}

// Failed says the host's bench failed: it could not run, or it exited
// with an error.
func (cr *ClientRun) Failed() bool { return cr.Err != nil || cr.Res.ExitCode != 0 }

// Line takes one line of client host i's bench into the merge m (under
// mu, which guards m); show shows a line that is not the bench's JSON.
func (cr *ClientRun) Line(show func(runner.Line), m *ClientMerge, mu *sync.Mutex, i int, l runner.Line) {
	// A line that does not parse is shown; it does not stop the others'
	// merge.
	ev := cr.Out.Take(l, show)
	if ev == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	switch ev := ev.(type) {
	case *benchwire.Sample:
		for _, sec := range cr.Seconds.Add(ev) {
			m.Sample(i, sec.Total, time.Now(), sec.Targets...)
		}
	case *benchwire.Start:
		cr.Started = ev
	case *benchwire.RunResult:
		cr.Ended(m, i)
		m.RunDone(i, ev)
	}
}

// Ended hands the second still open (its per-target lines never came) to
// m: at a run's result line and when host i's bench has ended.
func (cr *ClientRun) Ended(m *ClientMerge, i int) {
	for _, sec := range cr.Seconds.Flush() {
		m.Sample(i, sec.Total, time.Now(), sec.Targets...)
	}
}

// StartedNote says how each host's bench began against its --start-at,
// from its start line (its own clock): the latest, and any host that did
// not say (an older bench, or one that failed before connecting).
func StartedNote(runs []*ClientRun, perHost []int64) string {
	var latest time.Duration
	var who string
	var silent, wrong []string
	for i, cr := range runs {
		st := cr.Started
		switch {
		case st == nil || st.StartLateMs == nil:
			silent = append(silent, cr.Share.Host.Name)
		case st.Config.StartAtUnixMs != perHost[i]:
			wrong = append(wrong, fmt.Sprintf("%s (asked %d, got %d)", cr.Share.Host.Name, perHost[i], st.Config.StartAtUnixMs))
		default:
			if d := time.Duration(*st.StartLateMs * 1e6); who == "" || d > latest {
				latest, who = d, cr.Share.Host.Name
			}
		}
	}
	var parts []string
	if who != "" {
		whom := "every client host"
		if len(silent)+len(wrong) > 0 {
			whom = "the other client hosts"
		}
		parts = append(parts, fmt.Sprintf("%s began within %s of the common instant by its own clock (latest: %s)", whom, Millis(latest), who))
	}
	if len(silent) > 0 {
		parts = append(parts, "no start reported by "+strings.Join(silent, ", "))
	}
	if len(wrong) > 0 {
		parts = append(parts, "a different --start-at reached "+strings.Join(wrong, ", "))
	}
	return strings.Join(parts, "; ")
}
