package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results/svgchart"
)

// mixedRun is a run with a real compare (tcp, unix) and a compare that
// mixes a real and an emulated variant in one table (direct, emulated).
// Its numbers are made up by a seeded generator.
func mixedRun() *Results {
	rng := rand.New(rand.NewPCG(7, 7))
	real := Compare{Step: "compare", Title: "TCP against a Unix socket", Variants: []VariantResult{{Label: "tcp"}, {Label: "unix"}}}
	genCompare(rng, &real, []string{""}, 2, 3, func(vi int, _ string) (shape, bool) {
		return shape{ops: 100000 + 20000*float64(vi), inflight: 64, cpu: 90, cores: 2, valueBytes: 256}, true
	})
	mixed := Compare{Step: "offload", Title: "Offload", Variants: []VariantResult{
		{Label: "direct"},
		{Label: "overlay", Emulation: "overlay in this machine's kernel"},
	}}
	genCompare(rng, &mixed, []string{""}, 2, 3, func(vi int, _ string) (shape, bool) {
		return shape{ops: 80000 - 20000*float64(vi), inflight: 64, cpu: 90, cores: 2, valueBytes: 256}, true
	})
	return &Results{Version: ResultsVersion, Lab: "quickstart", Title: "Mixed" + fixtureNote, RunID: "r", Status: RunComplete,
		Started: fixtureStart, Hosts: []HostInfo{{Name: "a"}, {Name: "b"}},
		Emulation: "some paths are emulated", Benches: []Compare{real, mixed}}
}

