// Package svgchart draws report.html's charts with gonum.org/v1/plot: line
// charts of series (per-second figures, or a metric's mean against a swept
// variable with error bars), as an SVG fragment to inline in a page or as a
// PNG for a slide. It knows nothing of results: the caller says what to
// draw, so the chart code stays apart from the report's.
package svgchart

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one line of a chart. Y[i] is drawn at X[i]; a NaN Y is a gap
// (not measured), never a zero. Err, when set, is each point's error bar
// half-height (the repeated runs' standard deviation); NaN or 0 draws none.
type Series struct {
	Label string
	X, Y  []float64
	Err   []float64
}

// Chart is what to draw.
type Chart struct {
	Title  string
	XLabel string
	YLabel string
	// XTicks, when set, labels the x axis at these values only (a sweep's
	// values, which are few and may not be evenly spaced).
	XTicks []Tick
	Series []Series
	// Refs are published figures drawn as markers of their own (hollow
	// diamonds, no line), each a legend entry after the series.
	Refs []Series
	// Notes are the legend's last lines, without a marker (a published
	// figure off the chart's scale; that the published figures are not
	// comparable with this run's).
	Notes []string
	// Band, when set, is drawn in a dark band across the chart's top,
	// above its title, fitted to the width: what the figures are and
	// where they come from (lab, date, hosts), for a chart that leaves
	// its report (an image on a slide).
	Band string
}

// Tick is a labelled x value.
type Tick struct {
	Value float64
	Label string
}

// Sizes: the inline SVG is scaled to its container by CSS, so only its
// aspect ratio and its text size against the plot matter; a PNG is drawn at
// slide resolution.
const (
	svgWidth  = 16 * vg.Centimeter
	svgHeight = 9 * vg.Centimeter
	// PNGWidth and PNGHeight are a PNG's size in pixels (a 16:9 slide).
	PNGWidth  = 1920
	PNGHeight = 1080
	pngDPI    = 192
)

// Palette is Okabe and Ito's colour-blind-safe set; each series also has a
// dash pattern and a marker of its own, so it reads in grey on paper.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0x00, 0x00, 0x00, 0xff}, // black
}

var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(1), vg.Points(2)},
}

var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{},
}

// refPalette colours the published figures' markers: dark, apart from
// the series' palette, so a reference never passes for a variant.
var refPalette = []color.RGBA{
	{0x33, 0x33, 0x33, 0xff},
	{0x80, 0x40, 0x00, 0xff},
	{0x55, 0x22, 0x77, 0xff},
}

// diamondGlyph is a published figure's marker: a diamond, which no series
// uses (their glyphs are gonum's circles, squares, triangles, crosses and
// pluses), hollow or filled.
type diamondGlyph struct{ filled bool }

func (g diamondGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	pts := []vg.Point{{X: pt.X, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y}, {X: pt.X, Y: pt.Y - r}, {X: pt.X - r, Y: pt.Y}, {X: pt.X, Y: pt.Y + r}}
	if g.filled {
		c.FillPolygon(sty.Color, pts)
		return
	}
	c.StrokeLines(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.5)}, pts)
}

// maxMarkers is about how many markers a series gets: a marker on each of
// 300 seconds would hide the line.
const maxMarkers = 16

// SVG draws c as an <svg> element (no XML prolog), sized by its viewBox so
// the page's CSS can scale it.
func SVG(c Chart) ([]byte, error) {
	cv := vgsvg.New(svgWidth, svgHeight)
	if err := drawChart(c, draw.New(cv), 10); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("svgchart: write %q: %w", c.Title, err)
	}
	return tidySVG(buf.Bytes(), c.Title)
}

// PNG draws c at slide resolution (PNGWidth × PNGHeight pixels).
func PNG(c Chart) ([]byte, error) {
	w := vg.Length(PNGWidth) / pngDPI * vg.Inch
	h := vg.Length(PNGHeight) / pngDPI * vg.Inch
	cv := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	if err := drawChart(c, draw.New(cv), 11); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("svgchart: encode %q as PNG: %w", c.Title, err)
	}
	return buf.Bytes(), nil
}

// ErrNoData is returned for a chart none of whose series has a value.
var ErrNoData = errors.New("svgchart: no data to draw")

