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
