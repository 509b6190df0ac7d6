package steps

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// EventJSON encodes an event as one JSON object with its Kind as "type"
// first: the line format of `dpulab run --json`.
func EventJSON(ev Event) ([]byte, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode %s event: %w", ev.Kind(), err)
	}
	head := fmt.Sprintf(`{"type":%q`, ev.Kind())
	if len(b) > 2 {
		head += ","
	}
	return append([]byte(head), b[1:]...), nil
}

// Printer renders events for a person reading a terminal or a CI log:
// step titles, the commands with their host, host-prefixed output, one
// line per finished bench run, and failures with host, last lines and hint.
// Samples and progress are left to the TUI.
type Printer struct {
	mu    sync.Mutex
	w     io.Writer
	steps []StepInfo
	dry   bool
}

// NewPrinter returns a Printer writing to w.
func NewPrinter(w io.Writer) *Printer { return &Printer{w: w} }

// Print renders one event; safe for concurrent use.
func (p *Printer) Print(ev Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.w
	switch ev := ev.(type) {
	case LabStarted:
		p.steps = ev.Steps
		p.dry = ev.DryRun
		fmt.Fprintf(w, "== %s: %s (run %s)\n", ev.Lab, ev.Title, ev.RunID)
		if ev.DryRun {
			fmt.Fprintln(w, "   dry run: commands are shown, nothing runs")
		}
		if ev.Resume > 0 && ev.Resume < len(ev.Steps) {
			fmt.Fprintf(w, "   resuming at step %d/%d (%s); --restart starts over\n", ev.Resume+1, len(ev.Steps), ev.Steps[ev.Resume].ID)
		}
	case StepStarted:
		title := ev.Step
		if ev.Index < len(p.steps) {
			info := p.steps[ev.Index]
			if info.Kind == ev.Step {
				title = info.Title + " (" + ev.Step + ")"
			} else {
				title = info.Title + " (" + ev.Step + ", " + info.Kind + ")"
			}
		}
		fmt.Fprintf(w, "\n[%d/%d] %s\n", ev.Index+1, len(p.steps), title)
		for _, c := range ev.Commands {
			prompt := "$"
			if c.Sudo {
				prompt = "# (sudo)"
			}
			fmt.Fprintf(w, "  %s%s %s\n", c.Host, prompt, c.Cmd)
		}
	case Output:
		host := ev.Line.Host
		if host == "" {
			host = "-"
		}
		fmt.Fprintf(w, "  %s | %s\n", host, ev.Line.Text)
	case StepFinished:
		switch ev.Status {
		case Done:
			fmt.Fprintf(w, "  ok: %s done in %s\n", ev.Step, ev.Duration.Round(time.Millisecond))
		case Skipped:
			if !p.dry {
				fmt.Fprintf(w, "  skipped: %s\n", ev.Step)
			}
		case Failed:
			fmt.Fprintf(w, "  FAILED: step %s", ev.Step)
			if ev.Host != "" {
				fmt.Fprintf(w, " on %s", ev.Host)
			}
			fmt.Fprintf(w, ": %s\n", ev.Err)
			if len(ev.Tail) > 0 {
				fmt.Fprintln(w, "  last lines:")
				for _, l := range ev.Tail {
					fmt.Fprintf(w, "    %s\n", l)
				}
			}
			if ev.Hint != "" {
				fmt.Fprintf(w, "  hint: %s\n", strings.TrimSpace(ev.Hint))
			}
		}
	case Prompt:
		fmt.Fprintf(w, "  ? %s\n", ev.Message)
	case LabFinished:
		if ev.Status == Done {
			fmt.Fprintf(w, "\n== %s finished in %s", ev.Lab, ev.Duration.Round(time.Second))
		} else {
			fmt.Fprintf(w, "\n== %s FAILED after %s: %s", ev.Lab, ev.Duration.Round(time.Second), ev.Err)
		}
		if ev.ResultsDir != "" {
			fmt.Fprintf(w, "\n   results: %s", ev.ResultsDir)
		}
		fmt.Fprintln(w)
	}
}
