package steps

import (
	"errors"
	"slices"
	"sync"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/runner"
)

// benchOutput is what the engine keeps of one `dpulab bench` process's
// output besides its events: the last lines of its stderr (a failure's
// tail: its stdout is JSON for the engine) and the first stdout line that
// did not parse. The runner calls back from its stdout and stderr readers
// at once, so it locks.
type benchOutput struct {
	mu        sync.Mutex
	tail      []string
	decodeErr error
}

// benchTailLines is how many stderr lines a failure shows.
const benchTailLines = 10

// take handles one line of the bench: stderr is shown and kept for the
// tail; stdout is parsed, and a line that is no event of a known type is
// shown and its error kept. It returns the event, or nil.
func (o *benchOutput) take(e *Engine, step string, l runner.Line) benchwire.Event {
	if l.Stream == runner.Stderr {
		o.mu.Lock()
		o.tail = append(o.tail, l.Text)
		if len(o.tail) > benchTailLines {
			o.tail = o.tail[1:]
		}
		o.mu.Unlock()
		e.opts.Emit(Output{Step: step, Line: l})
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
			e.opts.Emit(Output{Step: step, Line: l})
		}
		return nil
	}
	return ev
}

// lastLines is the stderr tail for a failure.
func (o *benchOutput) lastLines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.tail)
}

// err is the first stdout line's parse error, if any.
func (o *benchOutput) err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.decodeErr
}

// benchSecond is one interval of a bench: its totals sample and, with
// --target-samples, each target's sample of the same interval.
type benchSecond struct {
	total   *benchwire.Sample
	targets []*benchwire.Sample
}

// secondJoiner joins a bench's totals sample with the per-target samples
// the bench prints right after it (collect.go: totals first, then one line
// per target, same run and t_seconds). A second is complete when all want
// per-target lines came, or when the next totals sample or run line comes
// (a target line lost to a bench that ended). Per-target lines that match
// no open second are dropped. Not safe for concurrent use.
type secondJoiner struct {
	// want is the per-target lines per interval (0: none asked for).
	want int
	cur  *benchSecond
}

// add takes one sample line and returns the seconds it completed.
func (j *secondJoiner) add(s *benchwire.Sample) []benchSecond {
	if s.Target != "" {
		if j.cur == nil || j.cur.total.Run != s.Run || j.cur.total.T != s.T {
			return nil
		}
		j.cur.targets = append(j.cur.targets, s)
		if len(j.cur.targets) >= j.want {
			return j.flush()
		}
		return nil
	}
	out := j.flush()
	j.cur = &benchSecond{total: s}
	if j.want == 0 {
		out = append(out, j.flush()...)
	}
	return out
}

// flush returns the open second, if any: call it before a run line and
// when the bench has ended.
func (j *secondJoiner) flush() []benchSecond {
	if j.cur == nil {
		return nil
	}
	s := *j.cur
	j.cur = nil
	return []benchSecond{s}
}
