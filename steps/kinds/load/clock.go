package load

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/runner"
)

// The clock check before a multi-client run. Each client host's clock is
// read over SSH (date +%s.%N) and set against this machine's at the
// midpoint of the round trip, NTP's way: the offset is known to within
// half the round trip, and of three readings the one with the shortest
// round trip is kept. The merge itself does not rely on the clocks (each
// host's seconds are counted from its own start, and those starts are
// measured from this machine: RunResult.StartSkewMs), but clocks that
// disagree make every timestamp on the hosts (server logs, the samplers'
// lines, a capture) disagree too, which is what the warning is for.

// clockSpreadWarn is the clock disagreement between client hosts from
// which the run warns: several times what NTP keeps hosts of one lab
// within, and a twentieth of a merged second.
const clockSpreadWarn = 50 * time.Millisecond

// clockReadings is how often each host's clock is read; the reading with
// the shortest round trip is kept.
const clockReadings = 3

// ClockReading is one client host's clock against this machine's.
type ClockReading struct {
	Host string
	// Offset is the host's clock minus this machine's; Uncertainty is
	// half the round trip it was read over.
	Offset, Uncertainty time.Duration
	Err                 error
}

// readClock reads t's clock once: its offset against this machine's and
// the round trip.
func readClock(ctx context.Context, t runner.Target) (offset, rtt time.Duration, err error) {
	var remote string
	var got time.Time
	sent := time.Now()
	res, err := t.Run(ctx, runner.Command{Cmd: "date +%s.%N", Timeout: 15 * time.Second, Output: func(l runner.Line) {
		if l.Stream == runner.Stdout && remote == "" {
			got = time.Now()
			remote = strings.TrimSpace(l.Text)
		}
	}})
	if err != nil {
		return 0, 0, err
	}
	if res.ExitCode != 0 || remote == "" {
		return 0, 0, fmt.Errorf("date +%%s.%%N: exit status %d", res.ExitCode)
	}
	at, err := parseEpoch(remote)
	if err != nil {
		return 0, 0, err
	}
	rtt = got.Sub(sent)
	return at.Sub(sent.Add(rtt / 2)), rtt, nil
}

// parseEpoch reads date +%s.%N's "1733250000.123456789".
func parseEpoch(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || len(frac) > 9 || strings.Trim(frac, "0123456789") != "" {
		return time.Time{}, fmt.Errorf("the host's date +%%s.%%N said %q, not seconds.nanoseconds (a date without %%N)", s)
	}
	ns := int64(0)
	if frac != "" {
		ns, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	return time.Unix(n, ns), nil
}

// CheckClocks reads every client host's clock, all at once.
func CheckClocks(ctx context.Context, hosts []string, targets []runner.Target) []ClockReading {
	out := make([]ClockReading, len(hosts))
	var wg sync.WaitGroup
	for i := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := ClockReading{Host: hosts[i], Err: errors.New("not read")}
			best := time.Duration(-1)
			for range clockReadings {
				off, rtt, err := readClock(ctx, targets[i])
				if err != nil {
					r.Err = err
					continue
				}
				if best < 0 || rtt < best {
					best, r.Offset, r.Uncertainty, r.Err = rtt, off, rtt/2, nil
				}
			}
			out[i] = r
		}()
	}
	wg.Wait()
	return out
}

// ClockVerdict is the spread of the readings that worked and, when it is
// beyond clockSpreadWarn by more than the readings' own uncertainty (two
// hosts with one clock read over slow sessions differ by up to the sum of
// their half round trips, and that is no disagreement), the warning:
// which hosts, by how much, and what to do. ok is false when fewer than
// two hosts could be read.
func ClockVerdict(rs []ClockReading) (spread time.Duration, warning string, ok bool) {
	var good []ClockReading
	for _, r := range rs {
		if r.Err == nil {
			good = append(good, r)
		}
	}
	if len(good) < 2 {
		return 0, "", false
	}
	sort.SliceStable(good, func(i, j int) bool { return good[i].Offset < good[j].Offset })
	lo, hi := good[0], good[len(good)-1]
	spread = hi.Offset - lo.Offset
	least := spread - hi.Uncertainty - lo.Uncertainty
	if least <= clockSpreadWarn {
		return spread, "", true
	}
	warning = fmt.Sprintf("the client hosts' clocks disagree by %s, at least %s (%s is %s and %s %s against this machine, each ± half its SSH round trip): "+
		"the merged seconds still line up (each host counts from its own start), but timestamps on the hosts do not; "+
		"sync their clocks (timedatectl set-ntp true, or chrony: chronyc tracking shows the offset) before quoting figures",
		Millis(spread), Millis(least), hi.Host, SignedMillis(hi.Offset), lo.Host, SignedMillis(lo.Offset))
	return spread, warning, true
}

func Millis(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) + " ms" }

func SignedMillis(d time.Duration) string {
	if d >= 0 {
		return "+" + Millis(d)
	}
	return "-" + Millis(-d)
}

// MillisPtr is d in milliseconds, for results.
func MillisPtr(d time.Duration) *float64 {
	v := float64(d) / 1e6
	return &v
}
