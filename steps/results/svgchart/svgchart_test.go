package svgchart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"strings"
	"testing"
)

func sample() Chart {
	nan := math.NaN()
	return Chart{Title: "TPS against instances", XLabel: "instances", YLabel: "TPS (ops/s)",
		XTicks: []Tick{{1, "1"}, {2, "2"}, {4, "4"}},
		Series: []Series{
			{Label: "TCP <loopback>", X: []float64{1, 2, 4}, Y: []float64{410000, 820000, 1200000}, Err: []float64{1000, 20000, nan}},
			{Label: "RDMA & co", X: []float64{1, 2, 4}, Y: []float64{500000, nan, 1500000}},
		}}
}

// TestSVGWellFormed: the fragment is one well-formed <svg> element naming
// each series in its legend (escaped), with grouped tick labels.
func TestSVGWellFormed(t *testing.T) {
	b, err := SVG(sample())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("<svg")) {
		t.Errorf("does not start with <svg: %.60q", b)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed XML: %v", err)
			}
			break
		}
		if cd, ok := tok.(xml.CharData); ok {
			texts = append(texts, strings.TrimSpace(string(cd)))
		}
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"TCP <loopback>", "RDMA & co", "1,500,000", "TPS against instances"} {
		if !strings.Contains(all, want) {
			t.Errorf("chart text lacks %q: %s", want, all)
		}
	}
	if bytes.Contains(b, []byte("<loopback>")) {
		t.Error("a label's markup reached the SVG unescaped")
	}
}

func TestNoData(t *testing.T) {
	_, err := SVG(Chart{Title: "x", Series: []Series{{Label: "a", X: []float64{1}, Y: []float64{math.NaN()}}}})
	if !errors.Is(err, ErrNoData) {
		t.Errorf("err = %v, want ErrNoData", err)
	}
	if _, err := SVG(Chart{Series: []Series{{Label: "a", X: []float64{1, 2}, Y: []float64{1}}}}); err == nil {
		t.Error("mismatched lengths drew a chart")
	}
}

func TestPNGSlideSize(t *testing.T) {
	b, err := PNG(sample())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if s := img.Bounds().Size(); s.X != PNGWidth || s.Y != PNGHeight {
		t.Errorf("PNG is %v, want %dx%d", s, PNGWidth, PNGHeight)
	}
}

func TestFormatTick(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 874768: "874,768", 1.2e6: "1,200,000", 0.25: "0.25", 0.1 + 0.2: "0.3", -2500: "-2,500", 12.5: "12.5", 0.001: "0.001"} {
		if got := FormatTick(v); got != want {
			t.Errorf("FormatTick(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestSVGNamedForScreenReaders(t *testing.T) {
	b, err := SVG(sample())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(`<svg role="img" aria-label="TPS against instances"`)) {
		t.Errorf("starts %.80q", b)
	}
	c := sample()
	c.Title = `a "quoted" <title>`
	b, _ = SVG(c)
	if !bytes.Contains(b, []byte(`aria-label="a &#34;quoted&#34; &lt;title&gt;"`)) {
		t.Errorf("title not escaped in its attribute: %.120q", b)
	}
}

// TestRefsDrawnApart: published figures are markers of their own colour
// (no series uses it), each with its legend entry, the note after them,
// and the y axis reaches them.
func TestRefsDrawnApart(t *testing.T) {
	c := sample()
	c.Refs = []Series{{Label: "published (paper <2>)", X: []float64{4}, Y: []float64{3000000}}}
	c.Notes = []string{"published figures: not comparable", "a note far too long to fit the width of the chart beside its legend's markers, which it would run past, so it is cut"}
	b, err := SVG(c)
	if err != nil {
		t.Fatal(err)
	}
	texts := chartText(t, b)
	for _, want := range []string{"published (paper <2>)", "published figures: not comparable", "3,000,000"} {
		if !strings.Contains(texts, want) {
			t.Errorf("chart text lacks %q: %s", want, texts)
		}
	}
	if !strings.Contains(texts, "|a note far too long to fit") || strings.Contains(texts, "so it is cut") || !strings.Contains(texts, "…|") {
		t.Errorf("a legend line wider than the chart is not cut: %s", texts)
	}
	plain, err := SVG(sample())
	if err != nil {
		t.Fatal(err)
	}
	if ref := "stroke:#333333"; !bytes.Contains(b, []byte(ref)) || bytes.Contains(plain, []byte(ref)) {
		t.Errorf("the reference's colour %s: in the chart with it %v, without %v", ref, bytes.Contains(b, []byte(ref)), bytes.Contains(plain, []byte(ref)))
	}
	if _, err := PNG(c); err != nil {
		t.Fatal(err)
	}
	c.Refs[0].Y = nil
	if _, err := SVG(c); err == nil {
		t.Error("a reference with mismatched lengths drew a chart")
	}
}

func chartText(t *testing.T, b []byte) string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	for {
		tok, err := d.Token()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("not well-formed XML: %v", err)
			}
			return strings.Join(texts, "|")
		}
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) != "" {
			texts = append(texts, strings.TrimSpace(string(cd)))
		}
	}
}

// TestBandDrawn: a chart's band is drawn across its top, in the SVG as
// text and in the PNG as a dark strip with the text, cut with "…" to fit
// rather than run off the image; without a band the top stays white.
func TestBandDrawn(t *testing.T) {
	c := sample()
	c.Band = "EMULATION · lab quickstart · 2026-12-06 · 1 host"
	svg, err := SVG(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(chartText(t, svg), c.Band) {
		t.Errorf("the SVG lacks its band %q", c.Band)
	}
	dark := func(c Chart) bool {
		b, err := PNG(c)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r, g, bl, _ := img.At(img.Bounds().Min.X+5, img.Bounds().Min.Y+2).RGBA()
		return r < 0x4000 && g < 0x4000 && bl < 0x4000
	}
	if !dark(c) {
		t.Error("the PNG has no dark band at its top")
	}
	if dark(sample()) {
		t.Error("the PNG without a band is dark at its top")
	}
	long := sample()
	long.Band = "EMULATION " + strings.Repeat("very long lab name ", 40)
	svg, err = SVG(long)
	if err != nil {
		t.Fatal(err)
	}
	if txt := chartText(t, svg); !strings.Contains(txt, "EMULATION very long") || !strings.Contains(txt, "…") {
		t.Errorf("a long band is not cut to fit, keeping its label first")
	}
}
