package results

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/dpulab/dpulab/internal/testpeer"
)

var screenshotDir = flag.String("screenshots", "", "also save the browser test's screenshots in this folder")

// chromiumNames are the names Debian, Ubuntu and Google give the browser.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// findChromium is the browser's path; the test is skipped (or fails with
// DPULAB_REQUIRE_PEERS=1) when there is none.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	msg := "peer chromium not found (looked for " + strings.Join(chromiumNames, ", ") + " in $PATH); to run this test install it (Debian: apt-get install chromium)"
	if testpeer.Required() {
		t.Fatalf("%s; %s=1 requires it", msg, testpeer.RequireEnv)
	}
	t.Skip(msg)
	return ""
}

// browserPage is what the browser saw of one report.html.
type browserPage struct {
	// problems are console errors, uncaught exceptions, error entries of
	// the browser's log, failed loads and any fetch from outside the file.
	problems []string
	layout   pageLayout
	// png is a screenshot of the whole page at the desktop size.
	png []byte
	// phone is the layout at a phone's width.
	phone pageLayout
}

// pageLayout is the page's geometry as the browser laid it out, read
// through the DevTools protocol.
type pageLayout struct {
	Width        float64   `json:"width"`
	Height       float64   `json:"height"`
	ScrollWidth  float64   `json:"scrollWidth"`
	ViewportW    float64   `json:"viewportW"`
	Charts       []float64 `json:"charts"` // width, height of each <svg> in turn
	ChartHeights float64   `json:"chartHeights"`
	Conclusion   string    `json:"conclusion"`
}

const layoutJS = `(() => {
  const svgs = [...document.querySelectorAll('svg')];
  const charts = [];
  let hs = 0;
  for (const s of svgs) { const r = s.getBoundingClientRect(); charts.push(r.width, r.height); hs += r.height; }
  const c = document.getElementById('conclusion');
  return {width: document.documentElement.getBoundingClientRect().width,
    height: document.documentElement.scrollHeight,
    scrollWidth: document.documentElement.scrollWidth,
    viewportW: window.innerWidth,
    charts: charts, chartHeights: hs,
    conclusion: c ? c.innerText : ''};
})()`

// openInBrowser loads file (an absolute path) from disk in a new tab of the
// browser of ctx, at a desktop size then a phone's, and reports what it
// saw.
func openInBrowser(ctx context.Context, file string) (browserPage, error) {
	var out browserPage
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	var mu sync.Mutex
	add := func(format string, args ...any) {
		mu.Lock()
		out.problems = append(out.problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	err := chromedp.Listen(tab, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				add("console.%s: %s", ev.Type, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			add("uncaught exception: %s (%s:%d)", msg, d.URL, d.LineNumber)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				add("browser log (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		case *network.EventLoadingFailed:
			add("failed load (%s): %s", ev.Type, ev.ErrorText)
		case *network.EventRequestWillBeSent:
			if u, err := url.Parse(ev.Request.URL); err != nil || (u.Scheme != "file" && u.Scheme != "data" && u.Scheme != "about") {
				add("fetches from outside the file: %s", ev.Request.URL)
			}
		}
	})
	if err != nil {
		return out, err
	}
	u := (&url.URL{Scheme: "file", Path: file}).String()
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(u)); err != nil {
		return out, fmt.Errorf("open %s: %w", u, err)
	}
	if out.layout, err = chromedp.Run(tab, chromedp.Evaluate[pageLayout](layoutJS)); err != nil {
		return out, fmt.Errorf("measure %s: %w", u, err)
	}
	if out.png, err = chromedp.Run(tab, fullPagePNG(out.layout.Width, out.layout.Height)); err != nil {
		return out, fmt.Errorf("screenshot %s: %w", u, err)
	}
	if err := chromedp.Do(tab, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		return out, err
	}
	if out.phone, err = chromedp.Run(tab, chromedp.Evaluate[pageLayout](layoutJS)); err != nil {
		return out, fmt.Errorf("measure %s at a phone's width: %w", u, err)
	}
	mu.Lock()
	defer mu.Unlock()
	out.problems = append([]string(nil), out.problems...)
	return out, nil
}

// shotScale is the screenshots' scale: at full size, a 1280×7500 px page
// took 3 to 8 s to capture and encode on a loaded 2-core machine, at half
// size a third of that; text is still legible.
const shotScale = 0.5

// fullPagePNG is chromedp.FullScreenshot(100) at shotScale with the
// encoder set for speed.
func fullPagePNG(w, h float64) chromedp.Action[[]byte] {
	return func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		yes := true
		r, err := cdp.Call(ctx, t, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
			Format: cdppage.CaptureScreenshotFormatPng, CaptureBeyondViewport: &yes, FromSurface: &yes, OptimizeForSpeed: &yes,
			Clip: &cdppage.Viewport{Width: w, Height: h, Scale: shotScale},
		})
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	}
}

// startBrowser starts headless chromium for the test and stops it, and
// every process it started, when the test ends.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	bin := findChromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-gpu", true),
		// Nothing the page needs is on the network: keep the browser off
		// it (component updates, field trials) so a slow machine is not
		// slowed further.
		chromedp.Flag("no-pings", true),
	)
	// Chromium refuses to run as root with its sandbox.
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first Run starts the browser; no timeout on it (a timeout on
	// that context would stop the browser), the test's own deadline
	// applies.
	start := time.Now()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Logf("%s started in %v", bin, time.Since(start).Round(10*time.Millisecond))
	return bctx
}

