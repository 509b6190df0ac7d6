// Package session is the TUI's view of the lab catalogue and of one open lab.
// The real implementation (engine.go) wraps package labs and the steps
// engine; tests script one with plain steps.Event values. The TUI never runs
// a command itself: it calls a Session, in a goroutine, and renders the
// events the engine emits.
//
// Everything a Catalog or Session hands the TUI comes from outside the
// binary (lab files, remote hosts, saved progress); Sanitize is the one
// place where it is made safe to draw, and the root wraps its catalogue with
// it. A finished lab opens as a review session (review.go) unless the person
// starts it over.
package session

import (
	"context"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
)

// LabInfo is what the picker shows about a lab.
type LabInfo struct {
	ID       string
	Title    string
	Summary  string
	Duration time.Duration
	// Roles are the roles the lab needs; Missing those the inventory does
	// not cover (empty: the lab can run).
	Roles   []string
	Missing []string
	// Local is set when there is no inventory: every role is this machine.
	Local bool
	// Steps is the number of steps; ResumeAt the index of the first
	// unfinished one when saved progress exists, -1 otherwise.
	Steps    int
	ResumeAt int
	// Finished is set when the saved progress is a run that completed:
	// opening the lab shows that run for review (Session.Review) and only
	// Options.Restart starts it over. ResultsDir is where it wrote its
	// results, Updated when it ended.
	Finished   bool
	ResultsDir string
	Updated    time.Time
	// BoothConfirm lists the steps whose confirmation booth mode may
	// answer with yes on its own (the lab's booth: auto_confirm); never
	// host keys, never passwords.
	BoothConfirm []string
	// CannotRun says why some of the lab's steps or variants cannot run
	// with this binary (labs.TransportProblems: a transport it was built
	// without), one entry per reason, each naming how many places it
	// stops. The lab still opens: those steps fail, those variants are
	// listed as not run.
	CannotRun []string
	// CannotRunSteps says, per step id, in a few words, why this binary
	// or this machine cannot run the step (its transport is not in this
	// build; its RDMA provider has no usable device here): the lab page
	// marks those steps.
	CannotRunSteps map[string]string
	// Rehearsal says why running the lab here would be a rehearsal, by
	// the engine's rule (steps.RehearsalHere: --rehearse, or roles the lab
	// keeps apart on one host): the hardware it is about is not in this
	// run. "" when it would measure what it is about.
	Rehearsal string
	// Rehearse is set when the catalogue runs labs with --rehearse.
	Rehearse bool
	// NoHardware says what hardware of the lab this machine lacks, found
	// without running anything (the build's RDMA provider finds no
	// device), when every role is this machine; "" otherwise.
	NoHardware string
	// Err, when set, says why the lab cannot be opened (lint errors).
	Err string
	// StateErr says why saved progress could not be read; opening the lab
	// from the start (R in the picker) still works.
	StateErr string
}

// Variable is a lab variable the variables form edits.
type Variable struct {
	Name        string
	Type        string
	Default     string
	Min, Max    string
	Values      []string
	Description string
}

// Options open a lab.
type Options struct {
	// Emit receives every engine event, from engine goroutines.
	Emit func(steps.Event)
	// Restart ignores saved progress; without it a finished lab opens for
	// review and runs nothing.
	Restart bool
	// Vars are variable overrides.
	Vars map[string]string
}

// Catalog lists and opens labs.
type Catalog interface {
	Labs() ([]LabInfo, error)
	Open(id string, opts Options) (Session, error)
}

// Session is one open lab, as the engine runs it.
type Session interface {
	Info() LabInfo
	// Steps are the lab's steps with their saved status.
	Steps() []steps.StepInfo
	// Resume is the first unfinished step.
	Resume() int
	// Doc is step i's markdown.
	Doc(i int) string
	// Plan returns the exact commands step i will run.
	Plan(i int) ([]steps.PlannedCommand, error)
	// Variables are the lab's variables with their current values as
	// Default; ValidateVar checks one value against its type and range.
	Variables() []Variable
	ValidateVar(name, value string) error
	// SetVars applies the variables form (validated) to later steps.
	SetVars(vars map[string]string) error
	// RunStep runs step i to its end and returns its status.
	RunStep(ctx context.Context, i int) results.Status
	// Skip marks step i skipped.
	Skip(i int)
	// Cleanup runs the cleanup steps and stops what deploy started.
	Cleanup(ctx context.Context) error
	// Finish writes the results and returns their folder.
	Finish(ctx context.Context) (string, error)
	// Leave records that the run ends here, stopped before its end (by
	// says how: "q in the TUI"), and writes its results with that status
	// when a step ran in this session and the run has not already written
	// its end (steps.Engine.Leave); it returns the folder, "" when it
	// wrote nothing. Call it after Cleanup.
	Leave(ctx context.Context, by string) (string, error)
	// Results are the results so far (nil before any bench).
	Results() *results.Results
	// Close releases connections; the session is unusable afterwards.
	Close() error
	// Shell is how to open an interactive shell on step i's host, in the
	// lab's working directory: the TUI hands it the terminal for a task
	// step. It is run, never drawn.
	Shell(i int) (runner.Shell, error)
	// CheckTask runs only task step i's verify, after the trainee did the
	// work by hand, and reports like RunStep.
	CheckTask(ctx context.Context, i int) results.Status
	// Solution is task step i's answer per host ("show me"): what "do it
	// for me" (RunStep) runs, and the check.
	Solution(i int) ([]steps.TaskSolution, error)
	// Rendered are the files step i writes (a template step's file, a
	// deploy step's redis.conf per instance), rendered with the current
	// variables; more counts those left out.
	Rendered(i int) (files []steps.RenderedFile, more int, err error)
	// Review reports whether the session shows a finished run without
	// running anything: RunStep and Skip change nothing, Cleanup has
	// nothing to stop, and starting over means opening the lab again with
	// Options.Restart.
	Review() bool
}
