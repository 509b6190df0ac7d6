package steps

import (
	"context"

	"github.com/dpulab/dpulab/labs"
)

// A read step shows its markdown; the engine has nothing to do.
func init() {
	registerKind(labs.KindRead, kind{
		note: "read the text",
		resolve: func(*Engine, *labs.Step, map[string]string) (stepPlan, error) {
			return planFunc{do: func(context.Context) error { return nil }}, nil
		},
	})
}
