package compare

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/tui/common"
)

func TestDeltaTextReadsWithoutColour(t *testing.T) {
	byKey := map[string]metric{}
	for _, m := range tableMetrics() {
		byKey[m.key] = m
	}
	// Deltas beyond the noise, unless said otherwise.
	tests := []struct {
		metric string
		pct    float64
		want   string
		p      float64 // 0: p = 0.01; -1: one run a side
	}{
		{"ops_per_sec", 31.24, "+31.2% better", 0},
		{"ops_per_sec", 3.1, "~ +3.1%", 0.4},
		{"ops_per_sec", 12, "+12.0% ?", -1},
		{"ops_per_sec", -5, "-5.0% worse", 0},
		{"latency_p99_ms", -25, "-25.0% better", 0},
		{"latency_p99_ms", 12, "+12.0% worse", 0},
		{"server_cpu_pct", 0.01, "+0.0% same", 0},
		// Less traffic on the wire is neither better nor worse in itself.
		{"net_gbps", -81.6, "-81.6%", 0},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			d := results.Delta{Pct: tc.pct, P: 0.01, HasP: true}
			switch {
			case tc.p < 0:
				d.HasP = false
			case tc.p > 0:
				d.P = tc.p
			}
			got, _, _ := deltaText(byKey[tc.metric], d)
			if got != tc.want {
				t.Fatalf("deltaText(%s, %v) = %q, want %q", tc.metric, tc.pct, got, tc.want)
			}
		})
	}
}

func TestViewFitsEverySize(t *testing.T) {
	res, err := results.LoadResults("../../testdata/recorded")
	if err != nil {
		t.Fatal(err)
	}
	for _, sz := range [][2]int{{80, 22}, {100, 28}, {160, 50}} {
		for tab := TabTable; tab <= TabTCO; tab++ {
			m := New(common.NewCommon(true, sz[0], sz[1]), res, tco.Compute)
			m.SetTab(tab)
			lines := strings.Split(m.View(), "\n")
			if len(lines) > sz[1] {
				t.Errorf("%dx%d tab %d: %d lines", sz[0], sz[1], tab, len(lines))
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > sz[0] {
					t.Errorf("%dx%d tab %d: line %q is %d wide", sz[0], sz[1], tab, l, w)
				}
			}
		}
	}
}

// TestHeaderSaysWhatTheFiguresAre: a software RDMA run's compare view
// carries its label on every tab, before the title; a measured one none.
func TestHeaderSaysWhatTheFiguresAre(t *testing.T) {
	res, err := results.LoadResults("../../testdata/recorded")
	if err != nil {
		t.Fatal(err)
	}
	soft := *res
	soft.Emulation, soft.Rehearsal = "", false
	soft.SoftwareRDMA = "rxe0 on server, rxe1 on client"
	for tab := TabTable; tab <= TabTCO; tab++ {
		m := New(common.NewCommon(true, 160, 40), &soft, tco.Compute)
		m.SetTab(tab)
		head := ansi.Strip(strings.SplitN(m.View(), "\n", 2)[0])
		if !strings.HasPrefix(head, "SOFTWARE RDMA (Soft-RoCE) Compare: ") {
			t.Errorf("tab %d: header %q", tab, head)
		}
	}
	plain := *res
	plain.Emulation, plain.Rehearsal = "", false
	m := New(common.NewCommon(true, 160, 40), &plain, tco.Compute)
	if head := ansi.Strip(strings.SplitN(m.View(), "\n", 2)[0]); !strings.HasPrefix(head, "Compare: ") {
		t.Errorf("a measured run's header %q", head)
	}
}

func TestNoResults(t *testing.T) {
	m := New(common.NewCommon(true, 100, 30), nil, nil)
	if !strings.Contains(m.View(), "No compare results yet") {
		t.Fatal("an empty compare view must say what to do")
	}
}

