package steps

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/termtext"
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
//
// Everything it prints that came from outside the binary (the lab's titles,
// commands and hints, remote output, errors quoting either) goes through
// termtext.Plain: no escape sequence from a lab file or a host reaches the
// operator's terminal.
type Printer struct {
	mu    sync.Mutex
	w     io.Writer
	o     PrinterOptions
	steps []StepInfo
	dry   bool
}

// PrinterOptions tune a Printer.
type PrinterOptions struct {
	// RawOutput passes the hosts' command output through unfiltered
	// (`dpulab run --raw-output`), for a person who trusts the hosts and
	// wants their colours. Lab text and errors are filtered regardless.
	RawOutput bool
}

// NewPrinter returns a Printer writing to w.
func NewPrinter(w io.Writer) *Printer { return NewPrinterOptions(w, PrinterOptions{}) }

// NewPrinterOptions returns a Printer writing to w with o.
func NewPrinterOptions(w io.Writer, o PrinterOptions) *Printer { return &Printer{w: w, o: o} }

// output filters a line of a host's output (see RawOutput).
func (p *Printer) output(s string) string {
	if p.o.RawOutput {
		return s
	}
	return termtext.Plain(s)
}

// Print renders one event; safe for concurrent use.
func (p *Printer) Print(ev Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.w
	clean := termtext.Plain
	switch ev := ev.(type) {
	case LabStarted:
		p.steps = ev.Steps
		p.dry = ev.DryRun
		fmt.Fprintf(w, "== %s: %s (run %s)\n", clean(ev.Lab), clean(ev.Title), ev.RunID)
		if ev.Rehearsal != "" {
			fmt.Fprintf(w, "   REHEARSAL: no DPU in this run (%s); its numbers are not a DPU result\n", clean(ev.Rehearsal))
		}
		if ev.SoftwareRDMA != "" {
			fmt.Fprintf(w, "   %s\n", clean(softwareRDMALine(ev.SoftwareRDMA)))
		}
		if ev.DryRun {
			fmt.Fprintln(w, "   dry run: commands are shown, nothing runs")
		}
		if ev.ResultsDir != "" {
			fmt.Fprintf(w, "   results go to %s\n", clean(ev.ResultsDir))
		}
		if ev.Resume > 0 && ev.Resume < len(ev.Steps) {
			fmt.Fprintf(w, "   resuming at step %d/%d (%s); --restart starts over\n", ev.Resume+1, len(ev.Steps), clean(ev.Steps[ev.Resume].ID))
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
		fmt.Fprintf(w, "\n[%d/%d] %s\n", ev.Index+1, len(p.steps), clean(title))
		for _, c := range ev.Commands {
			prompt := "$"
			if c.Sudo {
				prompt = "# (sudo)"
			}
			fmt.Fprintf(w, "  %s%s %s\n", clean(c.Host), prompt, clean(c.Cmd))
		}
	case Output:
		host := ev.Line.Host
		if host == "" {
			host = "-"
		}
		fmt.Fprintf(w, "  %s | %s\n", clean(host), p.output(ev.Line.Text))
	case StepFinished:
		switch ev.Status {
		case results.Done:
			fmt.Fprintf(w, "  ok: %s done in %s\n", clean(ev.Step), ev.Duration.Round(time.Millisecond))
		case results.Skipped:
			if !p.dry {
				fmt.Fprintf(w, "  skipped: %s\n", clean(ev.Step))
			}
		case results.Interrupted:
			fmt.Fprintf(w, "  interrupted: step %s (stopped mid-way; it runs again when the lab is resumed)\n", clean(ev.Step))
		case results.Failed:
			fmt.Fprintf(w, "  FAILED: step %s", clean(ev.Step))
			if ev.Host != "" {
				fmt.Fprintf(w, " on %s", clean(ev.Host))
			}
			fmt.Fprintf(w, ": %s\n", clean(ev.Err))
			if len(ev.Tail) > 0 {
				fmt.Fprintln(w, "  last lines:")
				for _, l := range ev.Tail {
					fmt.Fprintf(w, "    %s\n", p.output(l))
				}
			}
			if ev.Hint != "" {
				fmt.Fprintf(w, "  hint: %s\n", clean(strings.TrimSpace(ev.Hint)))
			}
		}
	case SoftwareRDMAFound:
		fmt.Fprintf(w, "  %s\n", clean(softwareRDMALine(ev.Devices)))
	case Prompt:
		fmt.Fprintf(w, "  ? %s\n", clean(ev.Message))
	case LabFinished:
		switch {
		case ev.Status == results.Done && p.dry:
			// A dry run's summary must not read as a run's.
			fmt.Fprintf(w, "\n== %s DRY RUN done: every step planned and shown, nothing ran", clean(ev.Lab))
		case ev.Status == results.Done:
			fmt.Fprintf(w, "\n== %s finished in %s", clean(ev.Lab), ev.Duration.Round(time.Second))
		case ev.Run == results.RunInterrupted:
			fmt.Fprintf(w, "\n== %s INTERRUPTED after %s: %s", clean(ev.Lab), ev.Duration.Round(time.Second), clean(ev.Err))
		default:
			fmt.Fprintf(w, "\n== %s FAILED after %s: %s", clean(ev.Lab), ev.Duration.Round(time.Second), clean(ev.Err))
		}
		if ev.Rehearsal != "" {
			fmt.Fprintf(w, "\n   REHEARSAL: no DPU in this run (%s)", clean(ev.Rehearsal))
		}
		if ev.SoftwareRDMA != "" {
			fmt.Fprintf(w, "\n   %s", clean(softwareRDMALine(ev.SoftwareRDMA)))
		}
		// Each variant's headline figure, labelled from its Figures: a
		// real variant beside emulated ones carries no EMULATION.
		for _, v := range ev.Variants {
			fmt.Fprintf(w, "\n   %s", clean(v.Line()))
		}
		for _, l := range ev.Leftovers {
			fmt.Fprintf(w, "\n   CLEANUP DID NOT FINISH: %s", clean(l.String()))
		}
		if ev.ResultsDir != "" {
			fmt.Fprintf(w, "\n   results (%s): %s", cmp.Or(string(ev.Run), "written"), clean(ev.ResultsDir))
			fmt.Fprintf(w, "\n   report: %s", clean(filepath.Join(ev.ResultsDir, results.ReportHTMLFile)))
		}
		fmt.Fprintln(w)
	}
}

// softwareRDMALine is the headless header's and summary's line for a run
// over software RDMA devices devs.
func softwareRDMALine(devs string) string {
	return results.RunKind(&results.Results{SoftwareRDMA: devs})
}
