package chart

import (
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
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
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := Plot(Spec{Series: tc.series, Legends: []string{"a", "b"}, Width: 40, Height: 8, LowerBound: math.NaN()})
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

func TestHuman(t *testing.T) {
	for in, want := range map[float64]string{12_750_000: "12.75M", 950_000: "950k", 1500: "1.5k", 3.2: "3.20", 0.051: "0.051", 0: "0.00", -1e-13: "0.00", 0.0004: "0.00", -0.02: "-0.020"} {
		if got := Human(in); got != want {
			t.Errorf("Human(%v) = %q, want %q", in, got, want)
		}
	}
}
