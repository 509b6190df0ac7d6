package steps

import "github.com/dpulab/dpulab/steps/results"

// variantSummaries are the run's variants' headline figures for
// LabFinished, each with its label (results.VariantSummaries); none
// before the run has results.
func (e *Engine) variantSummaries() []results.VariantSummary {
	e.mu.Lock()
	none := e.results == nil
	e.mu.Unlock()
	if none {
		return nil
	}
	return results.VariantSummaries(e.Results())
}
