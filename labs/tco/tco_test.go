package tco

import (
	"math"
	"testing"
)

func TestReproducesWhitepaperOrderOfMagnitude(t *testing.T) {
	// Seed 002: 10,000 servers, 14–18% fewer, $8.3M–$10.6M over 3 years,
	// about half CapEx and half OpEx.
	for _, tt := range []struct {
		pct        float64
		lo, hi     float64
		wantServer float64
	}{{14, 8.0e6, 8.7e6, 1400}, {18, 10.2e6, 11.0e6, 1800}} {
		est, err := Compute(map[string]float64{SavedPct: tt.pct})
		if err != nil {
			t.Fatal(err)
		}
		o := est.Outputs
		if o[ServersSaved] != tt.wantServer {
			t.Errorf("%v%%: servers saved = %v", tt.pct, o[ServersSaved])
		}
		if o[TotalUSD] < tt.lo || o[TotalUSD] > tt.hi {
			t.Errorf("%v%%: total $%.0f, want $%.1fM–$%.1fM", tt.pct, o[TotalUSD], tt.lo/1e6, tt.hi/1e6)
		}
		if share := o[CapexUSD] / o[TotalUSD]; share < 0.4 || share > 0.6 {
			t.Errorf("%v%%: CapEx share %.2f, want about half", tt.pct, share)
		}
		t.Logf("%v%% of 10,000: %v servers, CapEx $%.0f, OpEx $%.0f, total $%.0f", tt.pct, o[ServersSaved], o[CapexUSD], o[OpexUSD], o[TotalUSD])
	}
	for _, bad := range []map[string]float64{{PUE: -1}, {"bogus": 1}, {SavedPct: 150}, {Years: math.NaN()}} {
		if _, err := Compute(bad); err == nil {
			t.Errorf("Compute(%v) accepted bad input", bad)
		}
	}
}

// TestEveryInputHasADefaultAndCounts ties the arithmetic to the inputs the
// lab format accepts: every input has a default, changes the estimate, and
// there are no others.
func TestEveryInputHasADefaultAndCounts(t *testing.T) {
	if len(Defaults) != len(InputNames) {
		t.Errorf("%d defaults, %d inputs", len(Defaults), len(InputNames))
	}
	base, err := Compute(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range InputNames {
		v, ok := Defaults[name]
		if !ok {
			t.Errorf("input %s has no default", name)
			continue
		}
		got, err := Compute(map[string]float64{name: v * 2})
		if err != nil {
			t.Fatal(err)
		}
		if got.Outputs[TotalUSD] == base.Outputs[TotalUSD] {
			t.Errorf("input %s does not change the estimate", name)
		}
	}
}

func TestInputsFromVars(t *testing.T) {
	in, err := InputsFromVars(map[string]string{Servers: "500", "other": "x", Years: ""})
	if err != nil || len(in) != 1 || in[Servers] != 500 {
		t.Errorf("InputsFromVars = %v, %v", in, err)
	}
	if _, err := InputsFromVars(map[string]string{PUE: "high"}); err == nil {
		t.Error("a non-number was accepted")
	}
}