// TestEmptyStatesWrap: the empty compare's and the sweepless compare's
// messages wrap to the view instead of ending in "…" (issue 15).
func TestEmptyStatesWrap(t *testing.T) {
	m := New(common.NewCommon(true, 40, 20), nil, nil)
	v := ansi.Strip(m.View())
	if strings.Contains(v, "…") || !strings.Contains(strings.Join(strings.Fields(v), " "), "open a results folder with `dpulab replay DIR`.") {
		t.Errorf("empty view at 40 columns:\n%s", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if ansi.StringWidth(l) > 40 {
			t.Errorf("line wider than the view: %q", l)
		}
	}
}

// TestEarlierAttemptIsLabelled: after a resume, a bench an earlier
// attempt measured says so above every tab, wrapped whole at 80 columns,
// and the view still fits; the current attempt's bench carries no label.
func TestEarlierAttemptIsLabelled(t *testing.T) {
	res, err := results.LoadResults("../../testdata/recorded")
	if err != nil {
		t.Fatal(err)
	}
	r := *res
	r.Attempts = []results.Attempt{{Started: r.Started, Status: results.RunInterrupted, InterruptedBy: "SIGINT (Ctrl-C)", FailedStep: "compare"}}
	r.Benches = append([]results.Compare(nil), res.Benches...)
	for i := range r.Benches {
		r.Benches[i].Attempt = 1
	}
	for tab := TabTable; tab <= TabTCO; tab++ {
		m := New(common.NewCommon(true, 80, 24), &r, tco.Compute)
		m.SetTab(tab)
		v := ansi.Strip(m.View())
		if n := strings.Count(v, "\n") + 1; n > 24 {
			t.Errorf("tab %d: %d lines in a 24-line view", tab, n)
		}
		flat := strings.Join(strings.Fields(v), " ")
		if !strings.Contains(flat, "EARLIER ATTEMPT: measured by attempt 1 of 2") || !strings.Contains(flat, "interrupted (SIGINT (Ctrl-C)) during step compare") {
			t.Errorf("tab %d does not label the earlier attempt's figures:\n%s", tab, v)
		}
	}
	for i := range r.Benches {
		r.Benches[i].Attempt = 2
	}
	m := New(common.NewCommon(true, 80, 24), &r, tco.Compute)
	if v := ansi.Strip(m.View()); strings.Contains(v, "EARLIER ATTEMPT") {
		t.Errorf("the current attempt's figures are labelled as an earlier one's:\n%s", v)
	}
}

// TestWarningsAsTheReportsSayThem: a real quickstart run on one saturated
// host: the compare view says each of the compare's warnings in the words
// of report.md and report.html (results.Warnings), their titles above
// every tab and each whole, with its runs, on the table tab; the view
// still fits 80×24 and 100×30.
func TestWarningsAsTheReportsSayThem(t *testing.T) {
	res, err := results.LoadResults("../../../steps/results/testdata/saturated-quickstart")
	if err != nil {
		t.Fatal(err)
	}
	m := New(common.NewCommon(true, 160, 60), res, tco.Compute)
	c := m.current()
	ws := results.Warnings(res, c)
	kinds := map[results.WarningKind]bool{}
	for _, w := range ws {
		kinds[w.Kind] = true
	}
	if !kinds[results.WarnSaturated] || !kinds[results.WarnSharedCPU] {
		t.Fatalf("the saturated quickstart's compare %q has warnings %+v", c.Step, ws)
	}
	flat := func(s string) string { return strings.Join(strings.Fields(ansi.Strip(s)), " ") }
	table := flat(m.View())
	for _, w := range ws {
		if !strings.Contains(table, flat(w.Line())) {
			t.Errorf("the table tab lacks the %s warning %q:\n%s", w.Kind, w.Line(), table)
		}
		for _, it := range w.Items {
			if !strings.Contains(table, flat(it.String())) {
				t.Errorf("the table tab lacks %q of the %s warning", it.String(), w.Kind)
			}
		}
	}
	for _, sz := range [][2]int{{80, 24}, {100, 30}} {
		for tab := TabTable; tab <= TabTCO; tab++ {
			m := New(common.NewCommon(true, sz[0], sz[1]), res, tco.Compute)
			m.SetTab(tab)
			v := m.View()
			lines := strings.Split(v, "\n")
			if len(lines) > sz[1] {
				t.Errorf("%dx%d tab %d: %d lines", sz[0], sz[1], tab, len(lines))
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > sz[0] {
					t.Errorf("%dx%d tab %d: line %q is %d wide", sz[0], sz[1], tab, l, w)
				}
			}
			for _, w := range ws {
				if !strings.Contains(flat(v), w.Title) {
					t.Errorf("%dx%d tab %d does not name the %s warning:\n%s", sz[0], sz[1], tab, w.Kind, ansi.Strip(v))
				}
			}
		}
	}
}
