package labs

// CapacitySpec is a bench or compare step's capacity search (capacity:),
// run by `dpulab bench --capacity` after, or instead of, the flat-out runs.
// Its key is read, checked and written back by steps/kinds/load (keys.go).
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
