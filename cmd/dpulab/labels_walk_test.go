//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/steps/results/svgchart"
)

// The quickstart's variants: the compare step's are real measurements
// (TCP loopback, a Unix socket), the offload step's are emulated paths.
var (
	walkReal     = []string{"TCP loopback", "Unix socket"}
	walkEmulated = []string{"host does it all", "partial offload", "full offload"}
)

// TestLabelsWalkEveryOutput runs the quickstart (shortened with --set) as
// root, so that one results folder holds real variants (the compare step)
// and emulated ones (the offload step), and walks every output outside the
// TUI: the headless lines (the printer's, on stderr), the --json events,
// results.json, samples.csv, report.md, report.html and the chart exports
// (`dpulab report --format png,svg`). Wherever an emulated variant's
// figures appear they carry EMULATION; wherever a real variant's do, they
// do not, although the lab emulates.
func TestLabelsWalkEveryOutput(t *testing.T) {
	requireNetRoot(t)
	if testing.Short() {
		t.Skip("builds dpulab and runs the quickstart")
	}
	bin := testpeer.Dpulab(t)
	t.Cleanup(func() { killServers(bin) })
	port := testpeer.FreePorts(t, 2)
	resDir := filepath.Join(t.TempDir(), "results")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "quickstart", "--json", "--yes", "--results", resDir,
		"--set", "instances=2", "--set", fmt.Sprint("port=", port), "--set", "duration=2s", "--set", "warmup=0s",
		"--set", "runs=2", "--set", "firewall_rules=50")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dpulab run quickstart: %v\n%s", err, tail(&stderr, 40))
	}
	assertNoServers(t, bin, "after the quickstart")

	// 1. The headless lines: each run line and each summary line of a
	// variant says EMULATION exactly when the variant is emulated.
	runLine := regexp.MustCompile(`^  \S+ \| (.*) run \d+/\d+: [0-9,]+ ops/s`)
	summary := regexp.MustCompile(`^   (\[[A-Z +]+\] )?(compare|offload) / ([^:]+): TPS `)
	seenRun, seenSummary := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if m := runLine.FindStringSubmatch(l); m != nil {
			v := strings.TrimPrefix(m[1], "[EMULATION] ")
			seenRun[v] = true
			checkLabel(t, "headless run line", v, l)
		}
		if m := summary.FindStringSubmatch(l); m != nil {
			seenSummary[m[3]] = true
			checkLabel(t, "headless summary line", m[3], l)
		}
	}
	for _, v := range append(walkReal, walkEmulated...) {
		if !seenRun[v] || !seenSummary[v] {
			t.Errorf("the headless output has no run line (%v) or no summary line (%v) of %q:\n%s", seenRun[v], seenSummary[v], v, stderr.String())
		}
	}

	// 2. The --json events: progress, sample and lab_finished carry each
	// variant's figures.
	var dir string
	samples := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event line %q: %v", line, err)
		}
		emulation := func(f any) bool {
			m, _ := f.(map[string]any)
			s, _ := m["emulation"].(string)
			return s != ""
		}
		switch ev["type"] {
		case "sample":
			v, _ := ev["variant"].(string)
			if step := ev["step"]; step == "compare" || step == "offload" {
				samples[v] = true
				if emulation(ev["figures"]) != isEmulated(v) {
					t.Errorf("sample of %q: figures %v", v, ev["figures"])
				}
			}
		case "progress":
			if step := ev["step"]; step == "compare" || step == "offload" {
				if emulation(ev["figures"]) != (step == "offload") {
					t.Errorf("progress of %s (%v): figures %v", step, ev["label"], ev["figures"])
				}
			}
		case "lab_finished":
			dir, _ = ev["results_dir"].(string)
			vs, _ := ev["variants"].([]any)
			n := 0
			for _, x := range vs {
				m, _ := x.(map[string]any)
				v, _ := m["variant"].(string)
				if m["step"] == "compare" || m["step"] == "offload" {
					n++
					if emulation(m["figures"]) != isEmulated(v) {
						t.Errorf("lab_finished's variant %q: figures %v", v, m["figures"])
					}
				}
			}
			if n != len(walkReal)+len(walkEmulated) {
				t.Errorf("lab_finished lists %d variants of compare and offload, want %d: %v", n, len(walkReal)+len(walkEmulated), vs)
			}
		}
	}
	for _, v := range append(walkReal, walkEmulated...) {
		if !samples[v] {
			t.Errorf("no sample event of %q", v)
		}
	}
	if dir == "" {
		t.Fatalf("no results folder in lab_finished:\n%s", tail(&stdout, 5))
	}
	walkResultsFolder(t, dir)
}

