package labs

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/dpulab/dpulab/internal/termtext"
	"go.yaml.in/yaml/v3"
)

// Lab text reaches terminals: the TUI filters it through termtext.Plain,
// so an escape sequence in a title would not do harm, but it would silently
// vanish from what the trainee sees. Lint says so where the trainer can fix
// it, in the file, at the line.

// maxDocTextProblems caps the problems one markdown file reports, so a doc
// pasted from a terminal capture says what is wrong without a page of it.
const maxDocTextProblems = 5

// text reads a scalar shown to the trainee, reporting anything
// termtext.Plain would remove from it.
func (p *parser) text(n *yaml.Node, what string) string {
	s := p.str(n, what)
	if s == "" || termtext.Safe(s) {
		return s
	}
	n = deref(n)
	i, found := unsafeAt(s)
	line := n.Line
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		// A block scalar's text starts on the line after its indicator.
		// Literal lines map one to one; folded ones at least start there.
		line++
		if n.Style&yaml.LiteralStyle != 0 {
			line += strings.Count(s[:i], "\n")
		}
	}
	p.errAt(p.file, line, "%s in the %s: lab text is shown in terminals; remove it", found, what)
	return s
}

// checkDocText reports the lines of a step's markdown that hold something
// termtext.Plain would remove, once per file however many steps show it.
func (p *parser) checkDocText(name string, b []byte) {
	if p.docsChecked == nil {
		p.docsChecked = map[string]bool{}
	}
	if p.docsChecked[name] {
		return
	}
	p.docsChecked[name] = true
	file := name
	if !strings.HasPrefix(name, "assets/") {
		file = path.Join(path.Dir(p.file), name)
	}
	reported, more := 0, 0
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r") // a CRLF file is not a problem
		if termtext.Safe(line) {
			continue
		}
		if reported == maxDocTextProblems {
			more++
			continue
		}
		_, found := unsafeAt(line)
		p.errAt(file, n+1, "%s in the markdown: lab text is shown in terminals; remove it", found)
		reported++
	}
	if more > 0 {
		p.errAt(file, 0, "%d more lines with escape sequences or control characters in the markdown", more)
	}
}

// unsafeAt finds the first character of s that termtext.Plain would remove
// and says what it is. s must not be termtext.Safe.
func unsafeAt(s string) (int, string) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if termtext.Safe(s[i : i+size]) {
			i += size
			continue
		}
		return i, describeUnsafe(s[i:i+size], r)
	}
	// Not reached for an unsafe s: Safe is decided character by character.
	return 0, "a character terminals act on"
}

// c0Names are the ASCII control characters by their usual abbreviations.
var c0Names = [...]string{
	"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
	"DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
}

func describeUnsafe(enc string, r rune) string {
	switch {
	case r == utf8.RuneError && len(enc) == 1:
		return fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", enc[0])
	case r == 0x1b:
		return "an escape sequence (ESC)"
	case r < 0x20:
		return fmt.Sprintf("a control character (%s, U+%04X)", c0Names[r], r)
	case r == 0x7f:
		return "a control character (DEL, U+007F)"
	case r >= 0x80 && r < 0xa0:
		return fmt.Sprintf("a C1 control character (U+%04X)", r)
	default:
		return fmt.Sprintf("a bidi control character (U+%04X)", r)
	}
}