func drawChart(c Chart, dc draw.Canvas, size vg.Length) error {
	p := plot.New()
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	for _, ts := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		*ts = sans
		ts.Size = size
	}
	p.Title.TextStyle.Font.Size = size + 2
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Y.Tick.Marker = groupedTicks{}
	p.X.Tick.Marker = groupedTicks{}
	if len(c.XTicks) > 0 {
		ts := make(plot.ConstantTicks, len(c.XTicks))
		for i, t := range c.XTicks {
			ts[i] = plot.Tick{Value: t.Value, Label: t.Label}
		}
		p.X.Tick.Marker = ts
	}
	p.Add(plotter.NewGrid())
	// The legend is drawn apart, in a strip above the plot rather than
	// over the lines.
	leg := plot.NewLegend()
	leg.TextStyle.Font = p.Legend.TextStyle.Font
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = vg.Points(28)
	// Every legend line fits the width beside its marker.
	legendLeft := vg.Points(24)
	fit := func(label string) string {
		return fitText(leg.TextStyle, label, dc.Max.X-dc.Min.X-legendLeft-leg.ThumbnailWidth-leg.Padding-vg.Points(4))
	}

	any, entries := false, 0
	for i, s := range c.Series {
		if len(s.X) != len(s.Y) || (s.Err != nil && len(s.Err) != len(s.Y)) {
			return fmt.Errorf("svgchart: series %q has %d x, %d y and %d error values", s.Label, len(s.X), len(s.Y), len(s.Err))
		}
		ls := draw.LineStyle{Color: palette[i%len(palette)], Width: vg.Points(1.5), Dashes: dashes[i%len(dashes)]}
		gs := draw.GlyphStyle{Color: palette[i%len(palette)], Radius: vg.Points(2.5), Shape: glyphs[i%len(glyphs)]}
		var thumbs []plot.Thumbnailer
		for _, seg := range segments(s) {
			any = true
			l, err := plotter.NewLine(seg)
			if err != nil {
				return fmt.Errorf("svgchart: series %q: %w", s.Label, err)
			}
			l.LineStyle = ls
			p.Add(l)
			if thumbs == nil {
				thumbs = append(thumbs, l)
			}
		}
		marks := markers(s)
		if len(marks) > 0 {
			sc, err := plotter.NewScatter(marks)
			if err != nil {
				return fmt.Errorf("svgchart: series %q: %w", s.Label, err)
			}
			sc.GlyphStyle = gs
			p.Add(sc)
			thumbs = append(thumbs, sc)
			any = true
		}
		if bars := errBars(s); bars.Len() > 0 {
			eb, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return fmt.Errorf("svgchart: series %q: %w", s.Label, err)
			}
			eb.LineStyle = draw.LineStyle{Color: palette[i%len(palette)], Width: vg.Points(1)}
			p.Add(eb)
		}
		if len(thumbs) > 0 {
			leg.Add(fit(s.Label), thumbs...)
			entries++
		}
	}
	for i, s := range c.Refs {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("svgchart: reference %q has %d x and %d y values", s.Label, len(s.X), len(s.Y))
		}
		marks := markers(s)
		if len(marks) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(marks)
		if err != nil {
			return fmt.Errorf("svgchart: reference %q: %w", s.Label, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: refPalette[i%len(refPalette)], Radius: vg.Points(3.5), Shape: diamondGlyph{filled: i%2 == 1}}
		p.Add(sc)
		leg.Add(fit(s.Label), sc)
		entries++
	}
	if !any {
		return ErrNoData
	}
	for _, n := range c.Notes {
		leg.Add(fit(n))
		entries++
	}
	// Throughput and CPU start at zero: a chart whose axis starts at 870k
	// makes a 1% change look like a doubling.
	if p.Y.Min > 0 {
		p.Y.Min = 0
	}
	p.Y.Max *= 1.04
	// From the top: the title, the legend, then the plot (with a margin
	// on the right for the last marker and tick label).
	h := dc.Max.Y - dc.Min.Y
	if c.Band != "" {
		ts := p.Title.TextStyle
		ts.Color = color.White
		bandH := ts.Height(c.Band) + vg.Points(8)
		dc.FillPolygon(color.RGBA{0x20, 0x20, 0x20, 0xff}, []vg.Point{
			{X: dc.Min.X, Y: dc.Max.Y}, {X: dc.Max.X, Y: dc.Max.Y},
			{X: dc.Max.X, Y: dc.Max.Y - bandH}, {X: dc.Min.X, Y: dc.Max.Y - bandH}})
		band := fitText(ts, c.Band, dc.Max.X-dc.Min.X-vg.Points(8))
		dc.FillText(ts, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Points(4)}, band)
		dc = draw.Crop(dc, 0, 0, 0, -bandH-vg.Points(4))
		h = dc.Max.Y - dc.Min.Y
	}
	titleH := vg.Length(0)
	if c.Title != "" {
		ts := p.Title.TextStyle
		titleH = ts.Height(c.Title) + vg.Points(4)
		dc.FillText(ts, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Points(2)}, c.Title)
	}
	legendH := vg.Length(entries)*(leg.TextStyle.Height("Xg")+leg.Padding) + vg.Points(6)
	leg.Draw(draw.Crop(dc, legendLeft, 0, h-titleH-legendH, -titleH))
	p.Draw(draw.Crop(dc, 0, -vg.Points(8), 0, -titleH-legendH))
	return nil
}

