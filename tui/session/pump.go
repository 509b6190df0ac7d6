package session

import (
	"strconv"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
)

// EventsMsg is a batch of engine events, delivered at most every Interval.
type EventsMsg []steps.Event

// Interval is the shortest time between two event batches: the engine may
// emit thousands of output lines a second, the screen redraws at most ten
// times a second.
const Interval = 100 * time.Millisecond

// maxPending bounds the events held while the screen catches up; beyond it
// the oldest output lines are dropped (and counted), never samples, prompts
// or step changes.
const maxPending = 5000

// Pump collects events from engine goroutines and hands them to the
// bubbletea loop in batches. Emit never blocks the engine.
type Pump struct {
	mu      sync.Mutex
	buf     []steps.Event
	dropped int
	notify  chan struct{}
	last    time.Time
}

// NewPump returns an empty pump.
func NewPump() *Pump { return &Pump{notify: make(chan struct{}, 1)} }

// Emit queues ev; safe from any goroutine.
func (p *Pump) Emit(ev steps.Event) {
	p.mu.Lock()
	p.buf = append(p.buf, ev)
	if len(p.buf) > maxPending {
		p.dropOutput()
	}
	p.mu.Unlock()
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// dropOutput removes the older half of the pending output lines.
func (p *Pump) dropOutput() {
	kept := p.buf[:0]
	drop := len(p.buf) / 2
	for _, ev := range p.buf {
		if _, ok := ev.(steps.Output); ok && drop > 0 {
			drop--
			p.dropped++
			continue
		}
		kept = append(kept, ev)
	}
	p.buf = kept
}

// Discard drops the events not delivered yet: when a session closes, what
// it still had to say must not reach the next session's screen.
func (p *Pump) Discard() {
	p.mu.Lock()
	p.buf = nil
	p.dropped = 0
	p.mu.Unlock()
}

// Wait returns a command that delivers the next batch; the root issues it
// again after each EventsMsg.
func (p *Pump) Wait() tea.Cmd {
	return func() tea.Msg {
		<-p.notify
		p.mu.Lock()
		since := time.Since(p.last)
		p.mu.Unlock()
		if since < Interval {
			time.Sleep(Interval - since)
		}
		p.mu.Lock()
		batch := p.buf
		p.buf = nil
		if p.dropped > 0 {
			batch = append([]steps.Event{steps.Output{Line: runner.Line{Host: "dpulab", Stream: runner.Stderr,
				Text: "… " + strconv.Itoa(p.dropped) + " output lines dropped to keep up (the full output is in the step's log)"}}}, batch...)
			p.dropped = 0
		}
		p.last = time.Now()
		p.mu.Unlock()
		return EventsMsg(batch)
	}
}
