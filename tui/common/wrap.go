package common

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// WrapWords breaks s into lines of at most w columns at spaces only:
// ansi's wrappers also break after hyphens, which would split "-tags"
// from its dash or leave "-" at a line's end and "34.0%" on the next. A
// word wider than a line breaks where it must.
func WrapWords(s string, w int) []string {
	var out []string
	cur := ""
	for _, word := range strings.Fields(s) {
		for ansi.StringWidth(word) > w {
			if cur != "" {
				out, cur = append(out, cur), ""
			}
			out = append(out, ansi.Truncate(word, w, ""))
			word = ansi.TruncateLeft(word, w, "")
		}
		switch {
		case cur == "":
			cur = word
		case ansi.StringWidth(cur)+1+ansi.StringWidth(word) <= w:
			cur += " " + word
		default:
			out, cur = append(out, cur), word
		}
	}
	if cur != "" || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}
