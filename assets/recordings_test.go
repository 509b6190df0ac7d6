package assets

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRecordingsAreLabelled: every shipped recording parses, says how it
// was made, and, when it holds emulated variants, is marked as an
// emulation (the replay and every report read that mark).
func TestRecordingsAreLabelled(t *testing.T) {
	names := Recordings()
	if len(names) == 0 {
		t.Fatal("no recording ships")
	}
	for _, n := range names {
		b, err := Recording(n)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Version   int    `json:"version"`
			Lab       string `json:"lab"`
			Status    string `json:"status"`
			Emulation string `json:"emulation"`
			Benches   []struct {
				Variants []struct {
					Label     string `json:"label"`
					Emulation string `json:"emulation"`
				} `json:"variants"`
			} `json:"benches"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if r.Version == 0 || r.Lab == "" || r.Status != "complete" {
			t.Errorf("%s: version %d, lab %q, status %q", n, r.Version, r.Lab, r.Status)
		}
		emulated := false
		for _, c := range r.Benches {
			for _, v := range c.Variants {
				emulated = emulated || v.Emulation != ""
			}
		}
		if emulated && r.Emulation == "" {
			t.Errorf("%s holds emulated variants but is not marked an emulation", n)
		}
		notes, err := RecordingNotes(n)
		if err != nil || !strings.Contains(notes, "dpulab run") || !strings.Contains(notes, "UTC") {
			t.Errorf("%s: its README.md must say how (dpulab run ...) and when (UTC) it was made: %v", n, err)
		}
	}
	if _, err := Recording("no-such"); err == nil || !strings.Contains(err.Error(), "quickstart-offload-emulation") {
		t.Errorf("an unknown name: %v", err)
	}
}
