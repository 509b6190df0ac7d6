//go:build unix

package steps

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"
)

// TestPrinterSummaryLabelsEachVariant: the headless summary gives each
// variant's headline figure with its own label, from the event's Figures:
// the real variant beside emulated ones carries none, and a variant name
// from a lab file cannot carry a control sequence to the terminal. The
// --json line carries the same.
func TestPrinterSummaryLabelsEachVariant(t *testing.T) {
	fin := LabFinished{Lab: "quickstart", Status: results.Done, Run: results.RunComplete, ResultsDir: "/r", Variants: []results.VariantSummary{
		{Step: "compare", Variant: "TCP loopback", Text: "TPS 246,987 ± 38,434 ops/s over 3 runs"},
		{Step: "offload", Variant: "full offload" + hostile, Figures: results.Figures{Emulation: "a direct veth"}, Text: "TPS 59,638 ops/s over 1 run"},
	}}
	var buf bytes.Buffer
	NewPrinter(&buf).Print(fin)
	out := buf.String()
	for _, want := range []string{"\n   compare / TCP loopback: TPS 246,987 ± 38,434 ops/s over 3 runs\n", "\n   [EMULATION] offload / full offloadABCDEFG: TPS 59,638 ops/s over 1 run\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "EMULATION] compare") || strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("the real variant is labelled, or a control sequence passed:\n%q", out)
	}
	b, err := EventJSON(fin)
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Variants []struct {
			Step, Variant, Text string
			Figures             *results.Figures
		}
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Variants) != 2 || ev.Variants[0].Figures != nil || ev.Variants[1].Figures == nil || ev.Variants[1].Figures.Emulation != "a direct veth" {
		t.Errorf("lab_finished's variants: %s", b)
	}
}
