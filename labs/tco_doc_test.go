package labs_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/labs/tco"
	tcokind "github.com/dpulab/dpulab/steps/kinds/tco"
)

// TestDPULabTCOFit runs the engine's TCO formula on the redis-dpu-uptv2
// lab's inputs at 14%, 16% and 18% servers saved: the totals must be the
// ones its doc prints, the lab's defaults those of package tco, and 16%
// within 0.2% of the middle of the whitepaper's $8.3M–$10.6M ("Accelerating
// Redis Performance Using VMware vSphere 8 and NVIDIA BlueField DPUs",
// "Maximizing the ROI"), the fit the doc states.
func TestDPULabTCOFit(t *testing.T) {
	l, err := labs.Find("redis-dpu-uptv2")
	if err != nil {
		t.Fatal(err)
	}
	st := l.Step("tco")
	spec, ok := st.Spec.(*tcokind.Spec)
	if st == nil || !ok {
		t.Fatal("no tco step")
	}
	in := map[string]float64{}
	for _, i := range spec.Inputs {
		in[i.Name] = i.Default
		if i.Name == tco.SavedPct {
			t.Errorf("the lab assumes servers_saved_pct = %v: it must be measured or entered", i.Default)
		}
		if d, ok := tco.Defaults[i.Name]; ok && d != i.Default {
			t.Errorf("%s: the lab's default %v, package tco's %v", i.Name, i.Default, d)
		}
		if i.Unit == "" {
			t.Errorf("%s has no unit", i.Name)
		}
	}
	doc, err := l.Doc(st)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, tco.Formula) {
		t.Error("the doc does not show the engine's formula")
	}
	for _, tt := range []struct {
		pct float64
		doc string
	}{{14, "$5.06M"}, {16, "$9.44M"}, {18, "$13.82M"}} {
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
			if tt.pct == 16 && math.Abs(total-9.45e6)/9.45e6 > 0.002 {
				t.Errorf("total %.0f is more than 0.2%% from the middle of the whitepaper's range", total)
			}
		})
	}
}
