package results

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// tableFit is one table of report.html as the browser laid it out.
type tableFit struct {
	// Head is the table's first row's text, to name it in a failure.
	Head string `json:"head"`
	// Width is the table's laid-out width; Box the width its container
	// (a .scroll div) shows without scrolling; Right its right edge.
	Width float64 `json:"width"`
	Box   float64 `json:"box"`
	Right float64 `json:"right"`
	// Cols are the header cells' texts, Cut those whose right edge is
	// past the page (Viewport): a column cut off on paper.
	Cols []string `json:"cols"`
	Cut  []string `json:"cut"`
}

// pageText is what a reader sees of report.html: its visible text and
// how its tables fit the page.
type pageText struct {
	Text     string     `json:"text"`
	Viewport float64    `json:"viewport"`
	DocWidth float64    `json:"docWidth"`
	Tables   []tableFit `json:"tables"`
}

const pageTextJS = `(() => {
  const vw = document.documentElement.clientWidth;
  const tables = [...document.querySelectorAll('table')].map(t => {
    const r = t.getBoundingClientRect();
    const box = t.parentElement.classList.contains('scroll') ? t.parentElement.clientWidth : vw;
    const first = t.querySelector('tr');
    const ths = [...t.querySelectorAll('thead th')];
    const cols = ths.map(th => th.innerText);
    const cut = ths.filter(th => th.getBoundingClientRect().right > vw + 1).map(th => th.innerText);
    return {head: first ? first.innerText.replace(/\s+/g, ' ') : '', width: r.width, box: box, right: r.right, cols: cols, cut: cut};
  });
  return {text: document.body.innerText, viewport: vw, docWidth: document.documentElement.scrollWidth, tables: tables};
})()`

// readPage opens file in a new tab of ctx's browser at width×height CSS
// px, for the screen or (print) as printed, and reads pageTextJS.
func readPage(ctx context.Context, file string, width, height int64, print bool) (pageText, error) {
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	media := chromedp.Action[chromedp.Void](func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		m := ""
		if print {
			m = "print"
		}
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: m})
		return chromedp.Void{}, err
	})
	u := (&url.URL{Scheme: "file", Path: file}).String()
	if err := chromedp.Do(tab, chromedp.EmulateViewport(width, height), media, chromedp.Navigate(u)); err != nil {
		return pageText{}, fmt.Errorf("open %s: %w", u, err)
	}
	return chromedp.Run(tab, chromedp.Evaluate[pageText](pageTextJS))
}

// The printable width of an A4 page under report.html's @page margin
// (12 mm a side), in CSS px (96 per inch): portrait and landscape.
const (
	a4PortraitPx  = (210 - 24) * 96 / 25.4
	a4LandscapePx = (297 - 24) * 96 / 25.4
)

// TestReportHTMLWarningsInBrowser renders report.md and report.html of
// each results folder (the fixtures; a real quickstart on a saturated
// host; a run with every kind of warning) and reads report.html as
// headless chromium shows it: its visible text carries every warning of
// the one source (Warnings) and every warning line of report.md; no
// headline calls a difference better on a saturated host; at 1280 px no
// table is wider than the page or its box; printed on A4, portrait or
// landscape, every table fits the page with every column, the network
// column included.
func TestReportHTMLWarningsInBrowser(t *testing.T) {
	ctx := startBrowser(t)
	folders := []struct {
		name string
		r    *Results
	}{
		{"every-warning", warningsFixture()},
		{"saturated-quickstart", loadFixture(t, "testdata/saturated-quickstart")},
		{"recorded-quickstart", loadFixture(t, "../../tui/testdata/recorded")},
		{"rehearsal-uptv2", loadFixture(t, "testdata/rehearsal-uptv2")},
		{"failed-compare", loadFixture(t, "testdata/failed-compare")},
		{"sweep-refs", loadFixture(t, "testdata/sweep-refs")},
		{"failed-sweep", loadFixture(t, "testdata/failed-sweep")},
		{"software-rdma", loadFixture(t, "testdata/software-rdma")},
	}
	for _, f := range folders {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := RenderFiles(dir, f.r); err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(dir, ReportFile))
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, ReportHTMLFile)
			tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()

			screen, err := readPage(tctx, file, 1280, 800, false)
			if err != nil {
				t.Fatal(err)
			}
			// innerText shows text as laid out: upper-cased where the
			// CSS says so, white space collapsed.
			seen := strings.ToLower(squash(screen.Text))
			has := func(s string) bool { return strings.Contains(seen, strings.ToLower(squash(clean(s)))) }
			ws := AllWarnings(f.r)
			for _, w := range ws {
				if !has(w.Line()) {
					t.Errorf("report.html does not show the %s warning %q", w.Kind, w.Line())
				}
				for _, it := range w.Items {
					if !has(it.String()) {
						t.Errorf("report.html does not show %q of the %s warning", it.String(), w.Kind)
					}
				}
			}
			lines := mdWarningLines(string(md))
			for _, l := range lines {
				if !has(l) {
					t.Errorf("report.html does not show report.md's warning line %q", l)
				}
			}
			con := Conclude(f.r)
			if con.Saturated != "" && (strings.Contains(con.Text, "better") || strings.Contains(con.Text, "worse") || !has(con.Text)) {
				t.Errorf("on a saturated host the headline is %q", con.Text)
			}
			checkTablesFit(t, "screen at 1280 px", screen)
			if screen.DocWidth > screen.Viewport+1 {
				t.Errorf("at 1280 px the page is %v px wide: it scrolls sideways", screen.DocWidth)
			}
			for _, paper := range []struct {
				name  string
				width float64
			}{{"A4 portrait", a4PortraitPx}, {"A4 landscape", a4LandscapePx}} {
				printed, err := readPage(tctx, file, int64(paper.width), 1000, true)
				if err != nil {
					t.Fatal(err)
				}
				checkTablesFit(t, "printed on "+paper.name, printed)
			}
			t.Logf("%d warnings, %d warning lines in report.md; %d tables; conclusion %q", len(ws), len(lines), len(screen.Tables), con.Text)
		})
	}
}

// checkTablesFit: no table is wider than its box or runs past the page,
// and each keeps every header cell within the page.
func checkTablesFit(t *testing.T, view string, p pageText) {
	t.Helper()
	for _, tb := range p.Tables {
		if tb.Width > tb.Box+1 || tb.Right > p.Viewport+1 {
			t.Errorf("%s: table %q is %.0f px wide in a %.0f px box, right edge at %.0f of %.0f px: it overflows", view, tb.Head, tb.Width, tb.Box, tb.Right, p.Viewport)
		}
		// A compare's last column (network Gb/s) is the first one lost
		// when its table is too wide.
		if len(tb.Cut) > 0 {
			t.Errorf("%s: table %q loses its columns %q past the page's edge", view, tb.Head, tb.Cut)
		}
	}
}

// mdWarningLines are report.md's warning lines as a reader sees them: each
// bold quote ("> **…**") and each item under one ("> - **label**: text"),
// without the markup.
func mdWarningLines(md string) []string {
	var out []string
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "> **") && strings.HasSuffix(l, "**"):
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(l, "> **"), "**"))
		case strings.HasPrefix(l, "> - "):
			out = append(out, strings.ReplaceAll(strings.TrimPrefix(l, "> - "), "**", ""))
		}
	}
	return out
}
