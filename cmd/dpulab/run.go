package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps"
)

// runFlags are the flags of `dpulab run`.
type runFlags struct {
	inventory  string
	set        []string
	yes        bool
	json       bool
	results    string
	from, only string
	dryRun     bool
	rehearse   bool
	restart    bool
	labDirs    []string
	acceptNew  bool
	stateDir   string
	rawOutput  bool
	// started, when set, is given the run's engine before its first step
	// (the interrupter names its leftovers when cleanup is abandoned).
	started func(*steps.Engine)
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run LAB",
		Short: "Run a lab without the TUI (CI, scripting, rehearsal)",
		Long: `Run a lab headless: every step in order, progress on stderr, results in
$XDG_DATA_HOME/dpulab/results/LAB/TIMESTAMP (~/.local/share/dpulab/results/...;
results.json, samples.csv, report.md, report.html), shown before the first step.

Progress is saved after every step; running the same lab again resumes at the
first unfinished step (--restart starts over). Cleanup steps always run at the
end, also after a failure or Ctrl-C. Exit status: 0 every step passed, 1 a
step failed, 2 usage error (bad flag, bad --set, unknown lab or step, an
inventory that cannot be read), 130 interrupted (see below).

With --json, stdout carries the engine's events as JSON lines, the first a
{"type":"header","stream":"run","schema_version":N} line; FORMATS.md lists
every event.

Text from outside dpulab (the output of commands on lab hosts, titles, hints
and docs from lab files, errors) is printed without escape sequences or
control characters, so a host or a lab file cannot move the cursor, clear the
screen or set the terminal's clipboard. --raw-output prints the hosts'
command output as it came (colours, progress bars), for hosts you trust; lab
text and errors stay filtered.

Interrupts: SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal or SSH session
closed) stop the running step, then cleanup runs (it stops what the lab
started and removes its working directory) and the results are saved, as
for a failure. The same happens when stdout or stderr goes away (a pipe's
reader exited); from then on output is discarded. The exit status is then
128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP,
141 (SIGPIPE) for output that went away; a signal's status wins over lost
output's, as with "| tee" both come from the same Ctrl-C. A second signal
during cleanup only says it is still running; a third abandons cleanup and
exits at once, which may leave servers running (the next run of the lab
stops the ones saved progress recorded); it names each working directory it
may leave, with its host and the commands that remove it by hand, as does
a cleanup that could not finish (a host unreachable, its time up). Started
with SIGHUP ignored (nohup),
dpulab keeps ignoring it.`,
		Example: `  dpulab run quickstart
  dpulab run quickstart --set duration=2s --yes --json > events.jsonl
  dpulab run quickstart --dry-run
  dpulab run redis-dpu-uptv2 --inventory hosts.yaml --from compare`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLabSignals(cmd.Context(), args[0], f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.inventory, "inventory", "", "hosts.yaml mapping roles to lab hosts (default: every role is this machine)")
	fl.StringArrayVar(&f.set, "set", nil, "set a lab variable, NAME=VALUE (repeatable)")
	fl.BoolVar(&f.yes, "yes", false, "answer yes to confirmation prompts")
	fl.BoolVar(&f.json, "json", false, "print the events as JSON lines on stdout")
	fl.StringVar(&f.results, "results", "", "results folder (default $XDG_DATA_HOME/dpulab/results/LAB/TIMESTAMP, i.e. ~/.local/share/dpulab/results/...)")
	fl.StringVar(&f.from, "from", "", "start at this step id (ignores saved progress)")
	fl.StringVar(&f.only, "only", "", "run only this step id")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print each command, its host and sudo; run nothing")
	fl.BoolVar(&f.rehearse, "rehearse", false, "run without the lab's hardware: skip its hardware checks and label every number REHEARSAL")
	fl.BoolVar(&f.restart, "restart", false, "ignore saved progress and start over")
	fl.StringArrayVar(&f.labDirs, "lab-dir", nil, "also look for labs in DIR (repeatable)")
	fl.BoolVar(&f.acceptNew, "accept-new-host-keys", false, "trust and save unknown SSH host keys (never changed ones)")
	fl.StringVar(&f.stateDir, "state-dir", "", "where progress is saved (default $XDG_STATE_HOME/dpulab)")
	fl.BoolVar(&f.rawOutput, "raw-output", false, "print the hosts' command output with its escape sequences (colours, but also cursor moves, screen clears, clipboard writes): trusted hosts only")
	return cmd
}

