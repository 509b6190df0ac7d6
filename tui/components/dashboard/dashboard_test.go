package dashboard

import (
	"math"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
)

func sample(variant string, ops float64) steps.Sample {
	cpu := 50.0
	return steps.Sample{Step: "compare", Variant: variant, Run: 1, Point: results.Point{OpsPerSec: ops, ServerCPU: &cpu}}
}

func TestVariantChangeLeavesGap(t *testing.T) {
	m := New(common.NewCommon(true, 100, 28))
	m.AddSample(sample("tcp", 100))
	m.AddSample(sample("tcp", 110))
	m.AddSample(sample("unix", 150))
	got, _ := m.Series(results.MetricOps)
	if len(got) != 4 || !math.IsNaN(got[2]) || got[3] != 150 {
		t.Fatalf("tps series %v, want [100 110 NaN 150]", got)
	}
	if gbps, _ := m.Series(results.MetricNetGbps); !math.IsNaN(gbps[len(gbps)-1]) {
		t.Fatal("an unmeasured metric must be NaN, never 0")
	}
	if m.SeriesLabel() != "unix · run 1" {
		t.Fatalf("label %q", m.SeriesLabel())
	}
}

func TestResizesCleanly(t *testing.T) {
	t.Run("built-in metrics", func(t *testing.T) { resizes(t) })
	// A fifth chart and big number (a metric registered beside the
	// built-ins) must fit too.
	remove, err := results.RegisterMetric(results.MetricDesc{Name: "extra", Label: "extra %", Unit: "%", Help: "a test metric", Better: results.Lower,
		Sample: results.PointMetric("extra"), Live: &results.Live{Chart: "extra (%)", Big: "extra"}})
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	t.Run("a metric more", func(t *testing.T) { resizes(t) })
}

func resizes(t *testing.T) {
	m := New(common.NewCommon(true, 100, 28))
	for i := 0; i < 700; i++ { // more than History
		s := sample("tcp", float64(1000+i))
		s.Point.Metrics = map[string]float64{"extra": float64(i % 100)}
		m.AddSample(s)
	}
	for _, sz := range [][2]int{{80, 22}, {100, 28}, {200, 60}, {120, 16}} {
		m.SetSize(sz[0], sz[1])
		v := m.View()
		lines := strings.Split(v, "\n")
		if len(lines) > sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > sz[0] {
				t.Errorf("%dx%d: line is %d wide: %q", sz[0], sz[1], w, l)
			}
		}
	}
	m.SetSize(79, 30)
	if !strings.Contains(m.View(), "needs at least 80×24") {
		t.Fatal("below 80 columns the dashboard must say so instead of drawing")
	}
}

// TestUnmeasuredMetricGivesWay: every chart and big number waits for data
// at first; once the samplers have had time to report, one whose metrics
// never came (no network counters here) leaves its room to the others.
func TestUnmeasuredMetricGivesWay(t *testing.T) {
	m := New(common.NewCommon(true, 100, 28))
	m.AddSample(sample("tcp", 100))
	v := m.View()
	for _, want := range []string{"network (Gb/s)", "waiting for data…", "net – Gb/s", "TPS (ops/s)", "server CPU (%)"} {
		if !strings.Contains(v, want) {
			t.Errorf("first second: view lacks %q:\n%s", want, v)
		}
	}
	for i := 1; i < settle; i++ {
		m.AddSample(sample("tcp", float64(100+i)))
	}
	v = m.View()
	for _, gone := range []string{"network (Gb/s)", "net – Gb/s"} {
		if strings.Contains(v, gone) {
			t.Errorf("after %d seconds without it, view still shows %q:\n%s", settle, gone, v)
		}
	}
	for _, want := range []string{"TPS (ops/s)", "server CPU (%)", "latency (ms)", "CPU 50.0 %"} {
		if !strings.Contains(v, want) {
			t.Errorf("after %d seconds: view lacks %q:\n%s", settle, want, v)
		}
	}
	if lines := strings.Split(v, "\n"); len(lines) > 28 {
		t.Errorf("%d lines, want at most 28", len(lines))
	}
}

// TestOnlyWithDataCharts: the RDMA ports chart and the ESXi hosts' charts
// are not drawn, not even as "waiting for data…", where nothing measures
// them (no RDMA ports, no vCenter), and appear with the first second that
// carries them.
func TestOnlyWithDataCharts(t *testing.T) {
	charts := map[string]string{results.MetricRDMAGbps: "RDMA ports (Gb/s)", results.MetricESXiCPU: "host (ESXi) CPU (%)", results.MetricESXiNetGbps: "host (ESXi) network (Gb/s)"}
	for metric, caption := range charts {
		m := New(common.NewCommon(true, 100, 40))
		m.AddSample(sample("tcp", 100))
		if v := m.View(); strings.Contains(v, caption) {
			t.Fatalf("no %s data, yet its chart is drawn:\n%s", metric, v)
		}
		s := sample("rc", 100)
		s.Point.Metrics = map[string]float64{metric: 12.5}
		m.AddSample(s)
		if v := m.View(); !strings.Contains(v, caption) {
			t.Fatalf("a second with %s, yet no chart %q:\n%s", metric, caption, v)
		}
	}
}
