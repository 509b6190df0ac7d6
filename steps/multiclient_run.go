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

// startSkewWarn is the spread of the client hosts' measured starts from
// which the run says so: a merged second then mixes a quarter second of
// one host's load with another's.
const startSkewWarn = 250 * time.Millisecond

// The common start: every client host's bench connects, then waits for
// one instant (bench --start-at) before its first request. The instant is
// far enough ahead for every host to start its bench over SSH and connect:
// startLeadRTTs of the slowest host's round trip (as its clock reading
// measured it) plus startLead. Each host is given it on its own clock (this
// machine's instant plus the host's measured offset), so every host starts
// at the same true instant, within its offset's uncertainty (half its
// round trip). An offset no larger than its uncertainty is not applied:
// the reading cannot tell it from zero, and it is mostly the SSH session's
// start-up (the remote date runs late in the round trip). Three sshd
// "hosts" on one machine, one clock, read +28 to +52 ms (± 60 ms or so on
// a loaded machine): applied, they would have set apart by up to 24 ms
// hosts whose clocks agree exactly.
const (
	startLeadRTTs = 4
	startLead     = 1500 * time.Millisecond
)

// commonStart is the instant, for a launch at now, and each host's
// --start-at (Unix ms on its own clock). When a host's clock could not be
// read there is no common start: why says which, and the hosts start as
// their SSH sessions do.
func commonStart(now time.Time, rs []load.ClockReading) (at time.Time, perHost []int64, why string) {
	var slowest time.Duration
	for _, r := range rs {
		if r.Err != nil {
			return time.Time{}, nil, fmt.Sprintf("%s's clock was not read, so its offset is unknown", r.Host)
		}
		slowest = max(slowest, 2*r.Uncertainty)
	}
	at = now.Add(startLeadRTTs*slowest + startLead).Truncate(time.Millisecond)
	perHost = make([]int64, len(rs))
	for i, r := range rs {
		perHost[i] = at.Add(appliedOffset(r)).Round(time.Millisecond).UnixMilli()
	}
	return at, perHost, ""
}

// appliedOffset is the part of a host's measured clock offset the common
// start corrects for: all of it when it exceeds the reading's uncertainty,
// none otherwise.
func appliedOffset(r load.ClockReading) time.Duration {
	if r.Offset.Abs() <= r.Uncertainty {
		return 0
	}
	return r.Offset
}

// clientRun is one client host's bench in a job (runBench).
type clientRun struct {
	share clientShare
	t     runner.Target
	cmd   string
	out   benchOutput
	// seconds joins each totals sample with its per-target lines.
	seconds secondJoiner
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
	ev := cr.out.take(e, step, l)
	if ev == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	switch ev := ev.(type) {
	case *benchwire.Sample:
		for _, sec := range cr.seconds.add(ev) {
			m.Sample(i, sec.total, time.Now(), sec.targets...)
		}
	case *benchwire.Start:
		cr.started = ev
	case *benchwire.RunResult:
		for _, sec := range cr.seconds.flush() {
			m.Sample(i, sec.total, time.Now(), sec.targets...)
		}
		m.RunDone(i, ev)
	}
}

// startAtList is each host's --start-at as the run says it.
func startAtList(names []string, perHost []int64, rs []load.ClockReading) string {
	parts := make([]string, len(names))
	for i, n := range names {
		how := "applied"
		if appliedOffset(rs[i]) == 0 {
			how = "within the reading's uncertainty: not applied"
		}
		parts[i] = fmt.Sprintf("%s --start-at %d (clock %s ± %s, %s)", n, perHost[i], load.SignedMillis(rs[i].Offset), load.Millis(rs[i].Uncertainty), how)
	}
	return strings.Join(parts, ", ")
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

// clientCPUNote is a client host's CPU as the run summaries say it.
// shared: the host also served the load (the quickstart's one host), so a
// saturated CPU is that host's limit with both on it, not the client's.
func clientCPUNote(busy *float64, bound, shared bool) string {
	s := ""
	if busy != nil {
		s = fmt.Sprintf(", client host CPU %.0f%%", *busy)
	}
	switch {
	case bound && shared:
		s += " (SATURATED SHARED HOST: the load generator and the server shared this host's CPUs, which were the limit; run the client role on another host to measure the server alone)"
	case bound:
		s += " (CLIENT-BOUND: the load generator's host was saturated, so the figures understate the server)"
	}
	return s
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
