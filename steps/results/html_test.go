package results

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The fixture testdata/failed-sweep/results.json is made up for the tests
// (its numbers are not measurements): a rehearsal that failed at its last
// step, a single bench, a compare swept over instances with three runs a
// point and a run that ended early, references (one tied to the compare,
// one not), a TCO estimate, and hostile text: a title with <script> and
// control characters, an error with an OSC sequence, a label with <DPU>.
func loadFixture(t *testing.T, dir string) *Results {
	t.Helper()
	r, err := LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// page is report.html parsed: its tree and its raw bytes.
type page struct {
	raw  []byte
	root *html.Node
}

func renderPage(t *testing.T, r *Results) page {
	t.Helper()
	b, err := RenderHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	checkWellFormed(t, b)
	root, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return page{raw: b, root: root}
}

// voidElements have no end tag in HTML.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// checkWellFormed: every element is closed, in order (html.Parse would
// silently repair what a browser also repairs, so the tokens are checked
// instead), and each inline <svg> is well-formed XML on its own.
func checkWellFormed(t *testing.T, b []byte) {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(b))
	var stack []string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) {
				t.Fatalf("tokenizer: %v", z.Err())
			}
			if len(stack) > 0 {
				t.Fatalf("elements never closed: %v", stack)
			}
			goto svgs
		case html.StartTagToken:
			name, _ := z.TagName()
			if !voidElements[string(name)] {
				stack = append(stack, string(name))
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if len(stack) == 0 || stack[len(stack)-1] != string(name) {
				t.Fatalf("</%s> closes %v", name, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
svgs:
	rest := b
	for {
		i := bytes.Index(rest, []byte("<svg"))
		if i < 0 {
			return
		}
		j := bytes.Index(rest[i:], []byte("</svg>"))
		if j < 0 {
			t.Fatal("an <svg> is never closed")
		}
		d := xml.NewDecoder(bytes.NewReader(rest[i : i+j+len("</svg>")]))
		for {
			if _, err := d.Token(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("inline SVG is not well-formed XML: %v", err)
				}
				break
			}
		}
		rest = rest[i+j:]
	}
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

func byID(t *testing.T, p page, id string) *html.Node {
	t.Helper()
	var found *html.Node
	walk(p.root, func(n *html.Node) {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Val == id && found == nil {
				found = n
			}
		}
	})
	if found == nil {
		t.Fatalf("no element with id %q", id)
	}
	return found
}

func all(p page, a atom.Atom) []*html.Node {
	var out []*html.Node
	walk(p.root, func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == a {
			out = append(out, n)
		}
	})
	return out
}

// checkSelfContained: nothing the page would fetch. An SVG's xmlns names a
// namespace and is never fetched.
func checkSelfContained(t *testing.T, p page) {
	t.Helper()
	walk(p.root, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "script", "link", "img", "iframe", "object", "embed":
			t.Errorf("page has a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			if a.Namespace == "xmlns" || a.Key == "xmlns" {
				continue
			}
			v := strings.ToLower(a.Val)
			if strings.Contains(v, "http://") || strings.Contains(v, "https://") || strings.Contains(v, "//") && (a.Key == "src" || a.Key == "href") {
				t.Errorf("<%s %s=%q> points outside the file", n.Data, a.Key, a.Val)
			}
		}
	})
	for _, s := range all(p, atom.Style) {
		css := textOf(s)
		if strings.Contains(css, "url(") || strings.Contains(css, "@import") || strings.Contains(css, "@font-face") {
			t.Errorf("CSS fetches something: %q", css)
		}
	}
}

// svgTexts is each chart's text (title, ticks, legend), in page order.
func svgTexts(p page) []string {
	var out []string
	for _, s := range all(p, atom.Svg) {
		out = append(out, textOf(s))
	}
	return out
}

