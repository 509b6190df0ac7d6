package load

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCommonStart: the instant is ahead by four of the slowest round
// trips plus 1.5 s, and every host's --start-at is that instant on its
// own clock (this machine's plus its offset), to the millisecond: the
// values each host is given, not how the hosts keep them. A host whose
// clock was not read leaves no common start.
func TestCommonStart(t *testing.T) {
	now := time.Date(2026, 12, 3, 23, 0, 0, 123_456_789, time.UTC)
	rs := []ClockReading{
		{Host: "c1", Offset: 0, Uncertainty: time.Millisecond},
		{Host: "c2", Offset: 120*time.Millisecond + 400*time.Microsecond, Uncertainty: 10 * time.Millisecond},
		{Host: "c3", Offset: -35*time.Millisecond - 700*time.Microsecond, Uncertainty: 3 * time.Millisecond},
		// Within its uncertainty: not told from zero, not applied.
		{Host: "c4", Offset: 5 * time.Millisecond, Uncertainty: 8 * time.Millisecond},
	}
	at, per, why := CommonStart(now, rs)
	if why != "" || len(per) != 4 {
		t.Fatalf("common start: %v, %v, %q", at, per, why)
	}
	// Slowest round trip 20 ms: 4 × 20 ms + 1.5 s ahead, to the ms.
	if want := now.Add(1580 * time.Millisecond).Truncate(time.Millisecond); !at.Equal(want) {
		t.Errorf("instant %s, want %s", at.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	for i, r := range rs {
		// The host's --start-at, back on this machine's clock, is the
		// common instant within the millisecond it is given in.
		back := time.UnixMilli(per[i]).Add(-AppliedOffset(r))
		if d := back.Sub(at); d < -500*time.Microsecond || d > 500*time.Microsecond {
			t.Errorf("%s: --start-at %d is %s on this machine's clock, %s from the common instant", r.Host, per[i], back.Format(time.RFC3339Nano), d)
		}
	}
	if per[1]-per[0] != 120 || per[0]-per[2] != 36 || per[3] != per[0] {
		t.Errorf("--start-at %v: want c2 120 ms after c1, c3 36 ms before, as their clocks are, and c4 with c1", per)
	}
	rs[1].Err = errors.New("ssh: broken")
	if _, per, why := CommonStart(now, rs); per != nil || !strings.Contains(why, "c2's clock was not read") {
		t.Errorf("with an unread clock: %v, %q", per, why)
	}
}
