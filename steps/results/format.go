package results

import (
	"math"
	"strconv"
	"strings"
)

// MetricLabel is a metric's human title ("TPS", "p99 latency ms").
func MetricLabel(metric string) string {
	if m, ok := LookupMetric(metric); ok {
		return m.Label
	}
	return metric
}

// FormatNumber renders a value with a precision that suits its size.
func FormatNumber(v float64) string { return formatPrec(v, precFor(v)) }

// FormatMeanStd renders "mean ± stddev" with both at the mean's precision
// (just the mean for a single run).
func FormatMeanStd(m MeanStd) string {
	p := precFor(m.Mean)
	if m.N < 2 {
		return formatPrec(m.Mean, p)
	}
	return formatPrec(m.Mean, p) + " ± " + formatPrec(m.Stddev, p)
}

func precFor(v float64) int {
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return 0
	case a >= 100:
		return 1
	case a >= 1:
		return 2
	default:
		return 3
	}
}

func formatPrec(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if prec == 0 {
		return groupThousands(s)
	}
	return s
}

// FormatDollars writes a dollar amount rounded to the dollar, with thousands
// separators: $8,340,000.
func FormatDollars(v float64) string { return "$" + groupThousands(strconv.FormatFloat(v, 'f', 0, 64)) }

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
