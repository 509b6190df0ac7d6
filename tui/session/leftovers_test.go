package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
)

const tinyLab = `id: tinyleft
title: Tiny
summary: one command on this machine
duration: 1m
roles:
  local: this machine
steps:
  - id: one
    title: One command
    kind: run
    run:
      - "true"
`

// TestCatalogLeftovers: what the TUI's runs may leave on their hosts is
// known to the catalogue, which dpulab asks when cleanup is abandoned
// after the screen closed: a session that ran a step lists this machine
// and its working directory until its cleanup has run, and a session
// closed with nothing left is forgotten.
func TestCatalogLeftovers(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tinyleft"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tinyleft", "lab.yaml"), []byte(tinyLab), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &EngineCatalog{LabDirs: []string{dir}, StateDir: t.TempDir()}
	s, err := c.Open("tinyleft", Options{Emit: func(steps.Event) {}, Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Leftovers(); len(l) != 0 {
		t.Errorf("before any step: %+v", l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if st := s.RunStep(ctx, 0); st != results.Done {
		t.Fatalf("step: %v", st)
	}
	l := c.Leftovers()
	if len(l) != 1 || l[0].Host != "local" || !strings.HasPrefix(l[0].Dir, "/tmp/dpulab-tinyleft-") || !strings.Contains(l[0].String(), "rm -rf -- "+l[0].Dir) {
		t.Errorf("after a step, before cleanup: %+v, want this machine's working directory", l)
	}
	if err := s.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if l := c.Leftovers(); len(l) != 0 {
		t.Errorf("after cleanup: %+v", l)
	}
	_ = s.Close()
	c.mu.Lock()
	n := len(c.open)
	c.mu.Unlock()
	if n != 0 {
		t.Errorf("%d sessions kept after a clean close", n)
	}
}
