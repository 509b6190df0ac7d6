// Package sessiontest scripts a session.Session for the TUI's tests: each
// step emits the steps.Event values it is given (the same types the engine
// emits) and ends with a chosen status. It runs no commands; the end-to-end
// test in package tui drives the real engine instead.
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/session"
)

// Step is one scripted step.
type Step struct {
	Info  steps.StepInfo
	Doc   string
	Plan  []steps.PlannedCommand
	Emit  []steps.Event
	Final results.Status
	// Err, Hint, Host, Cmd (the command that failed) and Tail (its last
	// lines) go into the StepFinished of a failed step.
	Err, Hint, Host, Cmd string
	Tail                 []string
	// Block, when non-nil, keeps the step running until it is closed or
	// the context ends (to show "a step running").
	Block chan struct{}
}

// Fake is a scripted lab.
type Fake struct {
	LabInfo session.LabInfo
	Script  []Step
	Vars    []session.Variable
	// PlanVars, when set, plans step i with the values given (the lab's
	// defaults overlaid with SetVars'), as the engine does: Plan answers
	// with it, so a test sees which steps a change of values affects.
	PlanVars func(i int, vars map[string]string) []steps.PlannedCommand
	Res      *results.Results
	// ResultsRoot, when set, makes Finish create a real results folder
	// per run under ResultsRoot/LAB/ (else it names one that does not
	// exist).
	ResultsRoot string

	mu       sync.Mutex
	emit     func(steps.Event)
	review   bool
	Ran      []int
	Skipped  []int
	SetTo    map[string]string
	Cleaned  int
	Finished int
	// Left records each Leave's by, in order.
	Left    []string
	Answers []steps.Answer
	// Tasks scripts task steps and rendered files (task.go).
	Tasks
}

// Catalog serves Fakes by id.
type Catalog struct {
	Fakes []*Fake
}

// Labs implements session.Catalog.
func (c *Catalog) Labs() ([]session.LabInfo, error) {
	var out []session.LabInfo
	for _, f := range c.Fakes {
		out = append(out, f.Info())
	}
	return out, nil
}

// Open implements session.Catalog.
func (c *Catalog) Open(id string, opts session.Options) (session.Session, error) {
	for _, f := range c.Fakes {
		if f.LabInfo.ID == id {
			f.mu.Lock()
			f.emit = opts.Emit
			// As the engine's catalogue: a finished lab opens for
			// review unless the person starts it over.
			f.review = f.LabInfo.Finished && !opts.Restart
			if opts.Restart {
				for i := range f.Script {
					f.Script[i].Info.Status = results.Pending
				}
				f.LabInfo.Finished = false
			}
			f.mu.Unlock()
			return f, nil
		}
	}
	return nil, errors.New("no lab " + id)
}

// Info implements session.Session.
func (f *Fake) Info() session.LabInfo {
	i := f.LabInfo
	i.Steps = len(f.Script)
	return i
}

// Steps implements session.Session.
func (f *Fake) Steps() []steps.StepInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]steps.StepInfo, len(f.Script))
	for i, s := range f.Script {
		out[i] = s.Info
	}
	return out
}

// Resume implements session.Session.
func (f *Fake) Resume() int {
	for i, s := range f.Steps() {
		if s.Status != results.Done && s.Status != results.Skipped {
			return i
		}
	}
	return len(f.Script)
}

// Doc implements session.Session.
func (f *Fake) Doc(i int) string { return f.Script[i].Doc }

// Plan implements session.Session.
func (f *Fake) Plan(i int) ([]steps.PlannedCommand, error) {
	if f.PlanVars != nil {
		vals := map[string]string{}
		for _, v := range f.Variables() {
			vals[v.Name] = v.Default
		}
		return f.PlanVars(i, vals), nil
	}
	return f.Script[i].Plan, nil
}

// Variables implements session.Session: the lab's, with the values
// SetVars set as their current value (Default), as the engine's.
func (f *Fake) Variables() []session.Variable {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := append([]session.Variable(nil), f.Vars...)
	for i, v := range out {
		if s, ok := f.SetTo[v.Name]; ok {
			out[i].Default = s
		}
	}
	return out
}

// ValidateVar accepts anything but "bad" and the empty string.
func (f *Fake) ValidateVar(name, value string) error {
	if value == "" || value == "bad" {
		return errors.New(name + " must be a number between 1 and 64")
	}
	return nil
}

