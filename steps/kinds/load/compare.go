package load

import (
	"maps"
	"slices"

	"github.com/dpulab/dpulab/steps/results"
)

// MeasuredOnly is c as results show it: a copy without the variants that
// could not run here (listed in c.Unavailable instead).
func MeasuredOnly(c results.Compare) results.Compare {
	c = CloneCompare(c)
	if len(c.Unavailable) == 0 {
		return c
	}
	c.Variants = slices.DeleteFunc(c.Variants, func(v results.VariantResult) bool {
		return len(v.Points) == 0 && slices.ContainsFunc(c.Unavailable, func(u results.Unavailable) bool { return u.Label == v.Label })
	})
	return c
}

// CloneCompare copies c deeply enough that later appends to the running
// compare do not change what the results (and the TUI) already hold.
func CloneCompare(c results.Compare) results.Compare {
	out := c
	out.Variants = make([]results.VariantResult, len(c.Variants))
	for i, v := range c.Variants {
		nv := v
		nv.Points = make([]results.SweepPoint, len(v.Points))
		for j, p := range v.Points {
			np := p
			np.Runs = append([]results.RunResult(nil), p.Runs...)
			np.DeltaPct, np.DeltaP = maps.Clone(p.DeltaPct), maps.Clone(p.DeltaP)
			nv.Points[j] = np
		}
		out.Variants[i] = nv
	}
	return out
}
