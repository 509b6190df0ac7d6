package common

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Fit makes s exactly h lines of at most w columns, each padded to w so
// that blocks joined side by side line up.
func Fit(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:max(h, 0)]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		l = ansi.Truncate(l, w, "…")
		lines[i] = l + strings.Repeat(" ", max(w-ansi.StringWidth(l), 0))
	}
	return strings.Join(lines, "\n")
}

// Overlay draws box centred over body, replacing the lines it covers.
func Overlay(body, box string, w, h int) string {
	lines := strings.Split(body, "\n")
	bl := strings.Split(box, "\n")
	bw := 0
	for _, l := range bl {
		bw = max(bw, ansi.StringWidth(l))
	}
	top := max((h-len(bl))/2, 0)
	left := max((w-bw)/2, 0)
	for k, l := range bl {
		y := top + k
		if y >= len(lines) {
			break
		}
		under := lines[y]
		pre := ansi.Truncate(under, left, "")
		pre += strings.Repeat(" ", max(left-ansi.StringWidth(pre), 0))
		post := ansi.TruncateLeft(under, left+ansi.StringWidth(l), "")
		lines[y] = ansi.Truncate(pre+l+post, w, "")
	}
	return strings.Join(lines, "\n")
}
