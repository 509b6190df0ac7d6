package results

import (
	"bytes"
	"cmp"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// fixtureCase is what report.html of a generated fixture (fixtures_test.go)
// must show.
type fixtureCase struct {
	name string
	// kind is the tag the conclusion line carries; banner the status
	// box's kind label ("" for a measured run: none).
	kind, banner string
	// status is in the status box, styled statusClass.
	status, statusClass string
	// conclusion holds what the conclusion line must say.
	conclusion []string
	// charts is each chart's title (a prefix) and the series its legend
	// names, in page order; refs the published series drawn on it.
	charts []chartWant
	// notComparable: the sweep charts with published figures say they
	// are not comparable with this run, which is article ("a rehearsal"
	// when empty).
	notComparable bool
	article       string
}

type chartWant struct {
	title  string
	series []string
	// refs are the published series drawn (each legend entry's start),
	// offScale the published figures named in the legend instead.
	refs, offScale []string
}

var uptv3 = []string{"Standard NIC", "BlueField default offload", "BlueField UPTv2"}
var uptv2 = []string{"Standard NIC", "BlueField UPTv2"}
var rcuc = []string{"TCP", "RDMA RC", "RDMA UC"}

var fixtureCases = []fixtureCase{
	{name: "rehearsal-uptv2", kind: "REHEARSAL", banner: "REHEARSAL: no DPU in this run (the baseline and accelerated roles ran on one host, local, which has no BlueField DPU)",
		status: "complete: every step finished", statusClass: "warn",
		conclusion: []string{"BlueField UPTv2: TPS ", "against Standard NIC at instances=80", "3 runs each)"},
		charts: []chartWant{
			// A rehearsal on one machine: the whitepaper's figures are a
			// hundred times its TPS, so they are named, not drawn.
			{"REHEARSAL · mean TPS against instances", uptv3, nil, []string{
				"off the scale: almost 20M at instances=80, published (NVIDIA/VMware whitepaper…)",
				"off the scale: about 12.75M at instances=30, published (Same whitepaper summary"}},
			{"REHEARSAL · mean avg latency ms against instances", uptv3, nil, nil},
			{"REHEARSAL · TPS per second (run 1, instances=80)", uptv3, nil, nil},
			{"REHEARSAL · p99 latency ms per second (run 1, instances=80)", uptv3, nil, nil},
		},
		notComparable: true},
	{name: "failed-compare", kind: "MEASURED",
		status: "FAILED at step compare: variant BlueField UPTv2, instances=30: deploy: 4 of 30 servers on esx-dpu-vm did not answer PING within 10s", statusClass: "bad",
		conclusion: []string{"BlueField UPTv2: TPS +", "against Standard NIC at instances=20"},
		charts: []chartWant{
			// The whitepaper's 80 instances are not in this run's sweep.
			{"mean TPS against instances", uptv2, []string{"published (Same whitepaper summary (seed 002)): Peak TPS, standard ConnectX-5"}, nil},
			{"mean avg latency ms against instances", uptv2, nil, nil},
			// The second variant never reached 30 instances: said, not
			// drawn from another point.
			{"TPS per second (run 1, instances=30)", []string{"Standard NIC", "BlueField UPTv2: no run at instances=30"}, nil, nil},
			{"p99 latency ms per second (run 1, instances=30)", []string{"Standard NIC", "BlueField UPTv2: no run at instances=30"}, nil, nil},
		}},
	{name: "sweep-refs", kind: "MEASURED",
		status: "complete: every step finished", statusClass: "ok",
		conclusion: []string{"RDMA UC: TPS +", "against TCP at clients=128", "3 runs each)"},
		charts: []chartWant{
			{"mean TPS against clients", rcuc, []string{"published (Article \"实战对比Mellanox", "published (Article \"实战对比Mellanox"}, nil},
			{"mean avg latency ms against clients", rcuc, nil, nil},
			{"TPS per second (run 1, clients=128)", rcuc, nil, nil},
			{"p99 latency ms per second (run 1, clients=128)", rcuc, nil, nil},
		}},
	// Soft-RoCE: real measurements of the kernel's RDMA stack, labelled on
	// every chart (a PNG leaves the page), the article's hardware figures
	// drawn but said not to be comparable.
	{name: "software-rdma", kind: "SOFTWARE RDMA",
		banner: "SOFTWARE RDMA (Soft-RoCE): rxe0 on server1, rxe1 on client1; the kernel's RDMA stack on the CPU, not RDMA hardware",
		status: "complete: every step finished", statusClass: "warn",
		conclusion: []string{"RDMA UC: TPS +", "against TCP at clients=128"},
		charts: []chartWant{
			{"SOFTWARE RDMA (Soft-RoCE) · mean TPS against clients", rcuc, []string{"published (Article \"实战对比Mellanox", "published (Article \"实战对比Mellanox"}, nil},
			{"SOFTWARE RDMA (Soft-RoCE) · mean avg latency ms against clients", rcuc, nil, nil},
			{"SOFTWARE RDMA (Soft-RoCE) · TPS per second (run 1, clients=128)", rcuc, nil, nil},
			{"SOFTWARE RDMA (Soft-RoCE) · p99 latency ms per second (run 1, clients=128)", rcuc, nil, nil},
		},
		notComparable: true, article: "a run over software RDMA (Soft-RoCE)"},
}

// TestReportHTMLFixtures renders each generated fixture: a well-formed,
// self-contained page whose conclusion line carries the run's kind, whose
// status box says how it ended, and whose charts are SVGs naming the
// expected series, with the published figures at points of a sweep drawn
// as markers of their own.
func TestReportHTMLFixtures(t *testing.T) {
	for _, tc := range fixtureCases {
		t.Run(tc.name, func(t *testing.T) {
			r := loadFixture(t, filepath.Join("testdata", tc.name))
			p := renderPage(t, r)
			checkSelfContained(t, p)

			con := byID(t, p, "conclusion")
			var tag *html.Node
			walk(con, func(n *html.Node) {
				if n.Type == html.ElementNode && attr(n, "data-kind") != "" && tag == nil {
					tag = n
				}
			})
			if tag == nil || attr(tag, "data-kind") != tc.kind || textOf(tag) != tc.kind {
				t.Errorf("the conclusion line is not tagged %s: %q", tc.kind, textOf(con))
			}
			text := textOf(con)
			if !strings.HasPrefix(text, tc.kind+" ") {
				t.Errorf("conclusion %q does not start with its kind %s", text, tc.kind)
			}
			for _, want := range tc.conclusion {
				if !strings.Contains(text, want) {
					t.Errorf("conclusion %q lacks %q", text, want)
				}
			}
			status := byID(t, p, "status")
			if got := textOf(status); !strings.Contains(got, tc.status) {
				t.Errorf("status %q lacks %q", got, tc.status)
			}
			if cls := attr(status, "class"); !strings.Contains(cls, tc.statusClass) {
				t.Errorf("status styled %q, want %s", cls, tc.statusClass)
			}
			h1 := textOf(all(p, atom.H1)[0])
			if !strings.Contains(h1, "[test fixture: made-up numbers]") {
				t.Errorf("h1 %q does not say its numbers are made up", h1)
			}
			if tc.banner != "" {
				if got := textOf(byID(t, p, "kind")); got != tc.banner {
					t.Errorf("banner %q, want %q", got, tc.banner)
				}
				if !strings.HasPrefix(h1, tc.kind) {
					t.Errorf("h1 %q does not open with %s", h1, tc.kind)
				}
			} else if strings.Contains(string(p.raw), `id="kind"`) {
				t.Error("a measured run has a kind banner")
			}

			svgs := all(p, atom.Svg)
			if len(svgs) != len(tc.charts) {
				t.Fatalf("%d charts, want %d", len(svgs), len(tc.charts))
			}
			for i, want := range tc.charts {
				tx := textOf(svgs[i])
				if !strings.HasPrefix(attr(svgs[i], "aria-label"), want.title) {
					t.Errorf("chart %d is %q, want %q", i, attr(svgs[i], "aria-label"), want.title)
				}
				for _, s := range want.series {
					if !strings.Contains(tx, s) {
						t.Errorf("chart %d (%s) lacks the series %q: %q", i, want.title, s, tx)
					}
				}
				lines := strings.Split(tx, "\n")
				var drawn, named []string
				for _, l := range lines {
					switch {
					case strings.HasPrefix(l, "published ("):
						drawn = append(drawn, l)
					case strings.HasPrefix(l, "off the scale: "):
						named = append(named, l)
					}
				}
				if len(drawn) != len(want.refs) || len(named) != len(want.offScale) {
					t.Errorf("chart %d (%s) draws %q and names %q, want %d drawn and %d named", i, want.title, drawn, named, len(want.refs), len(want.offScale))
				} else {
					for j := range drawn {
						if !strings.HasPrefix(drawn[j], want.refs[j]) {
							t.Errorf("chart %d (%s) draws %q, want %q…", i, want.title, drawn[j], want.refs[j])
						}
					}
					for j := range named {
						if !strings.HasPrefix(named[j], want.offScale[j]) {
							t.Errorf("chart %d (%s) names %q, want %q…", i, want.title, named[j], want.offScale[j])
						}
					}
				}
				published := len(want.refs) + len(want.offScale)
				article := cmp.Or(tc.article, "a rehearsal")
				note := strings.Contains(tx, "published figures: not comparable, this run is "+article)
				if wantNote := tc.notComparable && published > 0; note != wantNote {
					t.Errorf("chart %d (%s): not-comparable note %v, want %v", i, want.title, note, wantNote)
				}
				caption := textOf(svgs[i].Parent)
				switch {
				case published == 0 && strings.Contains(caption, "published"):
					t.Errorf("chart %d's caption speaks of published figures it does not have: %q", i, caption)
				case len(want.refs) > 0 && !strings.Contains(caption, "◇ published figures, listed above: not measured here"),
					len(want.refs) == 0 && published > 0 && !strings.Contains(caption, "off this chart's scale"),
					published > 0 && tc.notComparable && !strings.Contains(caption, "not comparable with this run, which is "+article):
					t.Errorf("chart %d's caption does not say what its published figures are: %q", i, caption)
				}
			}
			// The published figures' full text is in the page once, in the
			// step's box, beside the charts.
			var box string
			walk(p.root, func(n *html.Node) {
				if n.Type == html.ElementNode && attr(n, "class") == "refs" {
					box += textOf(n)
				}
			})
			for _, ref := range r.References {
				if ref.Step == "" {
					continue
				}
				if want := ref.Label + ": " + ref.Value + " — source: " + ref.Source; ref.Step == r.Benches[0].Step && !strings.Contains(box, want) {
					t.Errorf("the step's box lacks %q", want)
				}
			}
		})
	}
}

// TestReportChartPNGsDrawRefs: the slide images carry the published
// markers too (the PNG of the TPS sweep chart differs from the same chart
// drawn without them).
func TestReportChartPNGsDrawRefs(t *testing.T) {
	r := loadFixture(t, filepath.Join("testdata", "sweep-refs"))
	charts := ReportCharts(r, &r.Benches[0])
	if len(charts) == 0 || len(charts[0].Chart.Refs) != 2 {
		t.Fatalf("the TPS sweep chart has no published series: %+v", charts)
	}
	for _, s := range charts[0].Chart.Refs {
		if len(s.X) != 4 || s.X[0] != 16 || s.X[3] != 128 || s.Y[0] < 125000 || s.Y[3] < 523000 {
			t.Errorf("published series %q at %v = %v, want the four clients values", s.Label, s.X, s.Y)
		}
	}
	dir := t.TempDir()
	paths, err := WriteChartPNGs(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 4 || filepath.Base(paths[0]) != "connections-ops_per_sec-sweep.png" {
		t.Errorf("wrote %v", paths)
	}
}

// TestReportHTMLSizeRehearsal: report.html of a whole redis-dpu-uptv2-shaped
// rehearsal (three variants, instances 10..80, three 30-second runs a
// point) stays small enough to send by email; its size is logged (-v).
func TestReportHTMLSizeRehearsal(t *testing.T) {
	r := loadFixture(t, filepath.Join("testdata", "rehearsal-uptv2"))
	b, err := RenderHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	svg := 0
	for rest := b; ; {
		i := bytes.Index(rest, []byte("<svg"))
		if i < 0 {
			break
		}
		j := bytes.Index(rest[i:], []byte("</svg>"))
		svg += j + len("</svg>")
		rest = rest[i+j:]
	}
	t.Logf("report.html of the redis-dpu-uptv2 rehearsal fixture: %d bytes, of which %d in its %d charts' SVG", len(b), svg, bytes.Count(b, []byte("<svg")))
	if len(b) > 250_000 {
		t.Errorf("report.html is %d bytes: too big to send", len(b))
	}
}

// TestPerSecondChartsAtOnePoint: the per-second charts draw every variant
// at the baseline's last sweep point; a variant that stopped before it is
// not drawn from an earlier point under that title.
func TestPerSecondChartsAtOnePoint(t *testing.T) {
	r := loadFixture(t, filepath.Join("testdata", "failed-compare"))
	for _, rc := range ReportCharts(r, &r.Benches[0]) {
		if !strings.Contains(rc.Name, "per-second") {
			continue
		}
		if s := rc.Chart.Series; len(s) != 2 || len(s[0].Y) != 30 || len(s[1].Y) != 0 {
			t.Errorf("%s: series of %d and %d seconds, want 30 and none", rc.Name, len(s[0].Y), len(s[1].Y))
		}
		if n := rc.Chart.Notes; len(n) != 1 || n[0] != "BlueField UPTv2: no run at instances=30" {
			t.Errorf("%s: notes %q", rc.Name, n)
		}
	}
}