// runLabSignals runs a lab the way `dpulab run` does in a process of its
// own: signals and lost output end it through cleanup (see signals.go), and
// its exit status says which one did.
func runLabSignals(ctx context.Context, id string, f runFlags, stdout, stderr io.Writer) error {
	it := &interrupter{exit: os.Exit}
	errOut := newBestEffortWriter(stderr, it.outputGone)
	it.notices = errOut
	// The interrupter handles SIGINT and SIGTERM itself, and cancels with
	// the signal as the cause (results.json's interrupted_by): main's
	// signal context, cancelled by the same signal, must not race it.
	ctx, stop := it.watch(context.WithoutCancel(ctx))
	f.started = func(e *steps.Engine) { it.setLeftovers(e.Leftovers) }
	err := runLab(ctx, id, f, newBestEffortWriter(stdout, it.outputGone), errOut)
	stop()
	if code, ok := it.exitCode(); ok {
		return exitError{Code: code}
	}
	return err
}

// parseSets reads --set NAME=VALUE flags.
func parseSets(sets []string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("--set %q: want NAME=VALUE", s)
		}
		out[k] = v
	}
	return out, nil
}

func runLab(ctx context.Context, id string, f runFlags, stdout, stderr io.Writer) error {
	vars, err := parseSets(f.set)
	if err != nil {
		return usageError{Err: err}
	}
	lab, err := labs.Find(id, labDirs(f.labDirs)...)
	if err != nil {
		// An id that names no lab is a usage error; a lab that exists but
		// does not load is the lab's (exit status 1, as lint says).
		if errors.Is(err, labs.ErrNoLab) {
			return usageError{Err: err}
		}
		return err
	}
	for _, st := range []struct{ flag, id string }{{"--from", f.from}, {"--only", f.only}} {
		if st.id != "" && !hasStep(lab, st.id) {
			return usageError{Err: fmt.Errorf("%s %s: lab %s has no such step (steps: %s)", st.flag, st.id, lab.ID, stepList(lab))}
		}
	}
	opts := steps.Options{
		Vars: vars, Yes: f.yes, DryRun: f.dryRun, Rehearse: f.rehearse, From: f.from, Only: f.only, Restart: f.restart,
		ResultsDir: f.results, StateDir: f.stateDir, AcceptNewHostKeys: f.acceptNew,
	}
	if f.inventory != "" {
		inv, err := loadInventory(f.inventory, labDirs(f.labDirs), lab)
		if err != nil {
			return usageError{Err: err}
		}
		opts.Inventory = inv
	}
	// A step the binaries on its hosts cannot run (this program here, the
	// agent on a lab host) is said before anything runs (the run then lists
	// it as not run, with the same reason).
	for _, n := range labs.TransportNotes(lab, steps.TransportJudge(opts.Inventory, opts.Agents)) {
		fmt.Fprintln(stderr, termtext.Line("note: "+n))
	}
	printer := steps.NewPrinterOptions(stderr, steps.PrinterOptions{RawOutput: f.rawOutput})
	var outMu sync.Mutex
	if f.json {
		writeHeader(stdout, streamRun, runSchemaVersion)
	}
	asker := newTermAsker(stderr)
	opts.Emit = func(ev steps.Event) {
		if f.json {
			if b, err := steps.EventJSON(ev); err == nil {
				outMu.Lock()
				stdout.Write(append(b, '\n'))
				outMu.Unlock()
			}
		}
		if p, ok := ev.(steps.Prompt); ok {
			printer.Print(ev)
			go asker.answer(p)
			return
		}
		if !f.json {
			printer.Print(ev)
			return
		}
		// With --json the stream is on stdout; stderr still tells a person
		// what is happening, without samples and progress.
		switch ev.(type) {
		case steps.Sample, steps.Progress:
		default:
			printer.Print(ev)
		}
	}
	eng, err := steps.New(lab, opts)
	if err != nil {
		// A --set the lab refuses is a usage error (exit status 2), as
		// --help and the README say; a lock held or a state file that
		// cannot be read is not.
		if ve := (*steps.VarError)(nil); errors.As(err, &ve) {
			return usageError{Err: err}
		}
		return err
	}
	if f.started != nil {
		f.started(eng)
	}
	if err := eng.Run(ctx); err != nil {
		// The printer has said what failed (step, host, last lines). A
		// value no step can be run with stops the run before anything
		// ran: a bad --set (exit status 2).
		if ve := (*steps.VarError)(nil); errors.As(err, &ve) {
			return exitError{Code: exitUsage}
		}
		return exitError{Code: exitFailed}
	}
	return nil
}

