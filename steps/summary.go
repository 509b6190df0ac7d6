package steps

import "github.com/dpulab/dpulab/steps/results"

// variantSummaries are the run's variants' headline figures for
// LabFinished, each with its label (results.VariantSummaries); none
// before the run has results.
func (e *Engine) variantSummaries() []results.VariantSummary {
	e.mu.Lock()
	// A dry run measures nothing: figures in its results are an earlier
	// run's, read with the saved progress, and are not its to print.
	none := e.results == nil || e.opts.DryRun
	e.mu.Unlock()
	if none {
		return nil
	}
	return results.VariantSummaries(e.Results())
}