// TestLabelsMixedRun: a run with real and emulated variants, one table of
// them mixing both, labels each variant's figures in every file and export
// (TestLabelsWalkEveryOutput walks the same over a real quickstart run).
func TestLabelsMixedRun(t *testing.T) {
	r := mixedRun()
	if k := ReportKindTitle(r); k != PartEmulation {
		t.Errorf("ReportKindTitle = %q, want %q", k, PartEmulation)
	}
	// Where and when, never "here": a report or replay is read elsewhere.
	want := "EMULATION in part: the figures of offload (overlay) are an emulation (some paths are emulated); those of compare are not emulated: measured on a, b on " + fixtureStart.UTC().Format("2006-01-02")
	if k := ReportKind(r); !strings.HasPrefix(k, want) || strings.Contains(k, "here") {
		t.Errorf("ReportKind = %q, want it to start %q", k, want)
	}
	r.Hosts, r.Started = nil, time.Time{}
	if k := ReportKind(r); !strings.HasSuffix(k, "measured on the hosts this run names") {
		t.Errorf("ReportKind without hosts or date = %q", k)
	}
	r = mixedRun()
	if f := CompareFigures(r, &r.Benches[1]); f.Emulation != "1 of 2 variants emulated" {
		t.Errorf("CompareFigures of the mixed compare: %+v", f)
	}

	dir := t.TempDir()
	if err := WriteResults(dir, r); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var raw struct {
		Benches []struct{ Variants []map[string]any }
	}
	if err := json.Unmarshal([]byte(read(ResultsFile)), &raw); err != nil {
		t.Fatal(err)
	}
	for bi, c := range raw.Benches {
		for _, v := range c.Variants {
			want := map[bool]any{true: "EMULATION"}[v["label"] == "overlay"]
			if v["figures"] != want {
				t.Errorf("results.json: bench %d variant %v: figures %v, want %v", bi, v["label"], v["figures"], want)
			}
		}
	}
	// The figures field is the file's, not the source of the label: a
	// reader that changes emulation gets the label of what it changed.
	back, err := LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	back.Benches[1].Variants[1].Emulation = ""
	if f := VariantFigures(back, &back.Benches[1].Variants[1]); f.Short() != "" {
		t.Errorf("VariantFigures read the figures field back: %+v", f)
	}

	rows, err := csv.NewReader(strings.NewReader(read(SamplesFile))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows[1:] {
		if want := map[bool]string{true: "EMULATION"}[row[1] == "overlay"]; row[2] != want {
			t.Errorf("samples.csv row %v: figures %q, want %q", row[:3], row[2], want)
		}
	}

	// report.md: each row of the mixed table says its own; the real
	// table's rows and the real compare say nothing.
	md := read(ReportFile)
	for _, want := range []string{"# PART EMULATION: Mixed", "## EMULATION: Offload (`offload`)", "| overlay [EMULATION] |", "| direct |",
		"| tcp |", "| unix |", "[EMULATION] overlay", "## TCP against a Unix socket (`compare`)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "[EMULATION] direct") || strings.Contains(md, "direct [EMULATION]") {
		t.Errorf("report.md labels the real variant direct EMULATION:\n%s", md)
	}
	page := read(ReportHTMLFile)
	for _, want := range []string{"<td>overlay [EMULATION]</td>", "<td>direct</td>", "<h2>EMULATION: Offload <code>offload</code></h2>",
		"<h2>TCP against a Unix socket <code>compare</code></h2>", `<em class="figures">[EMULATION: overlay in this machine&#39;s kernel]</em>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	// The exports: the mixed chart's band says how many are emulated, its
	// legends which; the real compare's says MEASURED.
	for i, wantBand := range []string{"MEASURED · lab quickstart · 2026-12-03 · 2 hosts", "EMULATION (1 of 2 variants emulated) · lab quickstart · 2026-12-03 · 2 hosts"} {
		for _, rc := range ExportCharts(r, &r.Benches[i]) {
			if rc.Chart.Band != wantBand {
				t.Errorf("%s: band %q, want %q", rc.Name, rc.Chart.Band, wantBand)
			}
			svg, err := svgchart.SVG(rc.Chart)
			if errors.Is(err, svgchart.ErrNoData) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(svg, []byte(">"+wantBand+"<")) {
				t.Errorf("%s: the SVG does not draw its band", rc.Name)
			}
			if i == 1 && (!bytes.Contains(svg, []byte(">[EMULATION] overlay<")) || !bytes.Contains(svg, []byte(">direct<"))) {
				t.Errorf("%s: legends are not labelled per variant", rc.Name)
			}
		}
	}
	paths, err := WriteChartSVGs(dir, r)
	if err != nil || len(paths) == 0 {
		t.Fatalf("WriteChartSVGs: %v, %v", paths, err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("<?xml")) || !bytes.Contains(b, []byte(`xmlns="http://www.w3.org/2000/svg"`)) || !bytes.Contains(b, []byte("lab quickstart")) {
			t.Errorf("%s is not a standalone SVG with its band", p)
		}
	}
}

// TestReportKindWholeAndNone: a run whose every variant is emulated is
// EMULATION as a whole; a file whose variants do not say (r.Emulation
// alone) too; a run with emulation that kept no emulated figure is not.
func TestReportKindWholeAndNone(t *testing.T) {
	r := mixedRun()
	r.Benches = r.Benches[1:]
	r.Benches[0].Variants[0].Emulation = "direct veth"
	if k := ReportKindTitle(r); k != "EMULATION" {
		t.Errorf("all emulated: title %q", k)
	}
	if k := ReportKind(r); k != "EMULATION: some paths are emulated" {
		t.Errorf("all emulated: banner %q", k)
	}
	legacy := &Results{Emulation: "paths emulated", Benches: []Compare{{Step: "s", Variants: []VariantResult{{Label: "v"}}}}}
	if k := ReportKindTitle(legacy); k != "EMULATION" {
		t.Errorf("variants that do not say: title %q", k)
	}
	// A file that says it emulated but whose variants do not say which
	// is labelled as a whole: which figures are emulated is not known.
	none := mixedRun()
	none.Benches = none.Benches[:1]
	if k, t2 := ReportKind(none), ReportKindTitle(none); k != "EMULATION: some paths are emulated" || t2 != "EMULATION" {
		t.Errorf("emulation no variant says: banner %q, title %q", k, t2)
	}
	none.Emulation = ""
	if k, t2 := ReportKind(none), ReportKindTitle(none); k != "" || t2 != "" {
		t.Errorf("nothing emulated: banner %q, title %q", k, t2)
	}
	reh := mixedRun()
	reh.Rehearsal, reh.RehearsalReason = true, "one host"
	if k := ReportKindTitle(reh); k != "REHEARSAL+"+PartEmulation {
		t.Errorf("rehearsal with part emulation: %q", k)
	}
	if k := ReportKind(reh); !strings.HasPrefix(k, "REHEARSAL: no DPU in this run (one host); EMULATION in part: ") {
		t.Errorf("rehearsal with part emulation: %q", k)
	}
	rows, err := SamplesCSV(reh)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rows), "offload,overlay,REHEARSAL+EMULATION,") || !strings.Contains(string(rows), "offload,direct,REHEARSAL,") {
		t.Errorf("samples.csv of a rehearsal:\n%s", head(string(rows), 4))
	}
}

// TestVariantSummaries: the closing lines' figures, each labelled.
func TestVariantSummaries(t *testing.T) {
	var lines []string
	for _, s := range VariantSummaries(mixedRun()) {
		lines = append(lines, s.Line())
	}
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "compare / tcp: TPS ") || !strings.HasPrefix(lines[2], "offload / direct: TPS ") ||
		!strings.HasPrefix(lines[3], "[EMULATION] offload / overlay: TPS ") || !strings.HasSuffix(lines[3], " over 2 runs") {
		t.Errorf("summaries:\n%s", strings.Join(lines, "\n"))
	}
}

func head(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	return strings.Join(l[:min(n, len(l))], "\n")
}
