// Package markdown renders markdown from outside the binary (a lab's step
// text, a run's report.md) for the terminal with glamour: the dark style,
// or without colour (NO_COLOR) an ASCII style that reads as prose. The text
// must be sanitised (termtext.Plain) before it gets here: glamour's own SGR
// is the only escape sequence in the output.
package markdown

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
	xansi "github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// Render renders src wrapped to width columns; if glamour fails, src is
// returned as it is. Glamour is slow: callers cache the result per width.
func Render(src string, width int, noColor bool) string {
	wrap := max(width-2, 20)
	opts := []glamour.TermRendererOption{glamour.WithWordWrap(wrap), glamour.WithStyles(darkMarkdownStyle())}
	if noColor {
		opts = append(opts[:1], glamour.WithStyles(plainMarkdownStyle()), glamour.WithColorProfile(termenv.Ascii))
	}
	r, err := glamour.NewTermRenderer(opts...)
	if err != nil {
		return src
	}
	s, err := r.Render(keepCodeWhole(joinListContinuations(src)))
	if err != nil {
		return src
	}
	s = strings.ReplaceAll(s, nbHyphen, "-")
	return strings.Trim(hangListItems(s, wrap), "\n")
}

// darkMarkdownStyle is glamour's dark style with its headings drawn as
// headings: the dark style prints "## " before a second-level heading
// (and "### " before a third...), which reads as markdown left unrendered.
func darkMarkdownStyle() ansi.StyleConfig {
	s := styles.DarkStyleConfig
	for _, h := range []*ansi.StyleBlock{&s.H2, &s.H3, &s.H4, &s.H5, &s.H6} {
		h.Prefix = ""
	}
	return s
}

// nbHyphen is U+2011, a hyphen no wrapper breaks at: it stands in for "-"
// inside inline code while glamour wraps, and is put back after.
const nbHyphen = "\u2011"

// codeSpan is an inline code span (single backticks) outside fences.
var codeSpan = regexp.MustCompile("`[^`\n]+`")

// keepCodeWhole keeps inline code from being cut at its hyphens: glamour
// wraps at "-", which split `--set pipeline=1` as "`--" and "set
// pipeline=1`", a flag nobody can read or type. Code still wraps at its
// spaces, as words do. Fenced code is left alone.
func keepCodeWhole(src string) string {
	lines := strings.Split(src, "\n")
	inFence := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		lines[i] = codeSpan.ReplaceAllStringFunc(l, func(c string) string {
			return strings.ReplaceAll(c, "-", nbHyphen)
		})
	}
	return strings.Join(lines, "\n")
}

// bullet matches a rendered list item's start: its indent and marker.
var bullet = regexp.MustCompile(`^( *)(• |\d+\. |- |\* )`)

// hangListItems indents a list item's wrapped lines under its text, as a
// list reads (glamour puts them under the bullet): each item is wrapped
// again, at spaces only, to the same width less the marker.
func hangListItems(s string, width int) string {
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); {
		plain := xansi.Strip(lines[i])
		m := bullet.FindStringSubmatch(plain)
		if m == nil {
			out = append(out, lines[i])
			i++
			continue
		}
		indent, lead := len(m[1]), xansi.StringWidth(m[0])
		words := []string{trimStyled(xansi.TruncateLeft(lines[i], lead, ""))}
		j := i + 1
		for ; j < len(lines); j++ {
			p := xansi.Strip(lines[j])
			t := strings.TrimLeft(p, " ")
			if t == "" || len(p)-len(t) != indent || bullet.MatchString(p) {
				break
			}
			words = append(words, trimStyled(xansi.TruncateLeft(lines[j], indent, "")))
		}
		prefix := xansi.Truncate(lines[i], lead, "")
		pad := strings.Repeat(" ", lead)
		for k, l := range strings.Split(wrapSpaces(strings.Join(words, " "), max(width-lead, 10)), "\n") {
			if k == 0 {
				out = append(out, prefix+l)
			} else {
				out = append(out, pad+l)
			}
		}
		i = j
	}
	return strings.Join(out, "\n")
}

// trimStyled drops a styled line's trailing blanks (glamour pads every
// line to the wrap width).
func trimStyled(l string) string {
	w := xansi.StringWidth(strings.TrimRight(xansi.Strip(l), " "))
	t := strings.TrimRight(xansi.Truncate(l, w, ""), " ")
	if strings.IndexByte(t, 0x1b) >= 0 {
		t += xansi.ResetStyle
	}
	return t
}

// wrapSpaces breaks s into lines of at most w columns at spaces only; a
// word longer than a line stays whole (the pane cuts it).
func wrapSpaces(s string, w int) string {
	var out []string
	cur, curW := "", 0
	for _, word := range strings.Split(s, " ") {
		ww := xansi.StringWidth(word)
		if ww == 0 && xansi.Strip(word) == "" && word != "" {
			cur += word // a style sequence alone
			continue
		}
		if curW > 0 && curW+1+ww > w {
			out = append(out, cur)
			cur, curW = "", 0
		}
		if curW > 0 {
			cur += " "
			curW++
		}
		cur += word
		curW += ww
	}
	return strings.Join(append(out, cur), "\n")
}

// plainMarkdownStyle is glamour's ASCII style for NO_COLOR, minus the
// markers it keeps for emphasis: the "notty" and "ascii" styles both
// print **bold** and *italic* literally, which reads as noise in a lab's
// text. Headings keep their "#" prefixes, inline code its backticks and
// lists their bullets: those still say something without colour or bold.
func plainMarkdownStyle() ansi.StyleConfig {
	s := styles.ASCIIStyleConfig
	s.Strong = ansi.StylePrimitive{}
	s.Emph = ansi.StylePrimitive{}
	// The ASCII style's backticks are block affixes, which glamour does
	// not draw for inline code: keep them as the span's own affixes.
	s.Code = ansi.StyleBlock{StylePrimitive: ansi.StylePrimitive{Prefix: "`", Suffix: "`"}}
	return s
}

// listMarker matches the start of a markdown list item.
var listMarker = regexp.MustCompile(`^\s*([-*+]|\d+[.)])\s`)

// joinListContinuations joins the wrapped lines of a list item into one
// line. Glamour renders a soft line break inside a list item as a hard one
// and drops the indentation, so lab docs wrapped at 80 columns would show
// ragged items; joining them lets glamour wrap to the pane instead. Fenced
// code is left alone, and so is anything indented like code (4+ spaces
// beyond the item's text).
func joinListContinuations(src string) string {
	lines := strings.Split(src, "\n")
	out := make([]string, 0, len(lines))
	inFence := false
	inItem := false
	itemIndent := 0
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			inItem = false
			out = append(out, l)
			continue
		}
		if inFence {
			out = append(out, l)
			continue
		}
		if t == "" {
			inItem = false
			out = append(out, l)
			continue
		}
		if listMarker.MatchString(l) {
			inItem = true
			m := listMarker.FindString(l)
			itemIndent = len(m)
			out = append(out, l)
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if inItem && indent > 0 && indent <= itemIndent+3 {
			out[len(out)-1] += " " + t
			continue
		}
		inItem = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
