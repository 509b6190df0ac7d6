package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
)

// EngineCatalog is the real catalogue: labs from package labs (embedded
// and --lab-dir), run by the steps engine.
type EngineCatalog struct {
	// LabDirs are searched before the embedded labs.
	LabDirs []string
	// Inventory maps roles to hosts (nil: every role is this machine).
	Inventory *runner.Inventory
	// StateDir holds saved progress ("" = default).
	StateDir string
	// AcceptNewHostKeys trusts unknown host keys without asking.
	AcceptNewHostKeys bool
	// Rehearse runs labs without their hardware (steps.Options.Rehearse).
	Rehearse bool
	// Binary is the dpulab executable the engine runs and uploads
	// ("" = the running executable).
	Binary string

	// mu guards open: the sessions opened and not yet closed with nothing
	// left on their hosts (Leftovers).
	mu   sync.Mutex
	open map[*engineSession]bool
}

// Leftovers is what the runs of sessions this catalogue opened may leave
// on their hosts: those still open, and those closed after a cleanup that
// did not finish (steps.Engine.Leftovers). dpulab says it when cleanup is
// abandoned, or did not finish, after the screen closed.
func (c *EngineCatalog) Leftovers() []steps.Leftover {
	c.mu.Lock()
	ss := make([]*engineSession, 0, len(c.open))
	for s := range c.open {
		ss = append(ss, s)
	}
	c.mu.Unlock()
	var out []steps.Leftover
	for _, s := range ss {
		out = append(out, s.e.Leftovers()...)
	}
	return out
}

// track records s as open, until it is closed with nothing left.
func (c *EngineCatalog) track(s *engineSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = map[*engineSession]bool{}
	}
	c.open[s] = true
}

func (c *EngineCatalog) closed(s *engineSession) {
	if len(s.e.Leftovers()) > 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.open, s)
}

// all returns the catalogue, with each unreadable lab directory as an
// entry that shows its error.
func (c *EngineCatalog) all() ([]*labs.Lab, []LabInfo, error) {
	ls, unreadable, err := labs.Catalogue(c.LabDirs...)
	if err != nil {
		return nil, nil, err
	}
	var broken []LabInfo
	for _, u := range unreadable {
		broken = append(broken, LabInfo{ID: u.Dir, Title: u.Dir, Err: firstLine(u.Err.Error()), ResumeAt: -1})
	}
	return ls, broken, nil
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i] + " …"
		}
	}
	return s
}

// info describes a lab for the picker, with saved progress.
func (c *EngineCatalog) info(l *labs.Lab) LabInfo {
	in := LabInfo{ID: l.ID, Title: l.Title, Summary: l.Summary, Duration: l.Duration, Roles: l.RoleNames(), Steps: len(l.Steps), ResumeAt: -1, Local: c.Inventory == nil,
		BoothConfirm: l.Booth.AutoConfirm}
	for _, n := range labs.TransportProblems(l, steps.TransportJudge(c.Inventory, nil)) {
		if n.Cannot {
			in.CannotRun = append(in.CannotRun, fmt.Sprintf("%s (%s)", n.Reason, plural(len(n.Where), "step or variant", "steps or variants")))
		}
	}
	c.hardware(l, &in)
	for _, r := range in.Roles {
		if _, err := c.Inventory.HostsFor(r); err != nil && !l.OptionalRole(r) {
			in.Missing = append(in.Missing, r)
		}
	}
	st, err := steps.LoadLabState(c.StateDir, l.ID)
	if err != nil {
		in.StateErr = err.Error()
	}
	if err == nil && st != nil {
		in.ResumeAt = len(l.Steps)
		for i, s := range l.Steps {
			ss, ok := st.Steps[s.ID]
			if !ok || (ss.Status != results.Done && ss.Status != results.Skipped) {
				in.ResumeAt = i
				break
			}
		}
		// Every step done or skipped is a finished run too (progress saved
		// before runs recorded their status): the engine starts either
		// over, so neither may read as "resume".
		in.Finished = st.Finished() || in.ResumeAt == len(l.Steps)
		if in.Finished {
			in.ResumeAt = len(l.Steps)
			in.ResultsDir = st.ResultsDir
			in.Updated = st.Updated
		}
	}
	return in
}

