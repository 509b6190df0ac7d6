// Package sleep is a step kind that waits: the example of what adding a
// kind takes (this package, and one import of it). It is registered only
// where a test imports it (steps' kind_sleep_test.go); no lab dpulab ships
// uses it.
//
//   - id: settle
//     title: Let the servers settle
//     kind: sleep
//     for: 5s
package sleep

import (
	"context"
	"fmt"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
)

// Kind is the kind's name in lab.yaml.
const Kind labs.Kind = "sleep"

// Spec is the step's own keys, kept in labs.Step.Spec.
type Spec struct {
	// For is how long to wait; it may reference variables.
	For labs.Value
}

func init() {
	labs.RegisterKind(Kind, labs.KindSyntax{
		Keys: []string{"for"},
		Parse: func(sp *labs.StepParser, s *labs.Step) {
			if !sp.Has("for") {
				sp.Errorf("", "a sleep step needs for: (how long to wait, e.g. 5s)")
			}
			s.Spec = &Spec{For: sp.Duration("for")}
		},
		Encode: func(s *labs.Step, m *labs.StepEncoder) {
			if sp, ok := s.Spec.(*Spec); ok {
				m.String("for", string(sp.For))
			}
		},
	})
	kind.Register(Kind, kind.Kind{Note: "waits", Resolve: resolve})
}

func resolve(env kind.Env, st *labs.Step, vars map[string]string) (kind.Plan, error) {
	spec, ok := st.Spec.(*Spec)
	if !ok {
		return nil, fmt.Errorf("step %s: no sleep keys", st.ID)
	}
	d, err := spec.For.Duration(vars, 0)
	if err != nil {
		return nil, fmt.Errorf("step %s: for: %w", st.ID, err)
	}
	return kind.PlanFunc{
		Cmds: func() []kind.PlannedCommand {
			return []kind.PlannedCommand{{Host: "(dpulab)", Cmd: "# wait " + d.String()}}
		},
		Do: func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-env.After(d):
			}
			env.Say(st.ID, "", "waited %s", d.Round(time.Millisecond))
			return nil
		},
	}, nil
}
