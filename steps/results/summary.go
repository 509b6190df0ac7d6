package results

import "fmt"

// VariantSummary is one variant's headline figure as a run's closing
// lines give it (the headless summary, `dpulab run --json`'s lab_finished
// line), with what the figure is: the one label source, so an emulated
// variant's line carries EMULATION and a real one's in the same lab none.
type VariantSummary struct {
	Step    string  `json:"step"`
	Variant string  `json:"variant"`
	Figures Figures `json:"figures,omitzero"`
	// Text is the figure in words, without its label: "TPS 246,987 ±
	// 38,310 ops/s over 3 runs (instances=4)".
	Text string `json:"text"`
}

// Line is s as a line of text, its label first: "[EMULATION] offload /
// host does it all: TPS 59,638 ± 7,400 ops/s over 3 runs".
func (s VariantSummary) Line() string {
	return s.Figures.Tag() + s.Step + " / " + s.Variant + ": " + s.Text
}

// VariantSummaries are the headline figures of r's variants, one per
// variant with a finished run: the first metric of the table it measured
// (TPS, as a rule) at its last sweep point, each labelled by
// VariantFigures.
func VariantSummaries(r *Results) []VariantSummary {
	if r == nil {
		return nil
	}
	var out []VariantSummary
	for i := range r.Benches {
		c := &r.Benches[i]
		for vi := range c.Variants {
			v := &c.Variants[vi]
			for pi := len(v.Points) - 1; pi >= 0; pi-- {
				p := v.Points[pi]
				if len(p.Runs) == 0 {
					continue
				}
				text, ok := headline(p)
				if !ok {
					continue
				}
				if c.Sweep != "" && p.Value != "" {
					text += " (" + c.Sweep + "=" + p.Value + ")"
				}
				out = append(out, VariantSummary{Step: c.Step, Variant: v.Label, Figures: VariantFigures(r, v), Text: text})
				break
			}
		}
	}
	return out
}

// headline is p's first measured metric of the table in words.
func headline(p SweepPoint) (string, bool) {
	for _, m := range MetricDescs() {
		if ms, ok := p.Stats.Metric(m.Name); ok {
			return fmt.Sprintf("%s %s over %s", m.Label, withUnit(m, ms), runsWord(ms.N)), true
		}
	}
	return "", false
}