func hasStep(lab *labs.Lab, id string) bool {
	for i := range lab.Steps {
		if lab.Steps[i].ID == id {
			return true
		}
	}
	return false
}

func stepList(lab *labs.Lab) string {
	ids := make([]string, len(lab.Steps))
	for i := range lab.Steps {
		ids[i] = lab.Steps[i].ID
	}
	return strings.Join(ids, ", ")
}

// termAsker answers prompts from the terminal when there is one; without
// one it refuses, saying which flag would have answered.
type termAsker struct {
	mu  sync.Mutex
	w   io.Writer
	tty bool
	in  *bufio.Reader
}

func newTermAsker(w io.Writer) *termAsker {
	return &termAsker{w: w, tty: term.IsTerminal(int(os.Stdin.Fd())), in: bufio.NewReader(os.Stdin)}
}

func (a *termAsker) answer(p steps.Prompt) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.tty {
		switch p.Type {
		case steps.PromptConfirm:
			fmt.Fprintln(a.w, "  no terminal to ask: answering no (use --yes)")
			p.Reply(steps.Answer{Choice: "no"})
		case steps.PromptHostKey:
			fmt.Fprintf(a.w, "  no terminal to ask: refusing the %s key %s of %s (use --accept-new-host-keys after checking it)\n", termtext.Line(p.KeyType), termtext.Line(p.Fingerprint), termtext.Line(p.Host))
			p.Reply(steps.Answer{Choice: "refuse"})
		default:
			fix := p.Fix
			if fix == "" {
				fix = "use an SSH key or ssh-agent, or passwordless sudo"
			}
			fmt.Fprintf(a.w, "  no terminal to ask for %s: %s\n", termtext.Line(p.Message), termtext.Line(fix))
			p.Reply(steps.Answer{Choice: "cancel", NoTerminal: true})
		}
		return
	}
	switch p.Type {
	case steps.PromptConfirm:
		fmt.Fprint(a.w, "  go ahead? [y/N] ")
		line, _ := a.in.ReadString('\n')
		c := "no"
		if s := strings.ToLower(strings.TrimSpace(line)); s == "y" || s == "yes" {
			c = "yes"
		}
		p.Reply(steps.Answer{Choice: c})
	case steps.PromptHostKey:
		fmt.Fprintf(a.w, "  %s key fingerprint %s\n  trust it? [o]nce / [s]ave to known_hosts / [R]efuse: ", termtext.Line(p.KeyType), termtext.Line(p.Fingerprint))
		line, _ := a.in.ReadString('\n')
		c := "refuse"
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "o", "once":
			c = "once"
		case "s", "save":
			c = "save"
		}
		p.Reply(steps.Answer{Choice: c})
	case steps.PromptSecret:
		fmt.Fprint(a.w, "  (input hidden): ")
		b, err := term.ReadPassword(int(os.Stdin.Fd()))
		fmt.Fprintln(a.w)
		if err != nil {
			p.Reply(steps.Answer{Choice: "cancel"})
			return
		}
		p.Reply(steps.Answer{Choice: "ok", Secret: string(b)})
	}
}
