package labs_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/labs/tco"
)

// TestDPULabTCOReproducesTheWhitepaper runs the engine's TCO formula on the
// redis-dpu-uptv2 lab's inputs at 14%, 16% and 18% servers saved: the
// totals must be the ones its doc prints, and within 2% of the whitepaper's
// $8.3M–$10.6M (seed 002, "Maximizing the ROI").
func TestDPULabTCOReproducesTheWhitepaper(t *testing.T) {
	l, err := labs.Find("redis-dpu-uptv2")
	if err != nil {
		t.Fatal(err)
	}
	st := l.Step("tco")
	if st == nil || st.TCO == nil {
		t.Fatal("no tco step")
	}
	in := map[string]float64{}
	for _, i := range st.TCO.Inputs {
		in[i.Name] = i.Default
	}
	doc, err := l.Doc(st)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		pct        float64
		doc        string
		whitepaper float64 // 0: the whitepaper gives no figure for it
	}{
		{14, "$8.34M", 8.3e6},
		{16, "$9.53M", 0},
		{18, "$10.72M", 10.6e6},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.pct), func(t *testing.T) {
			in[tco.SavedPct] = tt.pct
			res, err := tco.Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			total := res.Outputs[tco.TotalUSD]
			if got := fmt.Sprintf("$%.2fM", total/1e6); got != tt.doc {
				t.Errorf("total %s, the doc says %s", got, tt.doc)
			}
			if !strings.Contains(doc, tt.doc) {
				t.Errorf("the doc does not show %s", tt.doc)
			}
			if tt.whitepaper > 0 && math.Abs(total-tt.whitepaper)/tt.whitepaper > 0.02 {
				t.Errorf("total %.0f is more than 2%% from the whitepaper's %.0f", total, tt.whitepaper)
			}
			capex, opex := res.Outputs[tco.CapexUSD], res.Outputs[tco.OpexUSD]
			if r := capex / total; r < 0.4 || r > 0.6 {
				t.Errorf("CapEx is %.0f%% of the total; the whitepaper says about half (opex %.0f)", r*100, opex)
			}
		})
	}
}
