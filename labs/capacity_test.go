package labs_test

import (
	"strings"
	"testing"
	"testing/fstest"

	. "github.com/dpulab/dpulab/labs"
)

const capacityLab = `id: cap
title: Capacity
summary: the capacity key
duration: 1m
roles:
  local: this machine
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
  - id: compare
    title: Compare
    kind: compare
    target: g
    variants:
      - label: a
      - label: b
    capacity: CAP
`

func parseCapacityLab(capacity string) (*Lab, Problems) {
	src := strings.Replace(capacityLab, "CAP", capacity, 1)
	return Parse(fstest.MapFS{"cap/lab.yaml": {Data: []byte(src)}}, "cap", "lab.yaml")
}

// TestCapacityKey reads capacity: in both forms, writes it back with
// Encode unchanged, and refuses at its line what the load generator would
// refuse.
func TestCapacityKey(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      CapacitySpec
	}{
		{"objective", "'p99<=1ms'", CapacitySpec{Objective: "p99<=1ms"}},
		{"mapping", "{objective: 'p99.9<=500us', precision: 0.02, start_rate: 5000, max_rate: 1000000, mode: instead}",
			CapacitySpec{Objective: "p99.9<=500us", Precision: "0.02", StartRate: "5000", MaxRate: "1000000", Instead: true}},
		{"defaults", "{mode: after}", CapacitySpec{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, probs := parseCapacityLab(tc.src)
			if len(probs) > 0 {
				t.Fatal(probs)
			}
			got := l.Steps[1].Bench.Capacity
			if got == nil || *got != tc.want {
				t.Fatalf("capacity = %+v, want %+v", got, tc.want)
			}
			out, err := Encode(l)
			if err != nil {
				t.Fatal(err)
			}
			l2, probs := Parse(fstest.MapFS{"cap/lab.yaml": {Data: out}}, "cap", "lab.yaml")
			if len(probs) > 0 || l2.Steps[1].Bench.Capacity == nil || *l2.Steps[1].Bench.Capacity != tc.want {
				t.Errorf("round trip: %v\n%s", probs, out)
			}
		})
	}
	for _, tc := range []struct{ name, src, want string }{
		{"bad objective", "'p99>=1ms'", `lab.yaml:19: step compare capacity: capacity objective "p99>=1ms": want pPERCENTILE<=LATENCY`},
		{"percentile", "'p100<=1ms'", "lab.yaml:19: step compare capacity: capacity: percentile 100"},
		{"empty", "''", "lab.yaml:19: step compare capacity: give an objective"},
		{"precision", "{precision: 0.9}", "lab.yaml:19: step compare capacity precision: 0.9 is outside 0.001..0.5"},
		{"mode", "{mode: sometimes}", `lab.yaml:19: step compare capacity mode: "sometimes": want after`},
		{"max below start", "{start_rate: 2000, max_rate: 1000}", "lab.yaml:19: step compare capacity: max_rate 1000 is below start_rate 2000"},
		{"unknown key", "{objectiv: 'p99<=1ms'}", `unknown key "objectiv" (did you mean "objective"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := parseCapacityLab(tc.src)
			if len(probs) != 1 || !strings.Contains(probs[0].String(), tc.want) {
				t.Errorf("problems %v, want one with %q", probs, tc.want)
			}
		})
	}
}
