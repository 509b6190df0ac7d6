package steps

import (
	"errors"
	"slices"
	"sync"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/server/bench"
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
func (o *benchOutput) take(e *Engine, step string, l runner.Line) bench.Event {
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
	ev, err := bench.ParseLine([]byte(l.Text))
	if err != nil {
		if !errors.Is(err, bench.ErrUnknownType) {
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
