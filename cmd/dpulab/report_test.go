//go:build unix

package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"
)

// copyResults puts a fixture's results.json alone in a new folder.
func copyResults(t *testing.T, from string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(from, results.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.ResultsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

const failedSweep = "../../steps/results/testdata/failed-sweep"

func TestReportFormats(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"report.html", "report.md", "results.json", "samples.csv"}},
		{[]string{"--format", "html"}, []string{"report.html", "results.json"}},
		{[]string{"--format", "md"}, []string{"report.md", "results.json"}},
		{[]string{"--format", "html,md"}, []string{"report.html", "report.md", "results.json"}},
	} {
		dir := copyResults(t, failedSweep)
		stdout, _, err := runCmd(t, append(append([]string{"report"}, tt.args...), dir)...)
		if err != nil {
			t.Fatalf("report %v: %v", tt.args, err)
		}
		if got := files(t, dir); !slices.Equal(got, tt.want) {
			t.Errorf("report %v wrote %v, want %v", tt.args, got, tt.want)
		}
		if n := strings.Count(stdout, "wrote "); n != len(tt.want)-1 {
			t.Errorf("report %v says %q", tt.args, stdout)
		}
	}
}

func TestReportPNG(t *testing.T) {
	dir := copyResults(t, failedSweep)
	if _, _, err := runCmd(t, "report", "--format", "png", dir); err != nil {
		t.Fatal(err)
	}
	got := files(t, dir)
	want := []string{"charts/baseline-latency_p99_ms-per-second.png", "charts/baseline-ops_per_sec-per-second.png",
		"charts/compare-transport-latency_avg_ms-sweep.png", "charts/compare-transport-latency_p99_ms-per-second.png",
		"charts/compare-transport-ops_per_sec-per-second.png", "charts/compare-transport-ops_per_sec-sweep.png", "results.json"}
	if !slices.Equal(got, want) {
		t.Fatalf("wrote %v, want %v", got, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, want[5]))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || cfg.Width != 1920 || cfg.Height != 1080 {
		t.Errorf("PNG %dx%d (%v), want 1920x1080", cfg.Width, cfg.Height, err)
	}
}

// TestReportOlderVersion re-renders a real recorded run written by
// results version 1, leaving its results.json as it was.
func TestReportOlderVersion(t *testing.T) {
	dir := copyResults(t, "../../tui/testdata/recorded")
	before, _ := os.ReadFile(filepath.Join(dir, results.ResultsFile))
	if _, _, err := runCmd(t, "report", "--format", "html", dir); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, results.ReportHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="conclusion"><span class="kind" data-kind="MEASURED">MEASURED</span> Unix socket: TPS`, "<svg", "TCP loopback"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, results.ResultsFile)); !bytes.Equal(before, after) {
		t.Error("report rewrote results.json")
	}
}

func TestReportBadInput(t *testing.T) {
	dir := copyResults(t, failedSweep)
	if _, _, err := runCmd(t, "report", "--format", "pdf", dir); err == nil || !strings.Contains(err.Error(), `unknown --format "pdf": use one or more of all, html, md, png`) {
		t.Errorf("--format pdf: %v", err)
	}
	if _, _, err := runCmd(t, "report", t.TempDir()); err == nil || !strings.Contains(err.Error(), "a results folder?") {
		t.Errorf("empty folder: %v", err)
	}
	if got := files(t, dir); !slices.Equal(got, []string{"results.json"}) {
		t.Errorf("a refused format still wrote %v", got)
	}
}

// TestReportPublishedFigures: `dpulab report` of a rehearsal shaped like
// redis-dpu-uptv2 (made-up numbers) tags its conclusion REHEARSAL and names
// the whitepaper's figures, a hundred times its TPS, in the TPS chart's
// legend instead of drawing them; of a run swept over clients with a
// published figure per point, it draws them in the slide image too.
func TestReportPublishedFigures(t *testing.T) {
	dir := copyResults(t, "../../steps/results/testdata/rehearsal-uptv2")
	if _, _, err := runCmd(t, "report", "--format", "html", dir); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, results.ReportHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<span class="kind" data-kind="REHEARSAL">REHEARSAL</span> BlueField UPTv2: TPS`,
		"off the scale: almost 20M at instances=80", "published figures: not comparable, this run is a rehearsal"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	dir = copyResults(t, "../../steps/results/testdata/sweep-refs")
	if _, _, err := runCmd(t, "report", "--format", "png", dir); err != nil {
		t.Fatal(err)
	}
	withRefs, err := os.ReadFile(filepath.Join(dir, "charts", "connections-ops_per_sec-sweep.png"))
	if err != nil {
		t.Fatal(err)
	}
	// The same run without its published figures draws another image.
	r, err := results.LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.References = nil
	bare := t.TempDir()
	if _, err := results.WriteChartPNGs(bare, r); err != nil {
		t.Fatal(err)
	}
	without, err := os.ReadFile(filepath.Join(bare, "charts", "connections-ops_per_sec-sweep.png"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(withRefs, without) {
		t.Error("the slide image of the TPS sweep chart does not show the published figures")
	}
}