// walkResultsFolder checks results.json, samples.csv, report.md,
// report.html and the chart exports of a quickstart run's folder.
func walkResultsFolder(t *testing.T, dir string) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// results.json: each variant's figures.
	r, err := results.LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Benches []struct {
			Step     string
			Variants []struct{ Label, Figures, Emulation string }
		}
	}
	if err := json.Unmarshal([]byte(read(results.ResultsFile)), &raw); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range raw.Benches {
		for _, v := range c.Variants {
			if c.Step != "compare" && c.Step != "offload" {
				continue
			}
			n++
			if want := map[bool]string{true: "EMULATION"}[isEmulated(v.Label)]; v.Figures != want || (v.Emulation != "") != isEmulated(v.Label) {
				t.Errorf("results.json: %s variant %q has figures %q and emulation %q, want figures %q", c.Step, v.Label, v.Figures, v.Emulation, want)
			}
		}
	}
	if n != len(walkReal)+len(walkEmulated) {
		t.Errorf("results.json has %d variants of compare and offload, want %d", n, len(walkReal)+len(walkEmulated))
	}

	// samples.csv: the figures column of every row.
	rows, err := csv.NewReader(strings.NewReader(read(results.SamplesFile))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 || rows[0][1] != "variant" || rows[0][2] != "figures" {
		t.Fatalf("samples.csv header: %v", rows[0])
	}
	perVariant := map[string]int{}
	for _, row := range rows[1:] {
		perVariant[row[1]]++
		if want := map[bool]string{true: "EMULATION"}[isEmulated(row[1])]; row[2] != want {
			t.Errorf("samples.csv row of %q: figures %q, want %q", row[1], row[2], want)
		}
	}
	for _, v := range append(walkReal, walkEmulated...) {
		if perVariant[v] == 0 {
			t.Errorf("samples.csv has no row of %q", v)
		}
	}

	// report.md: the title and banner say the run is part emulation; the
	// offload section is headed EMULATION, each of its chart legends too;
	// the compare section says EMULATION nowhere.
	md := read(results.ReportFile)
	if title, _, _ := strings.Cut(md, "\n"); !strings.HasPrefix(title, "# "+results.PartEmulation+": ") {
		t.Errorf("report.md's title: %q", title)
	}
	if !strings.Contains(md, "> **EMULATION in part: the figures of offload are an emulation") || !strings.Contains(md, "those of bench, compare are not emulated") {
		t.Errorf("report.md's banner does not say which figures are emulated:\n%s", head(md, 6))
	}
	compareMD, offloadMD := mdSection(md, "(`compare`)"), mdSection(md, "(`offload`)")
	if compareMD == "" || offloadMD == "" {
		t.Fatalf("report.md lacks the compare or the offload section:\n%s", md)
	}
	if strings.Contains(compareMD, "EMULATION") {
		t.Errorf("report.md labels the real compare EMULATION:\n%s", compareMD)
	}
	if !strings.HasPrefix(offloadMD, "## EMULATION: ") {
		t.Errorf("report.md's offload section is not headed EMULATION: %q", head(offloadMD, 1))
	}
	for _, v := range walkEmulated {
		if !strings.Contains(offloadMD, "[EMULATION] "+v) || !strings.Contains(offloadMD, "**"+v+"**") {
			t.Errorf("report.md's offload section: no legend [EMULATION] %s", v)
		}
	}
	for _, v := range walkReal {
		if !strings.Contains(compareMD, "| "+v+" |") {
			t.Errorf("report.md's compare table has no row %q", v)
		}
	}

	// report.html: the same, section by section.
	page := read(results.ReportHTMLFile)
	if !strings.Contains(page, `<span class="kind" id="kind">EMULATION in part: the figures of offload are an emulation`) {
		t.Errorf("report.html's banner does not say which figures are emulated")
	}
	compareHTML, offloadHTML := htmlSection(page, "<code>compare</code>"), htmlSection(page, "<code>offload</code>")
	if compareHTML == "" || offloadHTML == "" {
		t.Fatal("report.html lacks the compare or the offload section")
	}
	if strings.Contains(compareHTML, "EMULATION") {
		t.Errorf("report.html labels the real compare EMULATION")
	}
	if !strings.Contains(offloadHTML, "<h2>EMULATION: ") {
		t.Errorf("report.html's offload section is not headed EMULATION")
	}
	for _, v := range walkEmulated {
		if !strings.Contains(offloadHTML, "[EMULATION] "+v) {
			t.Errorf("report.html's offload charts: no legend [EMULATION] %s", v)
		}
	}

	// The chart exports: every image carries the band (what, lab, date,
	// hosts); an emulated variant's legend says EMULATION, a real one's
	// chart says MEASURED and never EMULATION.
	if _, stderr, err := runCmd(t, "report", dir, "--format", "png,svg"); err != nil {
		t.Fatalf("report --format png,svg: %v\n%s", err, stderr)
	}
	date := r.Started.UTC().Format("2006-01-02")
	for _, stem := range []string{"compare-ops_per_sec-per-second", "offload-ops_per_sec-per-second"} {
		svg := read(filepath.Join(results.ChartsDir, stem+".svg"))
		emulated := strings.HasPrefix(stem, "offload")
		band := "MEASURED · lab quickstart · " + date + " · 1 host"
		if emulated {
			band = "EMULATION · lab quickstart · " + date + " · 1 host"
		}
		if !strings.Contains(svg, band) {
			t.Errorf("%s.svg lacks its band %q", stem, band)
		}
		if strings.Contains(svg, "EMULATION") != emulated {
			t.Errorf("%s.svg: EMULATION in it is %v, want %v", stem, !emulated, emulated)
		}
		vs := walkReal
		if emulated {
			vs = walkEmulated
		}
		for _, v := range vs {
			want := map[bool]string{true: "[EMULATION] "}[emulated] + v
			if !strings.Contains(svg, ">"+want+"<") {
				t.Errorf("%s.svg: no legend %q", stem, want)
			}
		}
		// The PNG is drawn from the same chart: the file is that chart with
		// its band, which darkens the image's top rows; without the band
		// they are white.
		b := []byte(read(filepath.Join(results.ChartsDir, stem+".png")))
		var rc *results.ReportChart
		for i := range r.Benches {
			for _, c := range results.ExportCharts(r, &r.Benches[i]) {
				if c.Name == stem {
					rc = &c
				}
			}
		}
		if rc == nil {
			t.Fatalf("no chart %s", stem)
		}
		if !strings.Contains(rc.Chart.Band, band) {
			t.Errorf("%s: band %q, want %q", stem, rc.Chart.Band, band)
		}
		drawn, err := svgchart.PNG(rc.Chart)
		if err != nil {
			t.Fatal(err)
		}
		bare := rc.Chart
		bare.Band = ""
		plain, err := svgchart.PNG(bare)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, drawn) || bytes.Equal(drawn, plain) {
			t.Errorf("%s.png is not the chart with its band (equal to it: %v; band changes the image: %v)", stem, bytes.Equal(b, drawn), !bytes.Equal(drawn, plain))
		}
		if dark, white := topRowDark(t, b), topRowDark(t, plain); !dark || white {
			t.Errorf("%s.png: top row dark with the band %v, without %v", stem, dark, white)
		}
	}
}

