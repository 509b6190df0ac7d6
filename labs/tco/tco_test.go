package tco

import (
	"math"
	"strings"
	"testing"
)

// TestDefaultsFit: the defaults' stated fit. At 16% of 10,000 servers the
// total is the middle of the whitepaper's $8.3M–$10.6M ("Maximizing the
// ROI"), to within 0.2%; the ends come out wider than the whitepaper's, as
// the doc says, because the DPUs of the servers kept are paid for.
func TestDefaultsFit(t *testing.T) {
	for _, tt := range []struct {
		pct, saved, total float64
	}{{14, 1400, 5057536}, {16, 1600, 9437184}, {18, 1800, 13816832}} {
		est, err := Compute(map[string]float64{SavedPct: tt.pct})
		if err != nil {
			t.Fatal(err)
		}
		o := est.Outputs
		if o[ServersSaved] != tt.saved || math.Abs(o[TotalUSD]-tt.total) > 0.5 {
			t.Errorf("%v%%: %v servers, total $%.2f; want %v, $%.0f", tt.pct, o[ServersSaved], o[TotalUSD], tt.saved, tt.total)
		}
		if got := o[CapexUSD] - o[DPUCostUSD] + o[OpexUSD]; math.Abs(got-o[TotalUSD]) > 0.01 {
			t.Errorf("%v%%: the parts add to %.2f, the total is %.2f", tt.pct, got, o[TotalUSD])
		}
	}
	mid, _ := Compute(map[string]float64{SavedPct: 16})
	if d := math.Abs(mid.Outputs[TotalUSD]-9.45e6) / 9.45e6; d > 0.002 {
		t.Errorf("16%%: $%.0f is %.2f%% from the middle of the whitepaper's range", mid.Outputs[TotalUSD], d*100)
	}
	// The fitted premium, from the stated fit.
	perSaved := Defaults[ServerPrice] + Defaults[InfraPerServer] + Defaults[ServerWatts]/1000*8760*Defaults[Years]*Defaults[PricePerKWh]*Defaults[PUE]
	if fit := (1600*perSaved - 9.45e6) / 8400; math.Abs(fit-Defaults[DPUPremium]) > 5 {
		t.Errorf("the fit gives a DPU premium of $%.2f, the default is $%v", fit, Defaults[DPUPremium])
	}
	for _, bad := range []map[string]float64{{PUE: -1}, {"bogus": 1}, {SavedPct: 150}, {Years: math.NaN()}} {
		if _, err := Compute(bad); err == nil {
			t.Errorf("Compute(%v) accepted bad input", bad)
		}
	}
}

// TestNoShareNoSavings: without a measured or entered share there are no
// outputs, only the reason; never a fixed share.
func TestNoShareNoSavings(t *testing.T) {
	for _, tt := range []struct {
		in   map[string]float64
		p    Provenance
		want string
	}{
		{nil, Provenance{}, "none was measured or entered"},
		{map[string]float64{SavedPct: 0}, Provenance{Sources: map[string]string{SavedPct: Entered}}, "no servers saved"},
		{map[string]float64{SavedPct: 12}, Provenance{NoSaving: "within the noise"}, "within the noise"},
		{map[string]float64{SavedPct: 12}, Provenance{Rehearsal: "one host", Sources: map[string]string{SavedPct: Measured}}, "REHEARSAL"},
	} {
		est, err := Make(tt.in, tt.p)
		if err != nil {
			t.Fatal(err)
		}
		if len(est.Outputs) != 0 || !strings.Contains(est.NoSaving, tt.want) {
			t.Errorf("Make(%v, %+v): outputs %v, no saving %q; want none and %q", tt.in, tt.p, est.Outputs, est.NoSaving, tt.want)
		}
	}
	// In a rehearsal an entered share is an estimate asked for: computed,
	// and it keeps the label.
	est, err := Make(map[string]float64{SavedPct: 12}, Provenance{Rehearsal: "one host", Sources: map[string]string{SavedPct: Entered}})
	if err != nil || est.Outputs[ServersSaved] != 1200 || est.Rehearsal != "one host" || est.Sources[SavedPct] != Entered {
		t.Errorf("rehearsal, entered: %+v, %v", est, err)
	}
}

// TestEveryInputHasAUnitAndCounts ties the arithmetic to the inputs the lab
// format accepts: every input has a unit, every one but the two that are
// measured or entered has a default, and each changes the estimate.
func TestEveryInputHasAUnitAndCounts(t *testing.T) {
	base, err := Compute(map[string]float64{SavedPct: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range InputNames {
		if Units[name] == "" {
			t.Errorf("input %s has no unit", name)
		}
		if name == SavedPct || name == Instances {
			if _, ok := Defaults[name]; ok {
				t.Errorf("%s has a default: it must be measured or entered", name)
			}
			continue
		}
		v, ok := Defaults[name]
		if !ok {
			t.Errorf("input %s has no default", name)
			continue
		}
		if base.Sources[name] != Assumed || base.Units[name] != Units[name] {
			t.Errorf("%s: source %q unit %q", name, base.Sources[name], base.Units[name])
		}
		got, err := Compute(map[string]float64{SavedPct: 16, name: v * 2})
		if err != nil {
			t.Fatal(err)
		}
		if got.Outputs[TotalUSD] == base.Outputs[TotalUSD] {
			t.Errorf("input %s does not change the estimate", name)
		}
	}
}

// TestEdit: what the person changes is entered; a changed instance count
// re-reads the measured saving at that point.
func TestEdit(t *testing.T) {
	b := &Basis{Step: "compare", Sweep: Instances, Points: []BasisPoint{
		{Value: "10", SavedPct: 3, Why: "within the noise"},
		{Value: "30", SavedPct: 12.34, Saving: true},
	}}
	b.Pick(30, true)
	start, err := Make(map[string]float64{SavedPct: 12.3, Instances: 30}, Provenance{Basis: b, Sources: map[string]string{SavedPct: Measured}})
	if err != nil || start.Outputs[ServersSaved] != 1230 {
		t.Fatalf("start: %+v, %v", start, err)
	}
	at10, err := start.Edit(map[string]float64{Servers: 10000, SavedPct: 12.3, Instances: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(at10.Outputs) != 0 || !strings.Contains(at10.NoSaving, "within the noise") || at10.Sources[Instances] != Entered || at10.Basis.Chosen != "10" {
		t.Errorf("at 10 instances: %+v", at10)
	}
	at25, err := at10.Edit(map[string]float64{Servers: 10000, Instances: 25})
	if err != nil || at25.Basis.Chosen != "30" || at25.Outputs[ServersSaved] != 1230 || at25.Sources[SavedPct] != Measured || !strings.Contains(at25.Basis.Note, "not measured") {
		t.Errorf("at 25 instances (30 nearest): %+v, %v", at25, err)
	}
	entered, err := start.Edit(map[string]float64{Servers: 10000, SavedPct: 8, Instances: 30})
	if err != nil || entered.Sources[SavedPct] != Entered || entered.Outputs[ServersSaved] != 800 || entered.Sources[Servers] != Assumed {
		t.Errorf("entered 8%%: %+v, %v", entered, err)
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
