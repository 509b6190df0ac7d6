package styles

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

var sgrRE = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// hasColour reports whether s sets a foreground or background colour (SGR
// 30–38, 40–48, 90–97, 100–107); bold and reverse are not colours.
func hasColour(s string) bool {
	for _, m := range sgrRE.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.Split(m[1], ";") {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				return true
			}
		}
	}
	return false
}

// With NO_COLOR no style may emit a colour, even on a true-colour terminal.
func TestNoColorEmitsNoColour(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	t.Cleanup(func() { lipgloss.SetColorProfile(termenv.Ascii) })
	all := func(s *Styles) map[string]lipgloss.Style {
		return map[string]lipgloss.Style{
			"title": s.Title, "better": s.Better, "worse": s.Worse, "error": s.Error,
			"hint": s.Hint, "modal": s.Modal, "pane": s.PaneActive, "banner": s.Banner,
		}
	}
	for name, st := range all(DefaultStyles(true)) {
		if out := st.Render("x"); hasColour(out) {
			t.Errorf("%s renders a colour with NO_COLOR: %q", name, out)
		}
	}
	// The check itself must see colours when they are on.
	if !hasColour(DefaultStyles(false).Better.Render("x")) {
		t.Fatal("colour detection is broken: the coloured style shows no colour")
	}
	if s := DefaultStyles(true); s.SeriesColors != nil || s.LiveColors != nil || s.ProgressColor != "" {
		t.Error("charts and progress bars must not be coloured with NO_COLOR")
	}
}
