package lab

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/pages/lab/runctl"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/styles"
)

// statusBar is what the page's status line says beside the run control's
// state: the page's own note (text), booth mode's banner, where the
// results go, and what this run's figures are (a rehearsal, software RDMA,
// the running variant's emulation), which lead the line whatever else it
// says.
type statusBar struct {
	// text is the page's note: what just happened, what a key did.
	text string
	// banner leads the line (booth mode's countdown).
	banner string
	// title is the lab's, said when nothing else is.
	title string
	// resultsDir is where this run's results go (lab_started), said
	// after the title; not at a booth (unattended).
	resultsDir string
	unattended bool
	// rehearsal says why this run is a rehearsal (LabStarted): the line
	// then always starts with REHEARSAL.
	rehearsal string
	// softRDMA names the software RDMA devices of this run (LabStarted,
	// SoftwareRDMAFound): the line then always says SOFTWARE RDMA.
	softRDMA string
	// figures is what the running bench's figures are (the newest
	// Progress or Sample's results.Figures): the line says an emulation
	// while one runs.
	figures results.Figures
}

// LabStarted takes what the run says of itself as it starts.
func (b *statusBar) LabStarted(e steps.LabStarted) {
	b.rehearsal = e.Rehearsal
	if e.SoftwareRDMA != "" {
		// Said from now on.
		b.softRDMA = e.SoftwareRDMA
	}
	// Before the first step: where its results will be (empty in a dry
	// run). The path is sanitised with every other event field.
	if e.ResultsDir != "" {
		b.resultsDir = e.ResultsDir
		if !b.unattended {
			b.text = "results go to " + e.ResultsDir
		}
	}
}

// Line is the status line while the run control is at rc.
func (b *statusBar) Line(st *styles.Styles, rc runctl.State) string {
	var s string
	switch {
	case b.banner != "":
		s = b.banner
	case rc.Busy() != "":
		s = st.Countdown.Render(rc.Busy() + "…")
	case rc.Running >= 0:
		s = st.StepRunning.Render(fmt.Sprintf("running step %d", rc.Running+1))
		if rc.All {
			s += st.Muted.Render(" (running all)")
		}
		s += st.Muted.Render(" · q stops it and cleans up")
	}
	if text := b.text; text != "" && (text != dashboardHint || rc.View != ViewDashboard) {
		if s != "" {
			s += st.Muted.Render(" · ")
		}
		s += text
	}
	if s == "" {
		s = st.Muted.Render(b.title)
		if b.resultsDir != "" && !b.unattended {
			s += st.Muted.Render(" · results: " + b.resultsDir)
		}
	}
	if e := (results.Figures{Emulation: b.figures.Emulation}); rc.Running >= 0 && e.Short() != "" {
		// The running variant's own label (the run's rehearsal and
		// software RDMA follow, said always): a real variant of the
		// same lab carries none.
		s = st.Error.Render(e.Short()) + st.Muted.Render(" · ") + s
	}
	if b.softRDMA != "" {
		// Said first and always: no number of this run is one of RDMA
		// hardware.
		s = st.Error.Render(results.SoftwareRDMALabel(b.softRDMA)) + st.Muted.Render(" ("+b.softRDMA+") · ") + s
	}
	if b.rehearsal != "" {
		// Said first and always: no number of this run is a DPU result.
		s = st.Error.Render("REHEARSAL: no DPU in this run") + st.Muted.Render(" ("+b.rehearsal+") · ") + s
	}
	return s
}

// maxStatusLines bounds how far a long status line (a results path, a
// report's path, an error) wraps: the screen above gives up its bottom
// lines meanwhile.
const maxStatusLines = 3

// wrapStatus is status line s wrapped to w columns, at paths' slashes
// and between words, never cut: a results or report path must be read
// whole at 80 columns. Past maxStatusLines it is cut after all.
func wrapStatus(s string, w int) []string {
	if w <= 0 || ansi.StringWidth(s) <= w {
		return []string{s}
	}
	ls := strings.Split(ansi.Wrap(s, w, "/"), "\n")
	if len(ls) > maxStatusLines {
		ls = ls[:maxStatusLines]
		ls[maxStatusLines-1] = ansi.Truncate(ls[maxStatusLines-1], w-1, "") + "…"
	}
	return ls
}

// reviewWords is the status line of a run finished in an earlier session
// (info): when it finished, that R starts it over, and where its results
// are.
func reviewWords(st *styles.Styles, info session.LabInfo) string {
	s := "this lab is done"
	if !info.Updated.IsZero() {
		s += " (finished " + info.Updated.Local().Format("2006-01-02 15:04") + ")"
	}
	s = st.StepDone.Render("✔ ") + s + st.Muted.Render(" · R starts it over")
	if info.ResultsDir != "" {
		// Last: a long path is what the status line's truncation may cut.
		s += st.Muted.Render(" · results in " + info.ResultsDir)
	}
	return s
}
