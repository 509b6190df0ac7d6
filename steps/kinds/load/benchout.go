package load

import (
	"errors"
	"slices"
	"sync"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
)

// BenchOutput is what a run keeps of one `dpulab bench` process's output
// besides its events: the last lines of its stderr (a failure's tail: its
// stdout is JSON for the run) and the first stdout line that did not
// parse. The runner calls back from its stdout and stderr readers at
// once, so it locks.
type BenchOutput struct {
	mu        sync.Mutex
	tail      []string
	decodeErr error
}

// BenchTailLines is how many stderr lines a failure shows.
const BenchTailLines = 10

// Take handles one line of the bench: stderr is shown (show) and kept
// for the tail; stdout is parsed, and a line that is no event of a known
// type is shown and its error kept. It returns the event, or nil.
func (o *BenchOutput) Take(l runner.Line, show func(runner.Line)) benchwire.Event {
	if l.Stream == runner.Stderr {
		o.mu.Lock()
		o.tail = append(o.tail, l.Text)
		if len(o.tail) > BenchTailLines {
			o.tail = o.tail[1:]
		}
		o.mu.Unlock()
		show(l)
		return nil
	}
	ev, err := benchwire.ParseLine([]byte(l.Text))
	if err != nil {
		if !errors.Is(err, benchwire.ErrUnknownType) {
			o.mu.Lock()
			if o.decodeErr == nil {
				o.decodeErr = err
			}
			o.mu.Unlock()
			show(l)
		}
		return nil
	}
	return ev
}

// LastLines is the stderr tail for a failure.
func (o *BenchOutput) LastLines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.tail)
}

// Err is the first stdout line's parse error, if any.
func (o *BenchOutput) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.decodeErr
}

// BenchSecond is one interval of a bench: its totals sample and, with
// --target-samples, each target's sample of the same interval.
type BenchSecond struct {
	Total   *benchwire.Sample
	Targets []*benchwire.Sample
}

// SecondJoiner joins a bench's totals sample with the per-target samples
// the bench prints right after it (collect.go: totals first, then one line
// per target, same run and t_seconds). A second is complete when all Want
// per-target lines came, or when the next totals sample or run line comes
// (a target line lost to a bench that ended). Per-target lines that match
// no open second are dropped. Not safe for concurrent use.
type SecondJoiner struct {
	// Want is the per-target lines per interval (0: none asked for).
	Want int
	cur  *BenchSecond
}

// Add takes one sample line and returns the seconds it completed.
func (j *SecondJoiner) Add(s *benchwire.Sample) []BenchSecond {
	if s.Target != "" {
		if j.cur == nil || j.cur.Total.Run != s.Run || j.cur.Total.T != s.T {
			return nil
		}
		j.cur.Targets = append(j.cur.Targets, s)
		if len(j.cur.Targets) >= j.Want {
			return j.Flush()
		}
		return nil
	}
	out := j.Flush()
	j.cur = &BenchSecond{Total: s}
	if j.Want == 0 {
		out = append(out, j.Flush()...)
	}
	return out
}

// Flush returns the open second, if any: call it before a run line and
// when the bench has ended.
func (j *SecondJoiner) Flush() []BenchSecond {
	if j.cur == nil {
		return nil
	}
	s := *j.cur
	j.cur = nil
	return []BenchSecond{s}
}
