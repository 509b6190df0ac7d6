package session_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/pages/picker"
	"github.com/dpulab/dpulab/tui/session"
)

// TestPickerSaysWhatCannotRunHere: in a build without the RDMA transport
// (-tags nordma, or a platform other than linux/amd64 and arm64), the RDMA
// lab is listed with the reason its RDMA steps cannot run and how to get a
// binary that can, ahead of the rest of its line; the TCP-only quickstart
// has no such reason.
func TestPickerSaysWhatCannotRunHere(t *testing.T) {
	if transport.Available(transport.RDMA) == nil {
		t.Skip("this build has the rdma transport (go test -tags nordma runs this test)")
	}
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
	for _, want := range []string{"⚠ cannot run here", "transport rdma", "not in this build"} {
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
	terse(t, d)
	// The whole reason, with how to get a binary that can, is behind the
	// details key.
	full := picker.Details(r)
	for _, want := range []string{"⚠ cannot run here", "transport rdma", "RDMA is not in this build", "steps or variants", "use transport tcp"} {
		if !strings.Contains(full, want) {
			t.Errorf("details %q lack %q", full, want)
		}
	}
}

// terse fails unless a picker description's warning is one line at 80
// columns (the list's text is 78 wide there).
func terse(t *testing.T, desc string) {
	t.Helper()
	first, _, _ := strings.Cut(desc, "\n")
	if !strings.HasPrefix(first, "⚠ ") {
		return
	}
	if n := ansi.StringWidth(first); n > 78 {
		t.Errorf("the picker's warning %q is %d columns, more than one line at 80", first, n)
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

// TestStepsThatCannotRunHere: the RDMA lab's steps over transport rdma
// are marked, each with its reason, and nothing else is: in a build
// without the RDMA transport, that it is not in this build; in a build
// with it (the default on linux/amd64 and arm64) on this machine without
// an RDMA device, that no device is usable here, and the picker says what
// the provider lacks.
func TestStepsThatCannotRunHere(t *testing.T) {
	ls, err := (&session.EngineCatalog{StateDir: t.TempDir()}).Labs()
	if err != nil {
		t.Fatal(err)
	}
	want := "transport rdma is not in this build"
	if transport.Available(transport.RDMA) == nil {
		name, perr := rdma.Provider()
		if name == "" {
			t.Skip("a rdmasim build: the rdma transport is the Go simulation, which runs on any machine")
		}
		if perr == nil {
			t.Skip("this machine has an RDMA device the provider can use: no step is marked")
		}
		want = "no RDMA device usable on this machine"
		r := lab(t, ls, "redis-rdma-rc-uc")
		// The list says what is missing and what to do in one line; the
		// details say what the provider lacks, whole.
		d := picker.Describe(r)
		if !strings.HasPrefix(d, "⚠ no RDMA device here: add Soft-RoCE, or give RDMA hosts\n") {
			t.Errorf("picker line %q, want one short line first that says no RDMA device and what to do", d)
		}
		terse(t, d)
		if full := picker.Details(r); !strings.Contains(full, "⚠ "+want+" ("+name+": "+perr.Error()+")") || !strings.Contains(full, "--inventory") {
			t.Errorf("details %q do not say what the provider lacks (%s: %v) and that RDMA hosts can be given", full, name, perr)
		}
	}
	r := lab(t, ls, "redis-rdma-rc-uc")
	for _, id := range []string{"deploy", "smoke", "sizes"} {
		if why := r.CannotRunSteps[id]; !strings.Contains(why, want) {
			t.Errorf("step %s: %q, want it marked %q", id, why, want)
		}
	}
	for _, id := range []string{"overview", "rdma-devices", "perftest"} {
		if why, ok := r.CannotRunSteps[id]; ok {
			t.Errorf("step %s marked %q, but it runs no transport", id, why)
		}
	}
	if q := lab(t, ls, "quickstart"); len(q.CannotRunSteps) != 0 {
		t.Errorf("quickstart: %v, want no step marked", q.CannotRunSteps)
	}
}

// TestPickerMarksMissingHardware: with every role on this machine, the
// DPU lab is a rehearsal by the engine's rule (its baseline and
// accelerated roles share one host) and the picker says so first; the
// quickstart is not; with --rehearse every lab says it, and the list's
// title too.
func TestPickerMarksMissingHardware(t *testing.T) {
	ls, err := (&session.EngineCatalog{StateDir: t.TempDir()}).Labs()
	if err != nil {
		t.Fatal(err)
	}
	d := lab(t, ls, "redis-dpu-uptv2")
	if desc := picker.Describe(d); !strings.HasPrefix(desc, "⚠ REHEARSAL here") || !strings.Contains(desc, "--inventory") {
		t.Errorf("the DPU lab on one machine: %q, want the rehearsal said first, and what to do", desc)
	} else {
		terse(t, desc)
	}
	if full := picker.Details(d); !strings.Contains(full, "⚠ REHEARSAL here, not a measurement of its hardware") || !strings.Contains(full, "run on the same host") {
		t.Errorf("the DPU lab's details: %q, want the rehearsal's whole reason", full)
	}
	if desc := picker.Describe(lab(t, ls, "quickstart")); strings.Contains(desc, "REHEARSAL") {
		t.Errorf("quickstart: %q", desc)
	}
	ls, err = (&session.EngineCatalog{StateDir: t.TempDir(), Rehearse: true}).Labs()
	if err != nil {
		t.Fatal(err)
	}
	if desc := picker.Describe(lab(t, ls, "quickstart")); !strings.Contains(desc, "REHEARSAL") || !strings.Contains(desc, "--rehearse") {
		t.Errorf("quickstart with --rehearse: %q", desc)
	} else {
		terse(t, desc)
	}
	if full := picker.Details(lab(t, ls, "quickstart")); !strings.Contains(full, "asked for with --rehearse") {
		t.Errorf("quickstart's details with --rehearse: %q", full)
	}
	c := common.NewCommon(true, 80, 24)
	p := picker.New(c, ls)
	if v := ansi.Strip(p.View()); !strings.Contains(v, "REHEARSAL") {
		t.Errorf("the picker of a --rehearse session does not say REHEARSAL:\n%s", v)
	}
}

// TestPickerSaysHowManyMore: a lab with more than one warning shows the
// first in one line and says how many more the details key shows.
func TestPickerSaysHowManyMore(t *testing.T) {
	l := session.LabInfo{ID: "x", Title: "X", NoHardware: "no RDMA device usable on this machine (a long reason)", Rehearsal: "asked for with --rehearse", Rehearse: true, Local: true}
	d := picker.Describe(l)
	if first, _, _ := strings.Cut(d, "\n"); first != "⚠ no RDMA device here: add Soft-RoCE, or give RDMA hosts (+1 more: i)" {
		t.Errorf("first line %q", first)
	}
	terse(t, d)
	full := picker.Details(l)
	for _, want := range []string{"(a long reason)", "REHEARSAL here, not a measurement of its hardware: asked for with --rehearse"} {
		if !strings.Contains(full, want) {
			t.Errorf("details %q lack %q", full, want)
		}
	}
}
