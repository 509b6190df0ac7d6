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
	for _, want := range []string{"⚠ cannot run here", "transport rdma", "RDMA is not in this build", "steps or variants"} {
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
		if d := picker.Describe(r); !strings.Contains(d, "⚠ "+want+" ("+name+": "+perr.Error()+")") {
			t.Errorf("picker line %q does not say what the provider lacks (%s: %v)", d, name, perr)
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
	if desc := picker.Describe(d); !strings.HasPrefix(desc, "⚠ REHEARSAL here") || !strings.Contains(desc, "run on the same host") {
		t.Errorf("the DPU lab on one machine: %q, want the rehearsal said first", desc)
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
	}
	c := common.NewCommon(true, 80, 24)
	p := picker.New(c, ls)
	if v := ansi.Strip(p.View()); !strings.Contains(v, "REHEARSAL") {
		t.Errorf("the picker of a --rehearse session does not say REHEARSAL:\n%s", v)
	}
}
