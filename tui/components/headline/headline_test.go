package headline

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/headline/headlinetest"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

func view(res *results.Results, w, h int) string {
	c := common.NewCommon(true, w, h)
	m := New(c, res)
	m.SetSize(w, h)
	return ansi.Strip(m.View())
}

// TestFigures: each headline figure says its delta as the significance
// rule does (Delta.Short's marks in the digits, Delta.Format's words under
// them): beyond the noise, better; within it, "~ no significant
// difference", never better or worse.
func TestFigures(t *testing.T) {
	c, ok := Main(headlinetest.Fixture())
	if !ok || c.Variant.Label != "full offload" || c.Base.Label != "host does it all" {
		t.Fatalf("main comparison %+v: want the last variant against the first", c)
	}
	figs := Figures(c)
	if len(figs) != 3 {
		t.Fatalf("%d figures, want TPS, network CPU, p99", len(figs))
	}
	for i, want := range []struct {
		metric  string
		verdict results.Verdict
		big     string
		words   string
	}{
		{results.MetricOps, results.Improved, "+39.0%", "+39.0% better, p<0.001"},
		{results.MetricNetworkCPU, results.Improved, "-60.5%", "-60.5% better, p<0.001"},
		// Within the noise: no verdict, no digits, the two figures.
		{results.MetricLatP99, results.Same, "", "~ no significant difference: +4.5%, p="},
	} {
		f := figs[i]
		if f.Metric.Name != want.metric || !f.Measured || f.Verdict != want.verdict || f.Big != want.big || !strings.HasPrefix(f.Words, want.words) {
			t.Errorf("figure %d: %s measured=%v verdict=%v big=%q words=%q; want %s %v %q %q", i, f.Metric.Name, f.Measured, f.Verdict, f.Big, f.Words, want.metric, want.verdict, want.big, want.words)
		}
		if f.Words != f.Delta.Format(f.Metric.Name) {
			t.Errorf("%s: words %q are not Delta.Format's", f.Metric.Name, f.Words)
		}
	}
}

func TestRunKindLabel(t *testing.T) {
	r := headlinetest.Fixture()
	if v := view(r, 120, 37); !strings.Contains(v, "EMULATION: host does it all (test fixture)") {
		t.Fatalf("an emulation's headline must say so:\n%s", v)
	}
	// A real comparison in a run that also emulates (the quickstart's TCP
	// against Unix socket): its variants carry no emulation, nor does
	// its headline.
	for vi := range r.Benches[0].Variants {
		r.Benches[0].Variants[vi].Emulation = ""
	}
	if v := view(r, 120, 37); strings.Contains(v, "EMULATION") {
		t.Fatalf("a real comparison's headline is labelled EMULATION:\n%s", v)
	}
	r.Emulation, r.Rehearsal, r.RehearsalReason = "", true, "one host"
	if v := view(r, 120, 37); !strings.Contains(v, "REHEARSAL: no DPU in this run") || strings.Contains(v, "EMULATION") {
		t.Fatalf("a rehearsal's headline must say so, and only that:\n%s", v)
	}
	r.Rehearsal = false
	if v := view(r, 120, 37); strings.Contains(v, "REHEARSAL") || strings.Contains(v, "EMULATION") {
		t.Fatalf("a measured run carries no label:\n%s", v)
	}
}

func TestNotMeasured(t *testing.T) {
	r := headlinetest.Fixture()
	for vi := range r.Benches[0].Variants {
		r.Benches[0].Variants[vi].Points[0].Stats.NetworkCPU = nil
	}
	v := view(r, 120, 37)
	if !strings.Contains(v, "not measured") || !strings.Contains(v, "this run did not measure it") {
		t.Fatalf("a metric the run did not measure must say so, with no number:\n%s", v)
	}
}

func TestNothingCompared(t *testing.T) {
	r := headlinetest.Fixture()
	r.Benches[0].Variants = r.Benches[0].Variants[:1]
	v := view(r, 80, 21)
	if !strings.Contains(v, "(one variant:") || !strings.Contains(v, "EMULATION") {
		t.Fatalf("one variant: the conclusion's words and the label:\n%s", v)
	}
	if v := view(nil, 80, 21); !strings.Contains(v, "No results yet") {
		t.Fatalf("no results:\n%s", v)
	}
}

// TestFitsEverySize: the headline fills exactly its size, from a small
// terminal (plain words) to a wall screen (the largest digits).
func TestFitsEverySize(t *testing.T) {
	for _, sz := range [][2]int{{80, 21}, {100, 27}, {120, 37}, {200, 60}, {60, 15}, {40, 8}} {
		v := view(headlinetest.Fixture(), sz[0], sz[1])
		ls := strings.Split(v, "\n")
		if len(ls) != sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(ls))
		}
		for _, l := range ls {
			if ansi.StringWidth(l) > sz[0] {
				t.Errorf("%dx%d: line too wide: %q", sz[0], sz[1], l)
			}
		}
		if !strings.Contains(v, "TPS") {
			t.Errorf("%dx%d: no TPS:\n%s", sz[0], sz[1], v)
		}
	}
	if v := view(headlinetest.Fixture(), 200, 60); !strings.Contains(v, "████████████") {
		t.Errorf("a wall screen gets the largest digits:\n%s", v)
	}
}

