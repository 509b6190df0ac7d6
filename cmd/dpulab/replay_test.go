//go:build unix

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"
)

func TestReplayShippedRecording(t *testing.T) {
	r, err := loadReplay("quickstart-offload-emulation")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(results.RunKind(r), "EMULATION: ") {
		t.Errorf("the shipped recording is not labelled an emulation: %q", results.RunKind(r))
	}
	var out bytes.Buffer
	if err := listRecordings(&out); err != nil {
		t.Fatal(err)
	}
	// Its compare of TCP and a Unix socket is real, its offload compare
	// emulated: the list says which, not EMULATION for the whole, and
	// where and when the rest was measured, not "here".
	if !strings.Contains(out.String(), "quickstart-offload-emulation\tquickstart, recorded 2026-12-03: EMULATION in part: the figures of offload are an emulation") ||
		!strings.Contains(out.String(), "those of bench, compare are not emulated: measured on ") ||
		strings.Contains(out.String(), "measured here") {
		t.Errorf("--list: %q", out.String())
	}
	if _, err := loadReplay(t.TempDir()); err == nil || !strings.Contains(err.Error(), "results folder") {
		t.Errorf("a folder without results.json: %v", err)
	}
}
