package chart

import (
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/internal/plot"
	"github.com/muesli/termenv"
)

func TestRing(t *testing.T) {
	r := NewRing(3)
	if !math.IsNaN(r.Last()) || len(r.Tail(0)) != 0 {
		t.Fatal("empty ring must have no values")
	}
	for i := 1; i <= 5; i++ {
		r.Push(float64(i))
	}
	if got := r.Tail(0); len(got) != 3 || got[0] != 3 || got[2] != 5 {
		t.Fatalf("Tail = %v, want [3 4 5]", got)
	}
	if got := r.Tail(2); len(got) != 2 || got[0] != 4 {
		t.Fatalf("Tail(2) = %v, want [4 5]", got)
	}
	if r.Last() != 5 {
		t.Fatalf("Last = %v", r.Last())
	}
	r.Reset()
	if r.Len() != 0 {
		t.Fatal("Reset left values")
	}
}

// TestPlotColoursThroughStyles: the TUI colours each series with its
// lipgloss style; without styles the same chart is plain.
func TestPlotColoursThroughStyles(t *testing.T) {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.ANSI)
	styles := []lipgloss.Style{r.NewStyle().Foreground(lipgloss.Color("1")), r.NewStyle().Foreground(lipgloss.Color("2"))}
	spec := plot.Spec{Series: [][]float64{{1, 3, 2}, {2, 1, 3}}, Legends: []string{"a", "b"}, Width: 40, Height: 10}
	coloured := Plot(spec, styles)
	plain := Plot(spec, nil)
	if strings.Contains(plain, "\x1b") {
		t.Fatalf("no styles, yet colour: %q", plain)
	}
	if !strings.Contains(coloured, "\x1b[31m") || !strings.Contains(coloured, "\x1b[32m") {
		t.Fatalf("series not coloured by their styles: %q", coloured)
	}
	if ansi.Strip(coloured) != plain {
		t.Errorf("colour changed the text:\n%s\nvs\n%s", ansi.Strip(coloured), plain)
	}
	if !strings.Contains(plain, Swatch+" ─ a") || !strings.Contains(plain, Swatch+" • b") {
		t.Errorf("legend lacks the swatch and glyphs:\n%s", plain)
	}
}