func TestReportHTMLFailedSweep(t *testing.T) {
	r := loadFixture(t, "testdata/failed-sweep")
	p := renderPage(t, r)
	checkSelfContained(t, p)

	if got := textOf(byID(t, p, "status")); !strings.Contains(got, "FAILED at step cleanup: ssh server1: redis-cli shutdown: exit status 1") {
		t.Errorf("status = %q", got)
	}
	if cls := attr(byID(t, p, "status"), "class"); !strings.Contains(cls, "bad") {
		t.Errorf("a failed run's status is styled %q, want bad", cls)
	}
	con := textOf(byID(t, p, "conclusion"))
	for _, want := range []string{"RDMA via BlueField <DPU>: TPS +", "± ", "against TCP (host kernel) at instances=4", "better beyond the run-to-run noise (p<0.001, 3 runs each)"} {
		if !strings.Contains(con, want) {
			t.Errorf("conclusion %q lacks %q", con, want)
		}
	}
	if h1 := textOf(all(p, atom.H1)[0]); h1 != "Redis on BlueField <script>alert(1)</script> red rehearsal — results" {
		t.Errorf("h1 = %q: the title's markup must show as text, its control characters dropped", h1)
	}
	for _, bad := range []string{"<script", "\x1b", "\x07", "]0;pwned"} {
		if bytes.Contains(p.raw, []byte(bad)) {
			t.Errorf("page carries %q from outside the binary", bad)
		}
	}

	// Charts: the single bench's two per-second charts, then the
	// compare's two sweep charts (TPS, avg latency) and two per-second
	// charts (TPS, p99), each naming its variants in its legend.
	texts := svgTexts(p)
	if len(texts) != 6 {
		t.Fatalf("%d charts, want 6", len(texts))
	}
	if !strings.Contains(texts[0], "TCP") || !strings.Contains(texts[0], "TPS per second") {
		t.Errorf("first chart: %q", texts[0])
	}
	for i, want := range []string{"mean TPS against instances", "mean avg latency ms against instances", "TPS per second (run 1, instances=4)", "p99 latency ms per second"} {
		tx := texts[2+i]
		for _, w := range []string{want, "TCP (host kernel)", "RDMA via BlueField <DPU>"} {
			if !strings.Contains(tx, w) {
				t.Errorf("chart %d lacks %q: %q", 2+i, w, tx)
			}
		}
	}
	if !regexp.MustCompile(`\b\d{1,3},\d{3}\b`).MatchString(texts[2]) {
		t.Errorf("the TPS sweep chart's ticks have no thousands separators: %q", texts[2])
	}

	body := textOf(p.root)
	// Each published figure once: the compare's beside it, the other in
	// the closing table.
	for _, ref := range []string{"throughput gain with RDMA", "servers saved"} {
		if n := strings.Count(body, ref); n != 1 {
			t.Errorf("%q shown %d times, want once", ref, n)
		}
	}
	sections := all(p, atom.Section)
	if len(sections) != 2 || !strings.Contains(textOf(sections[1]), "throughput gain with RDMA: >30% — source: NVIDIA solution brief") {
		t.Error("the compare's reference is not in its section")
	}
	for _, want := range []string{"NVIDIA solution brief (seed 002), results", "TCO estimate", "servers_saved", "connection reset by peer after 6s",
		"10.0.0.11", "mode=dpu, nic=bluefield-3", "redis-cli shutdown: exit status 1 (on server1)", "+28.", "better, p<0.001"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestReportHTMLRecordedQuickstart renders a real recorded run (results
// version 1: no status, "t" times) as `dpulab report` would.
func TestReportHTMLRecordedQuickstart(t *testing.T) {
	r := loadFixture(t, filepath.Join("..", "..", "tui", "testdata", "recorded"))
	p := renderPage(t, r)
	checkSelfContained(t, p)
	if got := textOf(byID(t, p, "status")); !strings.Contains(got, "unknown") {
		t.Errorf("status of a version 1 file = %q, want unknown", got)
	}
	con := textOf(byID(t, p, "conclusion"))
	if !strings.HasPrefix(con, "MEASURED Unix socket: TPS ") || !strings.Contains(con, "against TCP loopback at clients=") || !strings.Contains(con, "runs each)") {
		t.Errorf("conclusion = %q", con)
	}
	texts := svgTexts(p)
	if len(texts) == 0 {
		t.Fatal("no charts")
	}
	for i, tx := range texts {
		if !strings.Contains(tx, "TCP loopback") || !strings.Contains(tx, "Unix socket") {
			t.Errorf("chart %d lacks a variant: %q", i, tx)
		}
	}
}

func TestRenderFilesWritesHTML(t *testing.T) {
	dir := t.TempDir()
	if err := RenderFiles(dir, loadFixture(t, "testdata/failed-sweep")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReportHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Errorf("report.html starts %.40q", b)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// TestReportHTMLSparse: a run killed before it measured anything, a step
// with no finished run and a variant with no points still give a page.
func TestReportHTMLSparse(t *testing.T) {
	for _, r := range []*Results{
		{},
		{Status: RunRunning, Benches: []Compare{{Step: "b"}, {Step: "c", Sweep: "instances", Variants: []VariantResult{{Label: "a"}, {Label: "b", Points: []SweepPoint{{Value: "1"}}}}}}},
	} {
		p := renderPage(t, r)
		checkSelfContained(t, p)
		if con := textOf(byID(t, p, "conclusion")); con != "No measurement finished: nothing to conclude." {
			t.Errorf("conclusion = %q", con)
		}
		if r.Status == RunRunning && !strings.Contains(textOf(byID(t, p, "status")), "NOT FINISHED") {
			t.Errorf("status = %q", textOf(byID(t, p, "status")))
		}
	}
}

// TestReportHTMLLayout: a phone gets the page at its width with wide tables
// scrolling inside their box, and printing keeps charts whole.
func TestReportHTMLLayout(t *testing.T) {
	p := renderPage(t, loadFixture(t, "testdata/failed-sweep"))
	var viewport bool
	for _, m := range all(p, atom.Meta) {
		if attr(m, "name") == "viewport" && strings.Contains(attr(m, "content"), "width=device-width") {
			viewport = true
		}
	}
	if !viewport {
		t.Error("no viewport meta: a phone would show the page zoomed out")
	}
	css := textOf(all(p, atom.Style)[0])
	for _, want := range []string{"max-width:", ".scroll { overflow-x: auto", "@media print", "break-inside: avoid", "figure svg { display: block; width: 100%; height: auto"} {
		if !strings.Contains(css, want) {
			t.Errorf("CSS lacks %q", want)
		}
	}
	for _, tb := range all(p, atom.Table) {
		if tb.Parent == nil || attr(tb.Parent, "class") != "scroll" {
			t.Error("a table outside a horizontally scrolling box")
		}
	}
	for _, s := range all(p, atom.Svg) {
		if s.Parent == nil || s.Parent.DataAtom != atom.Figure || attr(s, "viewBox") == "" {
			t.Errorf("a chart outside a <figure> or without a viewBox to scale by: %v", s.Attr)
		}
	}
}
