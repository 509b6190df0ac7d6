package compare

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/tui/common"
)

func TestDeltaTextReadsWithoutColour(t *testing.T) {
	byKey := map[string]metric{}
	for _, m := range tableMetrics() {
		byKey[m.key] = m
	}
	tests := []struct {
		metric string
		pct    float64
		want   string
	}{
		{"ops_per_sec", 31.24, "+31.2% better"},
		{"ops_per_sec", -5, "-5.0% worse"},
		{"latency_p99_ms", -25, "-25.0% better"},
		{"latency_p99_ms", 12, "+12.0% worse"},
		{"server_cpu_pct", 0.01, "+0.0% same"},
		// Less traffic on the wire is neither better nor worse in itself.
		{"net_gbps", -81.6, "-81.6%"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			got, _, _ := deltaText(byKey[tc.metric], tc.pct)
			if got != tc.want {
				t.Fatalf("deltaText(%s, %v) = %q, want %q", tc.metric, tc.pct, got, tc.want)
			}
		})
	}
}

func TestViewFitsEverySize(t *testing.T) {
	res, err := results.LoadResults("../../testdata/recorded")
	if err != nil {
		t.Fatal(err)
	}
	for _, sz := range [][2]int{{80, 22}, {100, 28}, {160, 50}} {
		for tab := TabTable; tab <= TabTCO; tab++ {
			m := New(common.NewCommon(true, sz[0], sz[1]), res, tco.Compute)
			m.SetTab(tab)
			lines := strings.Split(m.View(), "\n")
			if len(lines) > sz[1] {
				t.Errorf("%dx%d tab %d: %d lines", sz[0], sz[1], tab, len(lines))
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > sz[0] {
					t.Errorf("%dx%d tab %d: line %q is %d wide", sz[0], sz[1], tab, l, w)
				}
			}
		}
	}
}

func TestNoResults(t *testing.T) {
	m := New(common.NewCommon(true, 100, 30), nil, nil)
	if !strings.Contains(m.View(), "No compare results yet") {
		t.Fatal("an empty compare view must say what to do")
	}
}
