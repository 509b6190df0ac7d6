//go:build !rdma && !rdmasim

package session_test

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/tui/pages/picker"
	"github.com/dpulab/dpulab/tui/session"
)

// TestPickerSaysWhatCannotRunHere: in a default build (no RDMA transport),
// the RDMA lab is listed with the reason its RDMA steps cannot run and how
// to get a binary that can, ahead of the rest of its line; the TCP-only
// quickstart has no such reason.
func TestPickerSaysWhatCannotRunHere(t *testing.T) {
	ls, err := (&session.EngineCatalog{StateDir: t.TempDir()}).Labs()
	if err != nil {
		t.Fatal(err)
	}
	if q := lab(t, ls, "quickstart"); len(q.CannotRun) != 0 {
		t.Errorf("quickstart: CannotRun = %q, want none", q.CannotRun)
	}
	r := lab(t, ls, "redis-rdma-rc-uc")
	if len(r.CannotRun) != 1 {
		t.Fatalf("redis-rdma-rc-uc: CannotRun = %q, want one reason (the rdma transport)", r.CannotRun)
	}
	d := picker.Describe(r)
	for _, want := range []string{"⚠ cannot run here", "transport rdma", "built without RDMA support", "-tags rdma", "steps or variants"} {
		if !strings.Contains(d, want) {
			t.Errorf("picker line %q lacks %q", d, want)
		}
	}
	if strings.Count(d, "cannot run") != 1 {
		t.Errorf("picker line %q says 'cannot run' more than once", d)
	}
	if !strings.HasPrefix(d, "⚠ cannot run here") {
		t.Errorf("picker line %q: the reason must come first, before the list cuts the line", d)
	}
}

func lab(t *testing.T, ls []session.LabInfo, id string) session.LabInfo {
	t.Helper()
	for _, l := range ls {
		if l.ID == id {
			return l
		}
	}
	t.Fatalf("lab %s not listed", id)
	return session.LabInfo{}
}
