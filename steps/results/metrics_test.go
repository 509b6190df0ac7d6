package results

import (
	"reflect"
	"strings"
	"testing"
)

// TestEveryStatHasAMetric ties the table to the summary it reads: each
// Stats field (by its JSON name) is one metric, read from that field, and
// the names are the keys deltas use. Stats.Metrics, which holds metrics by
// name, is not one: TestMetricsByName covers it.
func TestEveryStatHasAMetric(t *testing.T) {
	st := reflect.TypeOf(Stats{})
	seen := map[string]bool{}
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Type.Kind() == reflect.Map {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		m, ok := LookupMetric(name)
		if !ok {
			t.Errorf("Stats.%s (%s) has no metric: add it to metricTable", f.Name, name)
			continue
		}
		seen[name] = true
		// The descriptor reads this very field.
		var s Stats
		v := reflect.ValueOf(&s).Elem().Field(i)
		want := MeanStd{Mean: float64(i + 1), N: 1}
		if v.Kind() == reflect.Pointer {
			v.Set(reflect.ValueOf(&want))
		} else {
			v.Set(reflect.ValueOf(want))
		}
		if got := m.Read(&s); got == nil || got.Mean != want.Mean {
			t.Errorf("metric %s does not read Stats.%s (got %v)", name, f.Name, got)
		}
		if m.Label == "" || m.Unit == "" || m.Help == "" {
			t.Errorf("metric %s lacks a label, unit or help", name)
		}
	}
	summarised := 0
	for _, m := range MetricDescs() {
		if m.Read != nil {
			summarised++
		}
	}
	if len(seen) != summarised {
		t.Errorf("%d metrics in the table have a summary, %d Stats fields", summarised, len(seen))
	}
	if !LowerIsBetter(MetricLatP99) || LowerIsBetter(MetricOps) || !Neutral(MetricNetGbps) {
		t.Error("directions do not come from the table")
	}
}
