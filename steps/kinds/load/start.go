package load

import (
	"fmt"
	"strings"
	"time"
)

// StartSkewWarn is the spread of the client hosts' measured starts from
// which the run says so: a merged second then mixes a quarter second of
// one host's load with another's.
const StartSkewWarn = 250 * time.Millisecond

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

// CommonStart is the instant, for a launch at now, and each host's
// --start-at (Unix ms on its own clock). When a host's clock could not be
// read there is no common start: why says which, and the hosts start as
// their SSH sessions do.
func CommonStart(now time.Time, rs []ClockReading) (at time.Time, perHost []int64, why string) {
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
		perHost[i] = at.Add(AppliedOffset(r)).Round(time.Millisecond).UnixMilli()
	}
	return at, perHost, ""
}

// AppliedOffset is the part of a host's measured clock offset the common
// start corrects for: all of it when it exceeds the reading's uncertainty,
// none otherwise.
func AppliedOffset(r ClockReading) time.Duration {
	if r.Offset.Abs() <= r.Uncertainty {
		return 0
	}
	return r.Offset
}

// StartAtList is each host's --start-at as the run says it.
func StartAtList(names []string, perHost []int64, rs []ClockReading) string {
	parts := make([]string, len(names))
	for i, n := range names {
		how := "applied"
		if AppliedOffset(rs[i]) == 0 {
			how = "within the reading's uncertainty: not applied"
		}
		parts[i] = fmt.Sprintf("%s --start-at %d (clock %s ± %s, %s)", n, perHost[i], SignedMillis(rs[i].Offset), Millis(rs[i].Uncertainty), how)
	}
	return strings.Join(parts, ", ")
}

// ClientCPUNote is a client host's CPU as the run summaries say it.
// shared: the host also served the load (the quickstart's one host), so a
// saturated CPU is that host's limit with both on it, not the client's.
func ClientCPUNote(busy *float64, bound, shared bool) string {
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
