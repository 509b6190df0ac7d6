package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// --start-at: several client hosts start one load together. Each host's
// bench connects first (connecting 80 targets × 50 connections takes a
// while, and differently on every host), then waits for the same instant
// before its first request, so their measured seconds line up. The instant
// is Unix time in milliseconds on the host's own clock: the step engine
// gives each host the common instant shifted by that host's measured clock
// offset (steps/multiclient_clock.go).

// The window an instant must fall in, against the host's clock when the
// bench starts: a little in the past (the engine's launch over SSH was
// slow: start now), not far in it (a stale command line), and not so far
// ahead that a typo holds connections open for minutes.
const (
	StartAtPast   = 5 * time.Second
	StartAtFuture = 60 * time.Second
)

// ParseStartAt reads --start-at: Unix time in milliseconds (what
// `date +%s%3N` prints), or "" for none (0).
func ParseStartAt(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("--start-at %q: want Unix time in milliseconds, e.g. $(( $(date +%%s%%3N) + 3000 )) for three seconds from now", s)
	}
	return ms, nil
}

// checkStartAt refuses an instant outside the window around now.
func checkStartAt(ms int64, now time.Time) error {
	if ms == 0 {
		return nil
	}
	d := time.UnixMilli(ms).Sub(now)
	switch {
	case d < -StartAtPast:
		return fmt.Errorf("--start-at %d is %s in the past (this host's clock says %s): more than the %s allowed; give an instant ahead of now (is this host's clock right?)",
			ms, (-d).Round(time.Millisecond), now.UTC().Format(time.RFC3339Nano), StartAtPast)
	case d > StartAtFuture:
		return fmt.Errorf("--start-at %d is %s ahead (this host's clock says %s): more than the %s allowed; give an instant within a minute (is this host's clock right?)",
			ms, d.Round(time.Millisecond), now.UTC().Format(time.RFC3339Nano), StartAtFuture)
	}
	return nil
}

// waitStart waits until at (returning at once when it is zero or past)
// and returns how late after at the wait ended: the scheduler's wake-up,
// or connecting that took past the instant.
func waitStart(ctx context.Context, at time.Time) (late time.Duration, err error) {
	if at.IsZero() {
		return 0, nil
	}
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return 0, fmt.Errorf("interrupted while waiting for --start-at: %w", ctx.Err())
		}
	}
	return max(0, time.Since(at)), nil
}
