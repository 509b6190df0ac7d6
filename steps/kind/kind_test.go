package kind_test

import (
	"context"
	"slices"
	"testing"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kind"
)

// TestRegistry: a kind registers once, with a Resolve; Wrap decorates it;
// Names lists it.
func TestRegistry(t *testing.T) {
	const k labs.Kind = "registry-test"
	noop := func(kind.Env, *labs.Step, map[string]string) (kind.Plan, error) {
		return kind.PlanFunc{Do: func(context.Context) error { return nil }}, nil
	}
	kind.Register(k, kind.Kind{Resolve: noop, Note: "first"})
	if d, ok := kind.Lookup(k); !ok || d.Note != "first" || !slices.Contains(kind.Names(), k) {
		t.Fatalf("lookup %+v %v, names %v", d, ok, kind.Names())
	}
	kind.Wrap(k, func(d kind.Kind) kind.Kind { d.Note += ", wrapped"; return d })
	if d, _ := kind.Lookup(k); d.Note != "first, wrapped" {
		t.Errorf("after Wrap: %q", d.Note)
	}
	for name, f := range map[string]func(){
		"twice":      func() { kind.Register(k, kind.Kind{Resolve: noop}) },
		"no resolve": func() { kind.Register("registry-test-2", kind.Kind{}) },
		"wrap none":  func() { kind.Wrap("registry-test-3", func(d kind.Kind) kind.Kind { return d }) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic (a programming error must stop the binary at init)", name)
				}
			}()
			f()
		}()
	}
}
