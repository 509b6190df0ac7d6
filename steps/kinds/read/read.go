// Package read is the read step kind: a step that shows its markdown; the
// engine has nothing to do.
package read

import (
	"context"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
)

func init() {
	kind.Register(labs.KindRead, kind.Kind{
		Note: "read the text",
		Resolve: func(kind.Env, *labs.Step, map[string]string) (kind.Plan, error) {
			return kind.PlanFunc{Do: func(context.Context) error { return nil }}, nil
		},
	})
}
