package resp

import "math"

func float64FromBits(b uint64) float64 { return math.Float64frombits(b) }
