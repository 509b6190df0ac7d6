package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
	"github.com/dpulab/dpulab/tui/session"
)

// TestStatusBarLine: the status line by the run control's state and what
// the run said of itself: booth mode's banner, a cleanup or the results
// being written, the running step, the page's note (but the dashboard's
// hint while the dashboard shows), the lab's title and results folder
// when nothing else is said, and, leading whatever else, the running
// variant's emulation, software RDMA and a rehearsal.
func TestStatusBarLine(t *testing.T) {
	st := common.NewCommon(true, 100, 30).Styles
	idle := runctl.New(false, false)
	running := idle
	running.Phase, running.Running = runctl.Running, 2
	all := running
	all.All = true
	cleaning := idle
	cleaning.Phase = runctl.CleaningUp
	dash := idle
	dash.View = ViewDashboard
	emu := results.Figures{Emulation: "offload emulated"}
	for _, tc := range []struct {
		name string
		bar  statusBar
		rc   runctl.State
		want string
	}{
		{name: "nothing said", bar: statusBar{title: "Redis on a DPU"}, rc: idle, want: "Redis on a DPU"},
		{name: "where results go", bar: statusBar{title: "Redis on a DPU", resultsDir: "/r/1"}, rc: idle, want: "Redis on a DPU · results: /r/1"},
		{name: "at a booth, no folder", bar: statusBar{title: "Redis on a DPU", resultsDir: "/r/1", unattended: true}, rc: idle, want: "Redis on a DPU"},
		{name: "a note", bar: statusBar{title: "T", text: "step 1 done"}, rc: idle, want: "step 1 done"},
		{name: "running", bar: statusBar{text: "d shows the live dashboard"}, rc: running, want: "running step 3 · q stops it and cleans up · d shows the live dashboard"},
		{name: "running all", bar: statusBar{}, rc: all, want: "running step 3 (running all) · q stops it and cleans up"},
		{name: "cleaning up", bar: statusBar{text: "x"}, rc: cleaning, want: "cleaning up (stopping what the lab started)… · x"},
		{name: "the banner leads", bar: statusBar{banner: "next step in 3 s", text: "x"}, rc: running, want: "next step in 3 s · x"},
		{name: "the dashboard's hint on the dashboard", bar: statusBar{title: "T", text: dashboardHint}, rc: dash, want: "T"},
		{name: "an emulation running", bar: statusBar{figures: emu}, rc: running, want: "EMULATION"},
		{name: "an emulation, nothing running", bar: statusBar{title: "T", figures: emu}, rc: idle, want: "T"},
		{name: "all labels", bar: statusBar{rehearsal: "one host", softRDMA: "rxe0", figures: emu}, rc: running,
			want: "REHEARSAL: no DPU in this run (one host) · SOFTWARE RDMA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ansi.Strip(tc.bar.Line(st, tc.rc))
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("%q, want it to start %q", got, tc.want)
			}
			if tc.name == "all labels" && !strings.Contains(got, "(rxe0) · EMULATION") {
				t.Errorf("%q: want rehearsal, software RDMA, then the emulation", got)
			}
			if strings.HasPrefix(tc.name, "an emulation, nothing") && strings.Contains(got, "EMULATION") {
				t.Errorf("%q says EMULATION with nothing running", got)
			}
		})
	}
}

// TestStatusBarLabStarted: the run's start says where its results go (not
// to a booth's visitor) and whether it is a rehearsal or on software
// RDMA, which a later start without them does not take back.
func TestStatusBarLabStarted(t *testing.T) {
	for _, unattended := range []bool{false, true} {
		b := statusBar{unattended: unattended}
		b.LabStarted(steps.LabStarted{Rehearsal: "one host", SoftwareRDMA: "rxe0", ResultsDir: "/r/1"})
		wantText := "results go to /r/1"
		if unattended {
			wantText = ""
		}
		if b.rehearsal != "one host" || b.softRDMA != "rxe0" || b.resultsDir != "/r/1" || b.text != wantText {
			t.Fatalf("unattended %v: %+v", unattended, b)
		}
		b.LabStarted(steps.LabStarted{})
		if b.softRDMA != "rxe0" || b.resultsDir != "/r/1" || b.rehearsal != "" {
			t.Fatalf("unattended %v, after a start without them: %+v", unattended, b)
		}
	}
}

// TestWrapStatus: a long status line wraps at slashes and spaces, three
// lines at most, the last cut with "…".
func TestWrapStatus(t *testing.T) {
	path := "results written, report: /home/someone/.local/share/dpulab/results/redis-dpu/2026-12-06T21-00-00/report.html"
	for _, tc := range []struct {
		s     string
		w     int
		lines int
		cut   bool
	}{
		{"short", 80, 1, false},
		{path, 200, 1, false},
		{path, 40, 3, false},
		{path, 20, 3, true},
		{path, 0, 1, false},
	} {
		ls := wrapStatus(tc.s, tc.w)
		if len(ls) != tc.lines || strings.HasSuffix(ls[len(ls)-1], "…") != tc.cut {
			t.Errorf("%d columns: %q, want %d lines (cut %v)", tc.w, ls, tc.lines, tc.cut)
		}
		for _, l := range ls {
			if tc.w > 0 && ansi.StringWidth(l) > tc.w {
				t.Errorf("%d columns: line %q is wider", tc.w, l)
			}
		}
		nospace := func(s string) string { return strings.ReplaceAll(s, " ", "") }
		if !tc.cut && nospace(strings.Join(ls, "")) != nospace(tc.s) {
			t.Errorf("%d columns: %q lost text of %q", tc.w, ls, tc.s)
		}
	}
}

// TestReviewWords: a finished run's status line says when it finished,
// that R starts it over, and where its results are, last.
func TestReviewWords(t *testing.T) {
	st := common.NewCommon(true, 100, 30).Styles
	at := time.Date(2026, 12, 6, 20, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		info session.LabInfo
		want string
	}{
		{session.LabInfo{}, "✔ this lab is done · R starts it over"},
		{session.LabInfo{Updated: at, ResultsDir: "/r/1"}, "✔ this lab is done (finished 2026-12-06 20:00) · R starts it over · results in /r/1"},
	} {
		if got := ansi.Strip(reviewWords(st, tc.info)); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
