package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
)

// errFinished is what a review session answers to anything that would
// change the finished run.
var errFinished = errors.New("this run of the lab is finished: start it over (R) to run it again")

// reviewSession shows a finished run as it ended: its steps' saved
// outcomes, its docs, the commands it ran and its results. It starts no
// engine run, so opening a finished lab never deploys anything, creates no
// results folder and leaves the saved progress as it is; starting over is
// opening the lab again with Options.Restart.
type reviewSession struct {
	lab   *labs.Lab
	info  LabInfo
	steps []steps.StepInfo
	vars  map[string]string
	res   *results.Results
	// plan is a dry-run engine over the run's variables, for the commands
	// pane; planErr says why there is none.
	plan    *steps.Engine
	planErr error
}

// review opens l's finished run for review.
func (c *EngineCatalog) review(l *labs.Lab, info LabInfo) (Session, error) {
	st, err := steps.LoadLabState(c.StateDir, l.ID)
	if err != nil || st == nil {
		return nil, fmt.Errorf("lab %s: read its finished run: %w", l.ID, errors.Join(err, errors.New("no saved progress")))
	}
	s := &reviewSession{lab: l, info: info, vars: st.Vars}
	for _, ls := range l.Steps {
		status := results.Pending
		if ss, ok := st.Steps[ls.ID]; ok {
			status = ss.Status
		}
		s.steps = append(s.steps, steps.StepInfo{ID: ls.ID, Title: ls.Title, Kind: string(ls.Kind), Status: status})
	}
	if st.ResultsDir != "" {
		// No results (a lab without a bench, a folder since removed) is
		// fine: the compare view says there are none.
		if r, err := results.LoadResults(st.ResultsDir); err == nil && r.Lab == l.ID {
			s.res = r
		}
	}
	// A dry run saves nothing and writes no results: it only renders each
	// step's commands as this run's variables made them.
	s.plan, s.planErr = steps.New(l, steps.Options{
		Inventory: c.Inventory, Vars: st.Vars, StateDir: c.StateDir, DryRun: true,
		AcceptNewHostKeys: c.AcceptNewHostKeys, Binary: c.Binary,
	})
	return s, nil
}

func (s *reviewSession) Info() LabInfo { return s.info }
func (s *reviewSession) Review() bool  { return true }

// Steps returns the finished run's outcome of each step.
func (s *reviewSession) Steps() []steps.StepInfo { return append([]steps.StepInfo(nil), s.steps...) }

// Resume is the first step: a review reads from the top.
func (s *reviewSession) Resume() int { return 0 }

func (s *reviewSession) Doc(i int) string {
	if i < 0 || i >= len(s.lab.Steps) {
		return ""
	}
	d, err := s.lab.Doc(&s.lab.Steps[i])
	if err != nil {
		return fmt.Sprintf("_Cannot read this step's text: %v_", err)
	}
	return d
}

func (s *reviewSession) Plan(i int) ([]steps.PlannedCommand, error) {
	if s.plan == nil {
		return nil, s.planErr
	}
	return s.plan.Plan(i)
}

func (s *reviewSession) Variables() []Variable {
	var out []Variable
	for _, v := range s.lab.Variables {
		val, ok := s.vars[v.Name]
		if !ok {
			val = v.Default
		}
		out = append(out, Variable{Name: v.Name, Type: string(v.Type), Default: val, Min: v.Min, Max: v.Max, Values: v.Values, Description: v.Description})
	}
	return out
}

func (s *reviewSession) ValidateVar(name, value string) error {
	v, ok := s.lab.Var(name)
	if !ok {
		return errors.New("unknown variable " + name)
	}
	return v.Check(value)
}

func (s *reviewSession) SetVars(map[string]string) error { return errFinished }

// RunStep runs nothing: the step keeps the finished run's outcome.
func (s *reviewSession) RunStep(_ context.Context, i int) results.Status {
	if i < 0 || i >= len(s.steps) {
		return results.Pending
	}
	return s.steps[i].Status
}

func (s *reviewSession) Skip(int)                      {}
func (s *reviewSession) Cleanup(context.Context) error { return nil }

// Finish writes nothing: the finished run's results are where it left them.
func (s *reviewSession) Finish(context.Context) (string, error) { return s.info.ResultsDir, nil }

// Leave implements Session: a finished run shown for review stays as it
// was written.
func (s *reviewSession) Leave(context.Context, string) (string, error) { return "", nil }

// Results returns the finished run's results (nil when it wrote none).
func (s *reviewSession) Results() *results.Results { return s.res }

func (s *reviewSession) Close() error { return nil }

// Shell opens nothing: the run is finished.
func (s *reviewSession) Shell(int) (runner.Shell, error) { return runner.Shell{}, errFinished }

// CheckTask checks nothing: the step keeps the finished run's outcome.
func (s *reviewSession) CheckTask(ctx context.Context, i int) results.Status {
	return s.RunStep(ctx, i)
}

// Solution is the task step's answer with the run's variables.
func (s *reviewSession) Solution(i int) ([]steps.TaskSolution, error) {
	if s.plan == nil {
		return nil, s.planErr
	}
	return s.plan.Solution(i)
}

// Rendered are the files the step wrote, rendered again with the run's
// variables.
func (s *reviewSession) Rendered(i int) ([]steps.RenderedFile, int, error) {
	if s.plan == nil {
		return nil, 0, s.planErr
	}
	return s.plan.Rendered(i)
}
