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
	"github.com/muesli/termenv"
)

// Render renders src wrapped to width columns; if glamour fails, src is
// returned as it is. Glamour is slow: callers cache the result per width.
func Render(src string, width int, noColor bool) string {
	opts := []glamour.TermRendererOption{glamour.WithWordWrap(max(width-2, 20)), glamour.WithStandardStyle("dark")}
	if noColor {
		opts = append(opts[:1], glamour.WithStyles(plainMarkdownStyle()), glamour.WithColorProfile(termenv.Ascii))
	}
	r, err := glamour.NewTermRenderer(opts...)
	if err != nil {
		return src
	}
	s, err := r.Render(joinListContinuations(src))
	if err != nil {
		return src
	}
	return strings.Trim(s, "\n")
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
