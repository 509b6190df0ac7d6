package results

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A published figure is drawn on a sweep chart when it is one number at
// one point of the sweep. Reference carries text only (label, value,
// source), so the point is read from that text, strictly: the label names
// the swept variable with a single value ("Peak TPS, 80 instances",
// "Throughput with RC, connections=16"), the value is a single number
// with at most a scale, a unit and a hedge ("almost 20M", "125,000 ops/s",
// "3.2 µs"), and the label or unit says which metric it is. A range, an
// arrow between two figures, a percentage or a value outside the run's
// sweep is not a point: it stays in the text beside the step only.

// refPoint is a published figure placed on a sweep chart.
type refPoint struct {
	metric string // MetricOps, MetricLatAvg or MetricLatP99
	at     string // the sweep value, as the run's sweep spells it
	y      float64
	value  string // the figure as published ("almost 20M")
	// group names the figures drawn as one series: the label without its
	// sweep value, and the source.
	stem, source string
}

var refNumber = regexp.MustCompile(`^(?i)(?:about|almost|nearly|around|approximately|up to|~|≈)?\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*([kKM])?\s*(ops/s|ops/sec|TPS|µs|us|ms)?$`)

// readRefPoint reads ref as a point of a sweep over sweep whose values are
// at (as the run spells them); ok is false when ref is not one.
func readRefPoint(ref Reference, sweep string, at []string) (refPoint, bool) {
	if sweep == "" {
		return refPoint{}, false
	}
	m := refNumber.FindStringSubmatch(strings.TrimSpace(ref.Value))
	if m == nil {
		return refPoint{}, false
	}
	y, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if err != nil {
		return refPoint{}, false
	}
	switch m[2] {
	case "k", "K":
		y *= 1e3
	case "M":
		y *= 1e6
	}
	label := strings.ToLower(ref.Label)
	var metric string
	switch unit := strings.ToLower(m[3]); {
	case unit == "µs" || unit == "us" || unit == "ms":
		if unit != "ms" {
			y /= 1000
		}
		switch {
		case !strings.Contains(label, "latency"):
			return refPoint{}, false
		case strings.Contains(label, "p99"):
			metric = MetricLatP99
		case strings.Contains(label, "average") || strings.Contains(label, "avg") || strings.Contains(label, "mean"):
			metric = MetricLatAvg
		default:
			// Which latency a bare "latency" is, the text does not say.
			return refPoint{}, false
		}
	case unit != "" || strings.Contains(label, "tps") || strings.Contains(label, "throughput"):
		if strings.Contains(label, "latency") || strings.Contains(label, "%") {
			return refPoint{}, false
		}
		metric = MetricOps
	default:
		return refPoint{}, false
	}
	value, phrase, ok := sweepValueIn(ref.Label, sweep)
	if !ok {
		return refPoint{}, false
	}
	var spelled string
	for _, a := range at {
		if fa, err := strconv.ParseFloat(strings.TrimSpace(a), 64); err == nil && fa == value {
			spelled = a
		}
	}
	if spelled == "" {
		return refPoint{}, false
	}
	return refPoint{metric: metric, at: spelled, y: y, value: strings.TrimSpace(ref.Value), stem: refStem(ref.Label, phrase), source: ref.Source}, true
}

// sweepValueIn finds the one value of sweep the label names ("80
// instances", "instances=80", "instances: 80", "(reached at 30
// instances)") and the phrase that names it. A label naming two values, or
// a range ("30–80 instances", "16 / 32 connections"), names none.
func sweepValueIn(label, sweep string) (float64, string, bool) {
	name := regexp.QuoteMeta(strings.TrimSuffix(strings.ToLower(sweep), "s")) + `s?`
	re := regexp.MustCompile(`(?i)(?:\(\s*[^()]*?)?(?:([0-9][0-9,]*)\s+` + name + `\b|\b` + name + `\s*[=:]?\s*([0-9][0-9,]*))(?:[^()]*\))?`)
	ms := re.FindAllStringSubmatchIndex(label, -1)
	if len(ms) != 1 {
		return 0, "", false
	}
	m := ms[0]
	num := ""
	start, end := 0, 0
	if m[2] >= 0 {
		num, start, end = label[m[2]:m[3]], m[2], m[3]
	} else {
		num, start, end = label[m[4]:m[5]], m[4], m[5]
	}
	// A range or a list: "30–80 instances", "16 / 32 connections", "80-100".
	before := strings.TrimRight(label[:start], " ")
	after := strings.TrimLeft(label[end:], " ")
	for _, sep := range []string{"–", "-", "/", "→", "to"} {
		if strings.HasSuffix(before, sep) || strings.HasPrefix(after, sep) {
			return 0, "", false
		}
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if err != nil {
		return 0, "", false
	}
	return v, label[m[0]:m[1]], true
}

// refStem is the label without the phrase naming its sweep value: "Peak
// TPS, 80 instances" and "Peak TPS, 30 instances" are one series.
func refStem(label, phrase string) string {
	s := strings.Replace(label, phrase, "", 1)
	s = strings.Join(strings.Fields(s), " ")
	return strings.Trim(s, " ,;:-–")
}

// refLegend is a published series' legend entry: "published (SOURCE):
// STEM", with the source's first part (svgchart cuts it to the chart's
// width); the full label and source are in the page's list of published
// figures.
func refLegend(stem, source string) string {
	return "published (" + shortSource(source) + "): " + stem
}

// shortSource is a source's first part, up to its first comma outside
// quotes and brackets ("Same whitepaper summary (seed 002)"), at most 34
// characters.
func shortSource(s string) string {
	depth, quoted := 0, false
	for i, r := range s {
		switch r {
		case '"', '“', '”':
			quoted = !quoted
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 && !quoted {
				return shorten(s[:i], 34)
			}
		}
	}
	return shorten(s, 34)
}

// shorten cuts s to at most n runes at a word boundary, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	cut := string(r)
	if i := strings.LastIndex(cut, " "); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
