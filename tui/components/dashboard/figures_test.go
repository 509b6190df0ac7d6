package dashboard

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
)

// captions are the chart captions the metric table gives the dashboard.
func captions(m *Model) []string {
	var out []string
	for _, g := range m.shown() {
		out = append(out, g.caption)
	}
	return out
}

// TestFiguresLabelTitleAndEveryCaption: the label comes from each event's
// Figures (the one label source). An emulated variant's seconds put
// EMULATION before the title and on every chart's caption, at 80 columns
// too; the next variant, a real path of the same compare, carries none.
func TestFiguresLabelTitleAndEveryCaption(t *testing.T) {
	for _, w := range []int{80, 120} {
		m := New(common.NewCommon(true, w, 22))
		emulated := results.Figures{Emulation: "host does it all (vxlan overlay, 50-rule firewall)"}
		s := sample("host does it all", 1000)
		s.Figures = emulated
		m.SetProgress(steps.Progress{Step: "offload", Label: "host does it all, run 1", Figures: emulated})
		m.AddSample(s)
		v := ansi.Strip(m.View())
		lines := strings.Split(v, "\n")
		if !strings.HasPrefix(lines[0], "EMULATION Live bench: compare") {
			t.Errorf("%d cols: title %q does not start with the label", w, lines[0])
		}
		for _, c := range captions(m) {
			if !strings.Contains(strings.Join(strings.Fields(v), " "), "EMULATION · "+c) {
				t.Errorf("%d cols: caption %q not labelled EMULATION:\n%s", w, c, v)
			}
		}
		if n, want := strings.Count(v, "EMULATION"), len(captions(m))+1; n != want {
			t.Errorf("%d cols: EMULATION %d times, want %d (title and each chart):\n%s", w, n, want, v)
		}

		real := sample("Unix socket", 2000)
		m.SetProgress(steps.Progress{Step: "compare", Label: "Unix socket, run 1"})
		m.AddSample(real)
		v = ansi.Strip(m.View())
		if strings.Contains(v, "EMULATION") {
			t.Errorf("%d cols: a real variant's dashboard is labelled:\n%s", w, v)
		}
		for _, c := range captions(m) {
			if !strings.Contains(v, c) {
				t.Errorf("%d cols: caption %q missing:\n%s", w, c, v)
			}
		}
	}
}

// TestReplayAndRehearsalLabels: the longest labels (a replay of a
// rehearsed emulation, software RDMA) are read whole on every caption at
// 80 columns: wrapped, never cut.
func TestReplayAndRehearsalLabels(t *testing.T) {
	for _, f := range []results.Figures{
		{Replay: true, Rehearsal: true, Emulation: "x"},
		{Rehearsal: true, SoftwareRDMA: "rxe0 on local"},
	} {
		m := New(common.NewCommon(true, 80, 22))
		s := sample("v", 1000)
		s.Figures = f
		m.AddSample(s)
		v := ansi.Strip(m.View())
		for _, g := range m.shown() {
			// Half the width: two charts side by side.
			ls := m.caption(g, 40)
			flat := strings.Join(strings.Fields(ansi.Strip(strings.Join(ls, " "))), " ")
			if flat != f.Short()+" · "+g.caption {
				t.Errorf("caption %q reads %q, want it labelled %q", g.caption, flat, f.Short())
			}
			for _, l := range ls {
				if ansi.StringWidth(l) > 40 {
					t.Errorf("caption line wider than its chart: %q", l)
				}
			}
		}
		if n, want := strings.Count(v, f.Short()), len(m.shown())+1; n != want {
			t.Errorf("%q %d times, want %d (title and each chart):\n%s", f.Short(), n, want, v)
		}
		if !strings.Contains(strings.Split(v, "\n")[0], f.Title()) {
			t.Errorf("title lacks %q:\n%s", f.Title(), v)
		}
		for _, l := range strings.Split(v, "\n") {
			if ansi.StringWidth(l) > 80 {
				t.Errorf("line wider than 80: %q", l)
			}
		}
	}
}
