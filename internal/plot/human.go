package plot

import (
	"fmt"
	"math"
)

// Human formats a number compactly for axis labels and big numbers:
// 12.7M, 950k, 3.20, 0.051.
func Human(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	a := math.Abs(v)
	if a < 0.0005 {
		// Axis arithmetic leaves -1e-13 where the axis meets zero; it must
		// not read "-0.000".
		return "0.00"
	}
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1 || a == 0:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}
