package labs

import "time"

// Defaults of `dpulab bench` used when a bench profile leaves them unset
// (server/bench: Duration 10s, Runs 1, no warm-up).
const (
	benchDefaultDuration = 10 * time.Second
	benchDefaultRuns     = 1
)

// LoadTime estimates how long the lab's bench and compare steps apply load
// with the given variables: for each, sweep points × variants × runs ×
// (warm-up + duration). It leaves out prefill, deploys and reading time, so
// it is a lower bound of the lab's duration. Steps that stop after a number
// of requests, or whose fields do not resolve, count nothing.
func (l *Lab) LoadTime(vars map[string]string) time.Duration {
	var total time.Duration
	for i := range l.Steps {
		total += stepLoadTime(&l.Steps[i], vars)
	}
	return total
}

func stepLoadTime(s *Step, vars map[string]string) time.Duration {
	b := s.Bench
	if b == nil || b.Requests.IsSet() {
		return 0
	}
	points, variants := []string{""}, 1
	var sweepVar string
	if c := s.Compare; c != nil {
		variants = len(c.Variants)
		if c.Sweep != nil {
			if pts, err := c.Sweep.Points(vars); err == nil && len(pts) > 0 {
				sweepVar, points = c.Sweep.Var, pts
			}
		}
	}
	var total time.Duration
	for _, p := range points {
		v := vars
		if sweepVar != "" {
			v = make(map[string]string, len(vars)+1)
			for k, x := range vars {
				v[k] = x
			}
			v[sweepVar] = p
		}
		d, err1 := b.Duration.Duration(v, benchDefaultDuration)
		w, err2 := b.Warmup.Duration(v, 0)
		runs, err3 := b.Runs.Int(v, benchDefaultRuns)
		if err1 != nil || err2 != nil || err3 != nil {
			return 0
		}
		total += time.Duration(variants*runs) * (d + w)
	}
	return total
}
