package plot

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/guptarohit/asciigraph"
)

// Moved from tui/chart with its assertions.
func TestPlotNeverPanics(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		series [][]float64
		want   string
	}{
		{"nil", nil, "waiting for data"},
		{"empty series", [][]float64{{}}, "waiting for data"},
		{"all NaN", [][]float64{{nan, nan}}, "waiting for data"},
		{"one value", [][]float64{{42}}, "42"},
		{"gap", [][]float64{{1, nan, 3, 4}}, "┤"},
		{"one empty one full", [][]float64{{}, {1, 2, 3}}, "┤"},
		{"constant", [][]float64{{5, 5, 5}}, "5"},
	}
	for _, fill := range []Fill{Columns, Hold, Stretch} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				out := Plot(Spec{Series: tc.series, Legends: []string{"a", "b"}, Width: 40, Height: 8, LowerBound: math.NaN(), Empty: "waiting for data…", Fill: fill})
				if !strings.Contains(out, tc.want) {
					t.Fatalf("plot lacks %q:\n%s", tc.want, out)
				}
				if n := strings.Count(out, "\n") + 1; n != 8 {
					t.Fatalf("plot has %d lines, want exactly 8:\n%s", n, out)
				}
				for _, l := range strings.Split(out, "\n") {
					if w := ansi.StringWidth(l); w > 40 {
						t.Fatalf("line %q is %d wide, want <= 40", l, w)
					}
				}
			})
		}
	}
}

// Moved from steps/results (report.md's Chart) with its assertions.
func TestChartGuardsEmptySeries(t *testing.T) {
	tests := []struct {
		name   string
		series [][]float64
		want   string
	}{
		{"nothing", nil, "(no data)"},
		{"all empty", [][]float64{{}, {}}, "(no data)"},
		{"one point", [][]float64{{5}}, "5"},
		{"one empty of two", [][]float64{{}, {1, 2, 3}}, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Plot(Spec{Caption: "c", Legends: []string{"a", "b"}, Series: tt.series, Width: 31, Height: 9, Fill: Hold, Empty: "(no data)"})
			if !strings.Contains(out, tt.want) {
				t.Errorf("chart:\n%s\nwant %q", out, tt.want)
			}
		})
	}
}

func TestHuman(t *testing.T) {
	for in, want := range map[float64]string{12_750_000: "12.75M", 950_000: "950k", 1500: "1.5k", 3.2: "3.20", 0.051: "0.051", 0: "0.00", -1e-13: "0.00", 0.0004: "0.00", -0.02: "-0.020"} {
		if got := Human(in); got != want {
			t.Errorf("Human(%v) = %q, want %q", in, got, want)
		}
	}
}

var escape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestPaintColoursEachSeries: Paint gets exactly each series' glyphs (its
// line and its legend entry), and without Paint the text is plain.
func TestPaintColoursEachSeries(t *testing.T) {
	spec := Spec{Series: [][]float64{{1, 2, 3, 2}, {3, 2, 1, 1}}, Legends: []string{"up", "down"}, Width: 40, Height: 10, Swatch: "■"}
	plain := Plot(spec)
	if strings.Contains(plain, "\x1b") {
		t.Fatalf("no Paint, yet escapes:\n%q", plain)
	}
	got := map[int]string{}
	spec.Paint = func(i int, s string) string {
		got[i] += s
		return "<" + s + ">"
	}
	painted := Plot(spec)
	if strings.Contains(painted, "\x1b") {
		t.Fatalf("asciigraph's own escapes leaked:\n%q", painted)
	}
	if strings.NewReplacer("<", "", ">", "").Replace(painted) != plain {
		t.Errorf("painting changed the text:\n%s\nvs\n%s", painted, plain)
	}
	if strings.Trim(got[1], "•■") != "" || !strings.Contains(got[1], "•") || !strings.Contains(got[1], "■") {
		t.Errorf("series 1 painted %q, want only its glyphs and swatch", got[1])
	}
	if strings.ContainsAny(got[0], "•0123456789┤┼") || !strings.Contains(got[0], "─") {
		t.Errorf("series 0 painted %q, want only its line", got[0])
	}
}

// TestLegendAsAsciigraph: with a swatch the legend is laid out as
// asciigraph's own (the TUI's look before the wrappers became one).
func TestLegendAsAsciigraph(t *testing.T) {
	data := [][]float64{{1, 5, 3, 4, 2, 6}, {2, 2, 3, 3, 1, 1}}
	ours := Plot(Spec{Series: data, Legends: []string{"p50", "p99"}, Width: 40, Height: 12, Caption: "latency (ms)", Swatch: "■", Fill: Stretch})
	theirs := asciigraph.PlotMany(data, asciigraph.Height(12-1-1-2), asciigraph.Offset(2), asciigraph.Width(40-LabelWidth-2),
		asciigraph.YAxisValueFormatter(func(v float64) string { return Human(v) }), asciigraph.LowerBound(0),
		asciigraph.Caption("latency (ms)"), asciigraph.SeriesChars(charSet(0), charSet(1)),
		asciigraph.SeriesLegends("─ p50", "• p99"))
	theirs = escape.ReplaceAllString(theirs, "")
	if ours != padBlock(theirs, 12) {
		t.Errorf("ours:\n%s\nasciigraph's:\n%s", ours, theirs)
	}
}
