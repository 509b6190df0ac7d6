package booth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// Config sets booth mode's timing. Zero fields take the defaults.
type Config struct {
	// StepDelay is the visible countdown before each step.
	StepDelay time.Duration
	// PromptTimeout bounds every dialog: booth mode never waits forever.
	PromptTimeout time.Duration
	// CompareHold is how long a loop's results stay on screen before the
	// restart.
	CompareHold time.Duration
	// Cycle is how long each screen stays while the results are held
	// (the headline, the live dashboard, the compare table, the charts)
	// before the next one comes (default 10s: the default hold shows the
	// headline twice).
	Cycle time.Duration
	// ErrorHold is how long a failure stays on screen before cleanup and
	// restart.
	ErrorHold time.Duration
	// AutoConfirm lists the steps whose confirmation booth mode answers
	// with yes, after the visible countdown: the lab's booth: auto_confirm.
	// Every other dialog (unlisted confirmations, host keys, passwords)
	// is refused after PromptTimeout, and the loop starts over.
	AutoConfirm []string
	// KeepResults is how many results folders of its own booth mode
	// keeps; older ones it made are deleted (default 20). Folders it did
	// not make are never touched.
	KeepResults int
}

// DefaultKeep is how many of its results folders booth mode keeps.
const DefaultKeep = 20

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.StepDelay <= 0 {
		c.StepDelay = 5 * time.Second
	}
	if c.PromptTimeout <= 0 {
		c.PromptTimeout = 20 * time.Second
	}
	if c.CompareHold <= 0 {
		c.CompareHold = 60 * time.Second
	}
	if c.Cycle <= 0 {
		c.Cycle = 10 * time.Second
	}
	if c.ErrorHold <= 0 {
		c.ErrorHold = 15 * time.Second
	}
	if c.KeepResults <= 0 {
		c.KeepResults = DefaultKeep
	}
	return c
}

// Marker is the file booth mode leaves in every results folder it
// wrote. Pruning deletes only folders holding it, so results a person made
// (a run before the booth, `dpulab run`) are never touched, and a booth
// restarted after a crash still finds its own old folders.
const Marker = ".dpulab-booth"

// PrunedMsg reports a prune of booth results: the folders removed, or why
// it failed (shown, never fatal).
type PrunedMsg struct {
	Removed []string
	Err     error
}

// pruneResults marks dir as booth-made and, in a background command,
// deletes the oldest booth-made folders beside it beyond keep.
func pruneResults(dir string, keep int) tea.Cmd {
	return func() tea.Msg {
		removed, err := PruneResults(dir, keep, time.Now())
		return PrunedMsg{Removed: removed, Err: err}
	}
}

// PruneResults writes the booth marker into dir (a results folder
// booth mode just wrote), then deletes the booth-made folders in dir's
// parent (results/LAB/) other than the newest keep, dir always among the
// kept. Folders without the marker, symlinks and files are left alone.
func PruneResults(dir string, keep int, now time.Time) ([]string, error) {
	if fi, err := os.Stat(dir); dir == "" || err != nil || !fi.IsDir() {
		return nil, nil // nothing was written: nothing to prune
	}
	if err := os.WriteFile(filepath.Join(dir, Marker), []byte(now.UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("mark booth results %s: %w", dir, err)
	}
	parent := filepath.Dir(dir)
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", parent, err)
	}
	type made struct {
		path, at string
	}
	var mine []made
	for _, e := range ents {
		if !e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		p := filepath.Join(parent, e.Name())
		b, err := os.ReadFile(filepath.Join(p, Marker))
		if err != nil {
			continue // not the booth's
		}
		mine = append(mine, made{p, strings.TrimSpace(string(b))})
	}
	// Newest first: by the time in the marker, then by name (the engine
	// names folders by their start time).
	sort.Slice(mine, func(i, j int) bool {
		if mine[i].at != mine[j].at {
			return mine[i].at > mine[j].at
		}
		return mine[i].path > mine[j].path
	})
	keep = max(keep, 1)
	var removed []string
	var errs []error
	kept := 0
	for _, m := range mine {
		if m.path == filepath.Clean(dir) || kept < keep-1 {
			if m.path != filepath.Clean(dir) {
				kept++
			}
			continue
		}
		if err := os.RemoveAll(m.path); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, m.path)
	}
	return removed, errors.Join(errs...)
}