// checkLabel fails when line, which carries variant v's figures, does not
// say EMULATION while v is emulated, or says it while v is real.
func checkLabel(t *testing.T, what, v, line string) {
	t.Helper()
	if got := strings.Contains(line, "[EMULATION] "); got != isEmulated(v) {
		t.Errorf("%s of %q: labelled EMULATION %v, want %v: %s", what, v, got, isEmulated(v), line)
	}
}

func isEmulated(v string) bool {
	for _, e := range walkEmulated {
		if v == e {
			return true
		}
	}
	return false
}

// mdSection is report.md's "## " section whose heading contains key, up
// to the next heading of that level.
func mdSection(md, key string) string {
	for _, s := range strings.Split(md, "\n## ") {
		if h, _, _ := strings.Cut(s, "\n"); strings.Contains(h, key) {
			return "## " + s
		}
	}
	return ""
}

// htmlSection is the <section> of report.html whose heading contains key.
func htmlSection(page, key string) string {
	for _, s := range strings.Split(page, "<section") {
		s, _, _ = strings.Cut(s, "</section>")
		if h, _, _ := strings.Cut(s, "</h2>"); strings.Contains(h, key) {
			return s
		}
	}
	return ""
}

func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// topRowDark reports whether the PNG's second row of pixels is dark in its
// middle, where the band is drawn.
func topRowDark(t *testing.T, b []byte) bool {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	bd := img.Bounds()
	r, g, bl, _ := img.At(bd.Min.X+10, bd.Min.Y+1).RGBA()
	return r < 0x4000 && g < 0x4000 && bl < 0x4000
}
