package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/termtext"
)

// BoothMarker is the file booth mode leaves in each results folder it
// writes (package booth's Marker; it imports this package, not the other
// way round, and a test ties the two).
const BoothMarker = ".dpulab-booth"

// RunInfo is one past run as the results browser lists it. Every string
// is sanitised (one line, no control sequence): folder names and
// results.json come from outside the binary.
type RunInfo struct {
	// Dir is the run's folder (ROOT/LAB/RUNID, or a --results folder),
	// sanitised to draw; Path is the same folder as it is on disk, to open
	// and never to draw (a folder's name can carry control bytes).
	Dir  string
	Path string
	Lab  string
	// When is the run's start (its end, or the folder's time, when the
	// file does not say).
	When  time.Time
	Hosts []string
	// Status is results.json's status as the browser says it: complete,
	// failed at STEP, interrupted (by what), incomplete, killed (so
	// recorded, or the file still says running and its writer is gone),
	// running now, or unknown for files older than version 2; and the
	// attempt, when the run was resumed.
	Status string
	// Kind says what sort of run it was when the results say so: today
	// "booth" (booth mode's marker). What its figures are (REHEARSAL,
	// EMULATION, ...) Row reads from Results.
	Kind string
	// Err says why the folder could not be read; nothing else is set but
	// Dir (and Lab, from the folder's name).
	Err string
	// Results is the cleaned results.json (nil with Err).
	Results *results.Results
}

// ScanRuns lists the runs under each root (ROOT/LAB/RUNID) and the run
// folders in dirs, newest first, each folder once. A missing root lists
// nothing; an unreadable root, lab folder or run folder, and a folder
// without a dpulab results.json, is listed with its error: a bad folder
// never hides the others.
func ScanRuns(roots, dirs []string) []RunInfo {
	var out []RunInfo
	seen := map[string]bool{}
	add := func(dir, lab string) {
		abs, err := filepath.Abs(dir)
		if err == nil {
			dir = abs
		}
		if seen[dir] {
			return
		}
		seen[dir] = true
		out = append(out, loadRun(dir, lab))
	}
	for _, root := range roots {
		labs, err := os.ReadDir(root)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			out = append(out, RunInfo{Dir: termtext.Line(root), Err: termtext.Line(fmt.Sprintf("cannot list results folder: %v", err))})
			continue
		}
		for _, l := range labs {
			if !l.IsDir() {
				continue
			}
			ldir := filepath.Join(root, l.Name())
			runs, err := os.ReadDir(ldir)
			if err != nil {
				out = append(out, RunInfo{Dir: termtext.Line(ldir), Lab: termtext.Line(l.Name()), Err: termtext.Line(fmt.Sprintf("cannot list: %v", err))})
				continue
			}
			for _, r := range runs {
				if r.IsDir() {
					add(filepath.Join(ldir, r.Name()), l.Name())
				}
			}
		}
	}
	for _, d := range dirs {
		add(d, "")
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].When.Equal(out[j].When) {
			return out[i].When.After(out[j].When)
		}
		return out[i].Dir > out[j].Dir
	})
	return out
}

func loadRun(dir, lab string) RunInfo {
	ri := RunInfo{Dir: termtext.Line(dir), Path: dir, Lab: termtext.Line(lab)}
	if st, err := os.Stat(dir); err == nil {
		ri.When = st.ModTime()
	}
	if _, err := os.Stat(filepath.Join(dir, BoothMarker)); err == nil {
		ri.Kind = "booth"
	}
	r, err := results.LoadResults(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = errors.New("no results.json: not a dpulab results folder")
		}
		ri.Err = termtext.Line(err.Error())
		return ri
	}
	r = CleanResults(r)
	ri.Results = r
	if r.Lab != "" {
		ri.Lab = termtext.Line(r.Lab)
	}
	switch {
	case !r.Started.IsZero():
		ri.When = r.Started
	case !r.Finished.IsZero():
		ri.When = r.Finished
	}
	for _, h := range r.Hosts {
		ri.Hosts = append(ri.Hosts, termtext.Line(h.Name))
	}
	ri.Status = termtext.Line(describeStatus(r))
	return ri
}

// describeStatus is a run's status in a few words for a list row.
func describeStatus(r *results.Results) string {
	st := ""
	switch r.State() {
	case results.RunComplete:
		st = "complete"
	case results.RunFailed:
		st = "failed at " + r.FailedStep
	case results.RunInterrupted:
		st = "interrupted"
		if r.FailedStep != "" {
			st += " at " + r.FailedStep
		}
		if r.InterruptedBy != "" {
			st += " (" + r.InterruptedBy + ")"
		}
	case results.RunIncomplete:
		st = "incomplete"
	case results.RunKilled:
		st = "killed (never finished)"
	case results.RunRunning:
		switch host, _ := os.Hostname(); {
		case r.WriterPID == 0:
			// Written before files named their writer.
			st = "killed (never finished)"
		case r.WriterHost != host:
			st = "not finished (running on " + r.WriterHost + ", or killed there)"
		default:
			st = "running now"
		}
	default:
		st = "unknown"
	}
	if n := r.Attempt(); n > 1 {
		st += fmt.Sprintf(" · attempt %d (resumed)", n)
	}
	return st
}

// Row is the run as one line of the browser: lab, date, hosts, status,
// kind, or the error.
func (r RunInfo) Row() string {
	date := "unknown date"
	if !r.When.IsZero() {
		date = r.When.UTC().Format("2006-01-02 15:04 UTC")
	}
	lab := r.Lab
	if lab == "" {
		lab = "?"
	}
	if r.Err != "" {
		return strings.Join([]string{lab, date, "✘ " + r.Err}, " · ")
	}
	hosts := "this machine"
	if len(r.Hosts) > 0 {
		hosts = strings.Join(r.Hosts, ", ")
	}
	parts := []string{lab, date, hosts, r.Status}
	if r.Kind != "" {
		parts = append(parts, r.Kind)
	}
	// What its figures are, as its report's title says it: a rehearsal, an
	// emulation (in part), software RDMA; nothing for a measurement.
	if k := results.ReportKindTitle(r.Results); k != "" {
		parts = append(parts, k)
	}
	return strings.Join(parts, " · ")
}
