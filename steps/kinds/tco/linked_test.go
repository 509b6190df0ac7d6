package tco_test

// The tco step's lab reads a compare step of deployed groups: their keys
// are read by the deploy and load kinds' packages, linked here as dpulab
// links them (steps/kinds_list.go).
import (
	_ "github.com/dpulab/dpulab/steps/kinds/deploy"
	_ "github.com/dpulab/dpulab/steps/kinds/load"
)