// TestReportHTMLInBrowser opens report.html of each fixture, and of a
// recorded quickstart run, from disk in headless chromium (one browser for
// them all: starting it is most of the test's time): no console
// error, no failed or outside load, a page of a sensible height whose
// every chart has a size, a phone's width without sideways scrolling, and a
// full-page screenshot saved under the test's temp dir (and in
// -screenshots DIR when given).
func TestReportHTMLInBrowser(t *testing.T) {
	ctx := startBrowser(t)
	pages := []struct{ name, dir string }{
		{"rehearsal-uptv2", "testdata/rehearsal-uptv2"},
		{"failed-compare", "testdata/failed-compare"},
		{"sweep-refs", "testdata/sweep-refs"},
		{"failed-sweep", "testdata/failed-sweep"},
		{"recorded-quickstart", "../../tui/testdata/recorded"},
	}
	t.Run("a broken page is caught", func(t *testing.T) { checkSeesProblems(t, ctx) })
	shots := t.TempDir()
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			start := time.Now()
			r := loadFixture(t, pg.dir)
			dir := filepath.Join(shots, pg.name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTML(dir, r); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, ReportHTMLFile)
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			wantCharts := bytes.Count(raw, []byte("<svg "))
			rendered := time.Since(start)
			tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			got, err := openInBrowser(tctx, file)
			if err != nil {
				t.Fatal(err)
			}
			browsed := time.Since(start) - rendered
			for _, p := range got.problems {
				t.Errorf("browser: %s", p)
			}
			checkLayout(t, "desktop", got.layout, wantCharts)
			checkLayout(t, "phone", got.phone, wantCharts)
			if got.phone.ScrollWidth > got.phone.ViewportW+1 {
				t.Errorf("at a phone's width (%v px) the page is %v px wide: it scrolls sideways", got.phone.ViewportW, got.phone.ScrollWidth)
			}
			if !strings.Contains(got.layout.Conclusion, Conclude(r).Text) {
				t.Errorf("the rendered conclusion %q lacks %q", got.layout.Conclusion, Conclude(r).Text)
			}
			img, err := png.Decode(bytes.NewReader(got.png))
			if err != nil {
				t.Fatalf("screenshot is not a PNG: %v", err)
			}
			shot := filepath.Join(dir, "screenshot.png")
			if err := os.WriteFile(shot, got.png, 0o644); err != nil {
				t.Fatal(err)
			}
			if *screenshotDir != "" {
				if err := os.WriteFile(filepath.Join(*screenshotDir, pg.name+".png"), got.png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sz := img.Bounds().Size()
			if float64(sz.Y) < got.layout.Height*shotScale-1 || float64(sz.X) < got.layout.Width*shotScale-1 {
				t.Errorf("the screenshot is %v px, the page %v×%v px at scale %v: not the whole page", sz, got.layout.Width, got.layout.Height, shotScale)
			}
			t.Logf("report.html %d bytes, %d charts; page %v×%v px at 1280 wide (charts %v px high in all), %v px high at 390 wide; screenshot %dx%d px, %d bytes: %s (rendered in %v, in the browser %v)",
				len(raw), wantCharts, got.layout.Width, got.layout.Height, got.layout.ChartHeights, got.phone.Height, sz.X, sz.Y, len(got.png), shot,
				rendered.Round(time.Millisecond), browsed.Round(time.Millisecond))
		})
	}
}

// checkLayout: the page has a height that holds its charts, and each chart
// has a size.
func checkLayout(t *testing.T, view string, l pageLayout, wantCharts int) {
	t.Helper()
	if n := len(l.Charts) / 2; n != wantCharts {
		t.Errorf("%s: the browser laid out %d charts, the page has %d", view, n, wantCharts)
	}
	for i := 0; i+1 < len(l.Charts); i += 2 {
		if w, h := l.Charts[i], l.Charts[i+1]; w <= 0 || h <= 0 || w > l.ViewportW {
			t.Errorf("%s: chart %d is %v×%v px in a %v px viewport", view, i/2+1, w, h, l.ViewportW)
		}
	}
	// The header, status and conclusion alone take some 300 px; a page
	// as tall as a whole book has lost its styles or its scaling.
	if l.Height < l.ChartHeights+300 || l.Height > 60000 {
		t.Errorf("%s: page %v px high with %v px of charts", view, l.Height, l.ChartHeights)
	}
}

// checkSeesProblems: the checks would see a console error, an uncaught
// exception, a missing file and a fetch from the network (the page asks for
// an address the browser blocks, so nothing leaves the machine).
func checkSeesProblems(t *testing.T, ctx context.Context) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.html")
	page := `<!DOCTYPE html><html><head><title>bad</title></head><body>
<img src="missing.png" alt="">
<img src="http://0.0.0.0:9/x.png" alt="">
<script>console.error("boom"); throw new Error("thrown");</script>
</body></html>`
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	got, err := openInBrowser(tctx, file)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	all := strings.Join(got.problems, "\n")
	for _, want := range []string{"console.error: \"boom\"", "uncaught exception", "failed load", "fetches from outside the file: http://0.0.0.0:9/x.png"} {
		if !strings.Contains(all, want) {
			t.Errorf("the check missed %q; it saw:\n%s", want, all)
		}
	}
}