// Labs implements Catalog.
func (c *EngineCatalog) Labs() ([]LabInfo, error) {
	ls, broken, err := c.all()
	if err != nil {
		return nil, err
	}
	var out []LabInfo
	for _, l := range ls {
		out = append(out, c.info(l))
	}
	return append(out, broken...), nil
}

// Open implements Catalog.
func (c *EngineCatalog) Open(id string, opts Options) (Session, error) {
	l, err := labs.Find(id, c.LabDirs...)
	if err != nil {
		return nil, err
	}
	info := c.info(l)
	if info.Finished && !opts.Restart {
		return c.review(l, info)
	}
	if opts.Restart || info.Finished {
		// The saved run is not the one this session runs.
		info.ResumeAt, info.Finished, info.ResultsDir, info.Updated = -1, false, "", time.Time{}
	}
	e, err := steps.New(l, steps.Options{
		Inventory:         c.Inventory,
		Vars:              opts.Vars,
		Restart:           opts.Restart,
		StateDir:          c.StateDir,
		Emit:              opts.Emit,
		AcceptNewHostKeys: c.AcceptNewHostKeys,
		Rehearse:          c.Rehearse,
		Binary:            c.Binary,
	})
	if err != nil {
		return nil, err
	}
	s := &engineSession{lab: l, e: e, info: info, cat: c}
	c.track(s)
	return s, nil
}

// engineSession adapts *steps.Engine to Session.
type engineSession struct {
	lab  *labs.Lab
	e    *steps.Engine
	info LabInfo
	cat  *EngineCatalog
}

func (s *engineSession) Info() LabInfo                     { return s.info }
func (s *engineSession) Steps() []steps.StepInfo           { return s.e.Steps() }
func (s *engineSession) Resume() int                       { return s.e.Resume() }
func (s *engineSession) Results() *results.Results         { return s.e.Results() }
func (s *engineSession) Skip(i int)                        { s.e.Skip(i) }
func (s *engineSession) SetVars(v map[string]string) error { return s.e.SetVars(v) }

func (s *engineSession) Doc(i int) string {
	if i < 0 || i >= len(s.lab.Steps) {
		return ""
	}
	d, err := s.lab.Doc(&s.lab.Steps[i])
	if err != nil {
		return fmt.Sprintf("_Cannot read this step's text: %v_", err)
	}
	return d
}

func (s *engineSession) Plan(i int) ([]steps.PlannedCommand, error) { return s.e.Plan(i) }

func (s *engineSession) Variables() []Variable {
	cur := s.e.Vars()
	var out []Variable
	for _, v := range s.lab.Variables {
		val, ok := cur[v.Name]
		if !ok {
			val = v.Default
		}
		out = append(out, Variable{Name: v.Name, Type: string(v.Type), Default: val, Min: v.Min, Max: v.Max, Values: v.Values, Description: v.Description})
	}
	return out
}

func (s *engineSession) ValidateVar(name, value string) error {
	v, ok := s.lab.Var(name)
	if !ok {
		return errors.New("unknown variable " + name)
	}
	return v.Check(value)
}

func (s *engineSession) RunStep(ctx context.Context, i int) results.Status {
	return s.e.RunStep(ctx, i)
}
func (s *engineSession) Cleanup(ctx context.Context) error          { return s.e.Cleanup(ctx) }
func (s *engineSession) Finish(ctx context.Context) (string, error) { return s.e.Finish(ctx) }
func (s *engineSession) Leave(ctx context.Context, by string) (string, error) {
	return s.e.Leave(ctx, by)
}

func (s *engineSession) Shell(i int) (runner.Shell, error) { return s.e.Shell(i) }
func (s *engineSession) CheckTask(ctx context.Context, i int) results.Status {
	return s.e.CheckTask(ctx, i)
}
func (s *engineSession) Solution(i int) ([]steps.TaskSolution, error) { return s.e.Solution(i) }
func (s *engineSession) Rendered(i int) ([]steps.RenderedFile, int, error) {
	return s.e.Rendered(i)
}

// Close releases nothing more: Cleanup closes the engine's connections.
// The catalogue forgets the session unless its cleanup left something.
func (s *engineSession) Close() error {
	s.cat.closed(s)
	return nil
}

// Review implements Session: an engine session runs.
func (s *engineSession) Review() bool { return false }

// plural is "1 thing" or "N things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