// SetVars implements session.Session.
func (f *Fake) SetVars(v map[string]string) error {
	f.mu.Lock()
	f.SetTo = v
	f.mu.Unlock()
	return nil
}

func (f *Fake) send(ev steps.Event) {
	f.mu.Lock()
	emit := f.emit
	f.mu.Unlock()
	if emit != nil {
		emit(ev)
	}
}

// RunStep emits the step's script; a Prompt in it waits for its answer.
func (f *Fake) RunStep(ctx context.Context, i int) results.Status {
	s := f.Script[i]
	f.mu.Lock()
	f.Ran = append(f.Ran, i)
	f.Script[i].Info.Status = results.Running
	f.mu.Unlock()
	f.send(steps.StepStarted{Step: s.Info.ID, Index: i, Commands: s.Plan})
	for _, ev := range s.Emit {
		if p, ok := ev.(steps.Prompt); ok {
			got := make(chan steps.Answer, 1)
			p.Reply = func(a steps.Answer) { got <- a }
			f.send(p)
			select {
			case a := <-got:
				f.mu.Lock()
				f.Answers = append(f.Answers, a)
				f.mu.Unlock()
			case <-ctx.Done():
				return f.finish(i, results.Failed, "cancelled", "", nil)
			}
			continue
		}
		f.send(ev)
	}
	if s.Block != nil {
		select {
		case <-s.Block:
		case <-ctx.Done():
			return f.finish(i, results.Failed, "cancelled", "", nil)
		}
	}
	return f.finishStep(i, s)
}

func (f *Fake) finishStep(i int, s Step) results.Status {
	f.mu.Lock()
	f.Script[i].Info.Status = s.Final
	id := f.Script[i].Info.ID
	f.mu.Unlock()
	f.send(steps.StepFinished{Step: id, Index: i, Status: s.Final, Err: s.Err, Hint: s.Hint, Host: s.Host, Cmd: s.Cmd, Tail: s.Tail})
	return s.Final
}

func (f *Fake) finish(i int, st results.Status, err, hint string, tail []string) results.Status {
	return f.finishStep(i, Step{Final: st, Err: err, Hint: hint, Tail: tail})
}

// Skip implements session.Session.
func (f *Fake) Skip(i int) {
	f.mu.Lock()
	f.Skipped = append(f.Skipped, i)
	f.Script[i].Info.Status = results.Skipped
	f.mu.Unlock()
}

// Cleanup implements session.Session.
func (f *Fake) Cleanup(context.Context) error {
	f.mu.Lock()
	f.Cleaned++
	f.mu.Unlock()
	return nil
}

// Leave implements session.Session: it records by and writes nothing.
func (f *Fake) Leave(_ context.Context, by string) (string, error) {
	f.mu.Lock()
	f.Left = append(f.Left, by)
	f.mu.Unlock()
	return "", nil
}

// Finish implements session.Session.
func (f *Fake) Finish(context.Context) (string, error) {
	f.mu.Lock()
	f.Finished++
	n := f.Finished
	f.mu.Unlock()
	dir := "results/" + f.LabInfo.ID + "/test"
	if f.ResultsRoot != "" {
		// A real folder per run, named like the engine's (sortable).
		dir = filepath.Join(f.ResultsRoot, f.LabInfo.ID, fmt.Sprintf("run%04d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte("{}\n"), 0o644); err != nil {
			return "", err
		}
	}
	f.send(steps.LabFinished{Lab: f.LabInfo.ID, Status: results.Done, ResultsDir: dir})
	return dir, nil
}

// Results implements session.Session.
func (f *Fake) Results() *results.Results { return f.Res }

// Close implements session.Session.
func (f *Fake) Close() error { return nil }

// Review implements session.Session: set when a Finished lab was opened
// without Restart. RunStep then still runs its script (the page must not
// call it; Ran records it if it does).
func (f *Fake) Review() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.review
}

// Counts returns how many cleanups and finishes ran (race-free).
func (f *Fake) Counts() (cleaned, finished int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Cleaned, f.Finished
}

// AnswersSeen returns a copy of the answers the fake's steps got, once
// there are at least n of them or within has passed: the page shows an
// answer as it sends it, a moment before the step's goroutine records it,
// so a test reads them through here (under the lock), never f.Answers.
func (f *Fake) AnswersSeen(n int, within time.Duration) []steps.Answer {
	deadline := time.Now().Add(within)
	for {
		f.mu.Lock()
		got := append([]steps.Answer(nil), f.Answers...)
		f.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}
