package session

import (
	"context"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
)

// Sanitize returns a Catalog whose every string reaches the TUI safe to
// draw: lab and step titles, summaries, docs (before glamour renders them),
// commands, variables, the engine's events (prompts, hints, failures' last
// lines) and errors are termtext.Plain; command output keeps the safe SGR
// colours for the output pane. This is where outside text — lab files,
// remote hosts, saved progress — enters the TUI, so the pages draw what they
// get without filtering it again. Sanitize(Sanitize(c)) wraps once.
func Sanitize(c Catalog) Catalog {
	if c == nil {
		return nil
	}
	if _, ok := c.(cleanCatalog); ok {
		return c
	}
	return cleanCatalog{c}
}

type cleanCatalog struct{ c Catalog }

func (c cleanCatalog) Labs() ([]LabInfo, error) {
	ls, err := c.c.Labs()
	out := make([]LabInfo, len(ls))
	for i, l := range ls {
		out[i] = cleanInfo(l)
	}
	return out, cleanErr(err)
}

func (c cleanCatalog) Open(id string, opts Options) (Session, error) {
	if emit := opts.Emit; emit != nil {
		opts.Emit = func(ev steps.Event) { emit(CleanEvent(ev)) }
	}
	s, err := c.c.Open(id, opts)
	if err != nil {
		return nil, cleanErr(err)
	}
	return cleanSession{s}, nil
}

// cleanSession is a Session whose strings are safe to draw.
type cleanSession struct{ s Session }

func (s cleanSession) Info() LabInfo           { return cleanInfo(s.s.Info()) }
func (s cleanSession) Steps() []steps.StepInfo { return cleanSteps(s.s.Steps()) }
func (s cleanSession) Resume() int             { return s.s.Resume() }
func (s cleanSession) Doc(i int) string        { return termtext.Plain(s.s.Doc(i)) }
func (s cleanSession) Plan(i int) ([]steps.PlannedCommand, error) {
	p, err := s.s.Plan(i)
	return clean(p), cleanErr(err)
}
func (s cleanSession) Variables() []Variable { return clean(s.s.Variables()) }
func (s cleanSession) ValidateVar(name, value string) error {
	return cleanErr(s.s.ValidateVar(name, value))
}
func (s cleanSession) SetVars(vars map[string]string) error { return cleanErr(s.s.SetVars(vars)) }
func (s cleanSession) RunStep(ctx context.Context, i int) results.Status {
	return s.s.RunStep(ctx, i)
}
func (s cleanSession) Skip(i int)                        { s.s.Skip(i) }
func (s cleanSession) Cleanup(ctx context.Context) error { return cleanErr(s.s.Cleanup(ctx)) }
func (s cleanSession) Finish(ctx context.Context) (string, error) {
	dir, err := s.s.Finish(ctx)
	return dir, cleanErr(err)
}
func (s cleanSession) Leave(ctx context.Context, by string) (string, error) {
	dir, err := s.s.Leave(ctx, by)
	return dir, cleanErr(err)
}
func (s cleanSession) Results() *results.Results { return CleanResults(s.s.Results()) }
func (s cleanSession) Close() error              { return cleanErr(s.s.Close()) }
func (s cleanSession) Review() bool              { return s.s.Review() }

// Shell is run, not drawn: its argv stays as it is (cleaning could change
// a path); its error is drawn.
func (s cleanSession) Shell(i int) (runner.Shell, error) {
	sh, err := s.s.Shell(i)
	return sh, cleanErr(err)
}
func (s cleanSession) CheckTask(ctx context.Context, i int) results.Status {
	return s.s.CheckTask(ctx, i)
}
func (s cleanSession) Solution(i int) ([]steps.TaskSolution, error) {
	sol, err := s.s.Solution(i)
	return clean(sol), cleanErr(err)
}

// Rendered files come from the lab's templates and variables: their
// paths, hosts and content are Plain (content keeps its newlines and tabs).
func (s cleanSession) Rendered(i int) ([]steps.RenderedFile, int, error) {
	files, more, err := s.s.Rendered(i)
	return clean(files), more, cleanErr(err)
}

// cleanErr returns err with a message safe to draw (remote stderr and lab
// text end up in errors); errors.Is and As still see the original.
func cleanErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if termtext.Safe(msg) {
		return err
	}
	return &cleanError{msg: termtext.Plain(msg), err: err}
}

type cleanError struct {
	msg string
	err error
}

func (e *cleanError) Error() string { return e.msg }
func (e *cleanError) Unwrap() error { return e.err }