// fitText is s, cut at a word with "…" when it is wider than width in
// style ts.
func fitText(ts text.Style, s string, width vg.Length) string {
	if ts.Width(s) <= width {
		return s
	}
	r := []rune(s)
	for n := len(r) - 1; n > 0; n-- {
		cut := strings.TrimRight(string(r[:n]), " ,;:(")
		if i := strings.LastIndex(cut, " "); i > len(cut)*2/3 {
			cut = strings.TrimRight(cut[:i], " ,;:(")
		}
		if t := cut + "…"; ts.Width(t) <= width {
			return t
		}
	}
	return "…"
}

// segments splits s at its gaps into the runs of measured points a line
// joins.
func segments(s Series) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range s.Y {
		if !finite(s.X[i]) || !finite(s.Y[i]) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, plotter.XY{X: s.X[i], Y: s.Y[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// markers is every point of a short series, and every nth of a long one.
func markers(s Series) plotter.XYs {
	step := max(1, (len(s.Y)+maxMarkers-1)/maxMarkers)
	var out plotter.XYs
	for i := 0; i < len(s.Y); i += step {
		if finite(s.X[i]) && finite(s.Y[i]) {
			out = append(out, plotter.XY{X: s.X[i], Y: s.Y[i]})
		}
	}
	return out
}

type errXY struct {
	plotter.XYs
	plotter.YErrors
}

func errBars(s Series) errXY {
	var e errXY
	for i := range s.Err {
		if finite(s.X[i]) && finite(s.Y[i]) && finite(s.Err[i]) && s.Err[i] > 0 {
			e.XYs = append(e.XYs, plotter.XY{X: s.X[i], Y: s.Y[i]})
			e.YErrors = append(e.YErrors, struct{ Low, High float64 }{s.Err[i], s.Err[i]})
		}
	}
	return e
}

func (e errXY) Len() int { return len(e.XYs) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// groupedTicks are gonum's default ticks labelled with thousands
// separators (874,768 rather than 874768 or 8.748e+05).
type groupedTicks struct{}

func (groupedTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = FormatTick(ts[i].Value)
		}
	}
	return ts
}

// FormatTick writes a tick value with thousands separators and no more
// decimals than it needs: 1,200,000, 0.25, 12.5.
func FormatTick(v float64) string {
	if v == 0 {
		return "0"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	// Ticks are round numbers, but float steps leave 0.30000000000000004.
	if a := math.Abs(v); a < 1e15 {
		s = strconv.FormatFloat(v, 'f', decimals(v), 64)
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(intPart[i])
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}

func decimals(v float64) int {
	a := math.Abs(v)
	if a >= 1 {
		return 3
	}
	return min(12, 3+int(math.Ceil(-math.Log10(a))))
}

// tidySVG drops vgsvg's XML prolog and comment (an inline <svg> in HTML
// has none), names the chart for assistive technology, and gives its text
// a fallback font: vgsvg names the font it measured (Liberation Sans),
// which a reader's browser may lack; Arial and Helvetica have the same
// metrics.
func tidySVG(b []byte, title string) ([]byte, error) {
	i := bytes.Index(b, []byte("<svg"))
	if i < 0 {
		return nil, errors.New("svgchart: vgsvg wrote no <svg> element")
	}
	// A screen reader reads the chart as one image named by its title.
	b = append([]byte(`<svg role="img" aria-label="`+html.EscapeString(title)+`"`), b[i+len("<svg"):]...)
	b = bytes.ReplaceAll(b, []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	return b, nil
}