func TestFont(t *testing.T) {
	for r, g := range glyphs {
		w := runeWidth(g)
		for _, row := range g {
			if len(row) != w || strings.Trim(row, "#.") != "" {
				t.Errorf("glyph %q: row %q (width %d)", r, row, w)
			}
		}
	}
	for _, f := range fonts {
		rows := f.render("+12.5%")
		if len(rows) != map[bool]int{true: 3, false: 5 * max(f.py, 1)}[f.half] {
			t.Errorf("font %+v: %d rows", f, len(rows))
		}
		for _, row := range rows {
			if ansi.StringWidth(row) != f.width("+12.5%") {
				t.Errorf("font %+v: row %q is not %d wide", f, row, f.width("+12.5%"))
			}
		}
	}
	if bigOf("+12.0% ?") != "+12.0% ?" || bigOf("+31.2% better") != "+31.2%" || bigOf("~ +3.1%") != "~ +3.1%" {
		t.Error("bigOf must keep the number and the marks, not the words")
	}
}

func TestWrapWords(t *testing.T) {
	got := common.WrapWords("~ no significant difference: -34.0%, p=0.582", 30)
	if len(got) != 2 || got[1] != "-34.0%, p=0.582" {
		t.Fatalf("wrapped %q: a number must not be split at its sign", got)
	}
	if got := common.WrapWords("abcdefghij", 4); strings.Join(got, "|") != "abcd|efgh|ij" {
		t.Fatalf("a word longer than the line is cut: %q", got)
	}
}

// TestOtherVariants: the variants between the baseline and the one in big
// digits get a line each, in the compare table's short form with its
// legend, where there is room.
func TestOtherVariants(t *testing.T) {
	v := view(headlinetest.Fixture(), 120, 40)
	for _, want := range []string{"partial offload against host does it all: TPS +15.0% better", "~ no significant difference (Welch"} {
		if !strings.Contains(v, want) {
			t.Errorf("lacks %q:\n%s", want, v)
		}
	}
	if v := view(headlinetest.Fixture(), 80, 21); strings.Contains(v, "partial offload against") {
		t.Errorf("80x21 has no room for the other variants beside the digits:\n%s", v)
	}
}

// TestNoVerdictOnASaturatedHost: the fixture's TPS and network CPU differ
// beyond the noise, but once a run of the two sides was on a saturated
// host (the load generator beside the servers, as on a booth's laptop)
// the headline states no verdict: no "better", no delta in digits, the
// two measured figures with their variants, and why.
func TestNoVerdictOnASaturatedHost(t *testing.T) {
	r := headlinetest.Fixture()
	c := &r.Benches[0]
	c.Client = "local"
	for vi := range c.Variants {
		c.Variants[vi].Hosts = []string{"local"}
	}
	last := &c.Variants[len(c.Variants)-1].Points[0].Runs[1]
	busy := 97.0
	last.ClientBound, last.ClientHostBusyPct = true, &busy
	m, _ := Main(r)
	for _, f := range Figures(m) {
		if f.Big != "" || !strings.Contains(f.NoVerdict, "no verdict: saturated host") || len(f.Sides) != 2 {
			t.Errorf("%s: big %q, no verdict %q, sides %q: want the figures, no verdict", f.Metric.Name, f.Big, f.NoVerdict, f.Sides)
		}
	}
	for _, sz := range [][2]int{{80, 21}, {120, 37}} {
		v := view(r, sz[0], sz[1])
		if strings.Contains(v, "better") || strings.Contains(v, "worse") || strings.Contains(v, "██") {
			t.Errorf("%dx%d: a saturated host's headline states a verdict:\n%s", sz[0], sz[1], v)
		}
		for _, want := range []string{"host does it all: 200k±4.0k ops/s", "full offload: 278k±3.0k ops/s", "shared one saturated host"} {
			if !strings.Contains(strings.Join(strings.Fields(v), " "), want) {
				t.Errorf("%dx%d: lacks %q:\n%s", sz[0], sz[1], want, v)
			}
		}
	}
	// A client host alone saturated: client-bound, no verdict either.
	for vi := range c.Variants {
		c.Variants[vi].Hosts = []string{"server1"}
	}
	if v := view(r, 120, 37); !strings.Contains(v, "client-bound") || strings.Contains(v, "better") {
		t.Errorf("client-bound run: no verdict, and why:\n%s", v)
	}
}
