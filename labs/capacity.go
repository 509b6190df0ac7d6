package labs

import (
	"fmt"
	"strconv"

	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"go.yaml.in/yaml/v3"
)

// CapacitySpec is a bench or compare step's capacity search (capacity:),
// run by `dpulab bench --capacity` after, or instead of, the flat-out runs.
type CapacitySpec struct {
	// Objective is the latency objective in benchwire.ParseCapacity's syntax
	// ("p99<=1ms", the default).
	Objective Value
	// Precision is the relative width of the search's final bracket
	// (0.05: the capacity lies below the answer × 1.05).
	Precision Value
	// StartRate is the first probe's rate, ops/s over all connections.
	StartRate Value
	// MaxRate, when set, is the highest rate probed.
	MaxRate Value
	// Instead runs the search instead of the flat-out runs (mode: instead);
	// by default it runs after them (mode: after).
	Instead bool
}

// capacityKeys are the keys of a capacity: mapping; a plain value is the
// objective alone.
var capacityKeys = []string{"objective", "precision", "start_rate", "max_rate", "mode"}

// capacity reads a bench or compare step's capacity: key, either the
// objective ("p99<=1ms") or a mapping of capacityKeys. Literal values are
// checked with the load generator's own rules (benchwire.ParseCapacity and
// CapacitySpec.Validate), so lint says what the bench would refuse.
func (p *parser) capacity(n *yaml.Node, what string) *CapacitySpec {
	n = deref(n)
	if n == nil {
		return nil
	}
	c := &CapacitySpec{}
	if n.Kind == yaml.ScalarNode {
		c.Objective = p.value(n, what, checkObjective)
		if !c.Objective.IsSet() {
			p.errf(n, "%s: give an objective such as 'p99<=1ms', or remove capacity:", what)
		}
		return c
	}
	m := p.mapOf(n, what)
	if m == nil {
		return nil
	}
	p.allow(m, what, capacityKeys...)
	c.Objective = p.value(m.get("objective"), what+" objective", checkObjective)
	c.Precision = p.value(m.get("precision"), what+" precision", checkFloatIn(0.001, 0.5))
	c.StartRate = p.value(m.get("start_rate"), what+" start_rate", checkFloatIn(1, 1e12))
	c.MaxRate = p.value(m.get("max_rate"), what+" max_rate", checkFloatIn(1, 1e12))
	if mn := m.get("mode"); mn != nil {
		switch mode := p.str(mn, what+" mode"); mode {
		case "after", "":
		case "instead":
			c.Instead = true
		default:
			p.errf(mn, "%s mode: %q: want after (the flat-out runs, then the search) or instead (the search only)", what, mode)
		}
	}
	start, err1 := strconv.ParseFloat(string(c.StartRate), 64)
	hi, err2 := strconv.ParseFloat(string(c.MaxRate), 64)
	if err1 == nil && err2 == nil && hi < start {
		p.errf(m.get("max_rate"), "%s: max_rate %g is below start_rate %g", what, hi, start)
	}
	return c
}

func checkObjective(s string) error {
	_, err := benchwire.ParseCapacity(s)
	return err
}

func checkFloatIn(lo, hi float64) func(string) error {
	return func(s string) error {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		if f < lo || f > hi {
			return fmt.Errorf("%g is outside %g..%g", f, lo, hi)
		}
		return nil
	}
}

// encodeCapacity writes a capacity search as the objective alone when
// that is all it says, else as a mapping.
func encodeCapacity(c *CapacitySpec) *yaml.Node {
	if !c.Precision.IsSet() && !c.StartRate.IsSet() && !c.MaxRate.IsSet() && !c.Instead && c.Objective.IsSet() {
		return strNode(string(c.Objective))
	}
	cm := newMap()
	cm.opt("objective", string(c.Objective))
	cm.opt("precision", string(c.Precision))
	cm.opt("start_rate", string(c.StartRate))
	cm.opt("max_rate", string(c.MaxRate))
	if c.Instead {
		cm.str("mode", "instead")
	}
	return cm.node
}
