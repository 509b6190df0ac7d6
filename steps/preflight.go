package steps

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dpulab/dpulab/internal/osproc"
)

// minResultsFree is the free space a results folder needs before a run
// starts: a long compare writes a few megabytes of series; the margin is
// for the report and the atomic rewrites (old and new copy at once).
const minResultsFree = 32 << 20

// checkResultsDir makes sure results can be written to dir before the
// first step runs, so a read-only or full disk is found before a
// measurement is made and lost. It creates dir as the run would, writes
// and removes a probe file in it, and removes again the folders it made:
// opening a lab and leaving leaves nothing behind.
func checkResultsDir(dir string) error {
	made := missingDirs(dir)
	defer func() {
		for _, d := range made {
			_ = os.Remove(d) // only if still empty
		}
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return resultsDirErr(dir, err)
	}
	f, err := os.CreateTemp(dir, ".dpulab-write-check-*")
	if err != nil {
		return resultsDirErr(dir, err)
	}
	_, werr := f.Write([]byte("dpulab\n"))
	cerr := f.Close()
	_ = os.Remove(f.Name())
	if err := errors.Join(werr, cerr); err != nil {
		return resultsDirErr(dir, err)
	}
	if free, err := osproc.DiskFree(dir); err == nil {
		if free < minResultsFree {
			return fmt.Errorf("results folder %s: only %d KiB free on its disk (a run needs at least %d MiB): free some space or choose another folder with --results", dir, free>>10, minResultsFree>>20)
		}
	}
	return nil
}

// missingDirs lists dir and its ancestors that do not exist yet, deepest
// first.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			return out
		}
		out = append(out, d)
	}
}

func resultsDirErr(dir string, err error) error {
	why := "cannot write there"
	switch {
	case errors.Is(err, fs.ErrPermission):
		why = "not writable by this user"
	case osproc.ReadOnlyFS(err):
		why = "on a read-only file system"
	case osproc.DiskFull(err):
		why = "its disk is full"
	}
	return fmt.Errorf("results folder %s: %s (%v): choose another folder with --results, or fix it before the run measures anything", dir, why, err)
}
