// Package loadtest holds test helpers shared by the load kind's tests
// (steps/kinds/load) and the engine's end-to-end tests of it (steps):
// histograms of the bench's shape and made-up sysfs trees. Tests only.
package loadtest

import (
	"os"
	"path/filepath"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dpulab/dpulab/steps/results"
)

// Hist is a histogram of the bench's shape holding vals (µs), and its
// encoding as the bench sends it.
func Hist(t testing.TB, vals ...int64) (*hdrhistogram.Histogram, string) {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, v := range vals {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return h, string(b)
}

// LatencyMs is h's latency summary in milliseconds, as results hold it.
func LatencyMs(h *hdrhistogram.Histogram) results.Latency {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return results.Latency{Avg: h.Mean() / 1000, P50: ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)),
		P99: ms(h.ValueAtQuantile(99)), P999: ms(h.ValueAtQuantile(99.9)), Max: ms(h.Max())}
}

// FakeSysfs makes a sysfs tree under a temporary directory whose
// class/infiniband holds each device as the kernel links it: a software
// one (rxe, siw) to devices/virtual/infiniband/NAME, a hardware one to its
// PCI device's infiniband/NAME.
func FakeSysfs(t testing.TB, devs map[string]bool) string {
	t.Helper()
	root := t.TempDir()
	class := filepath.Join(root, "class", "infiniband")
	if err := os.MkdirAll(class, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, software := range devs {
		dir := filepath.Join("devices", "pci0000:00", "0000:00:03.0", "infiniband", name)
		if software {
			dir = filepath.Join("devices", "virtual", "infiniband", name)
		}
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..", "..", dir), filepath.Join(class, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
