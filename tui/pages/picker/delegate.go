package picker

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/tui/common"
)

// delegate draws a lab as its title and its description, each wrapped to
// the list's width between words (a word wider than the line, or text
// without spaces such as a Chinese title, breaks at a character), never
// cut with "…": what stops a lab on this machine is often the end of a
// long line. The list gives every item the same height: the tallest
// lab's at the current width (fit), within the room there is.
type delegate struct {
	styles list.DefaultItemStyles
	height int
}

// maxItemLines bounds one lab's lines, so that a screen shows two labs.
const maxItemLines = 8

func newDelegate() *delegate {
	return &delegate{styles: list.NewDefaultItemStyles(), height: 2}
}

// textWidth is the columns an item's text has in a list w wide.
func (d *delegate) textWidth(w int) int {
	return max(w-d.styles.NormalTitle.GetHorizontalFrameSize(), 10)
}

// lines are it's title and description lines at width w: each line of
// the description wrapped on its own.
func lines(it item, w int) (title, desc []string) {
	for _, p := range strings.Split(it.Description(), "\n") {
		desc = append(desc, common.WrapWords(p, w)...)
	}
	return common.WrapWords(it.Title(), w), desc
}

// fit sizes the items for a list of w×h holding items: the tallest one's
// lines, at most what leaves room for the list's title and status lines
// and maxItemLines.
func (d *delegate) fit(items []list.Item, w, h int) {
	n := 2
	for _, li := range items {
		if it, ok := li.(item); ok {
			t, ds := lines(it, d.textWidth(w))
			n = max(n, len(t)+len(ds))
		}
	}
	d.height = max(min(n, maxItemLines, h-6), 2)
}

func (d *delegate) Height() int                         { return d.height }
func (d *delegate) Spacing() int                        { return 1 }
func (d *delegate) Update(tea.Msg, *list.Model) tea.Cmd { return nil }

// Render implements list.ItemDelegate.
func (d *delegate) Render(w io.Writer, m list.Model, index int, li list.Item) {
	it, ok := li.(item)
	if !ok || m.Width() <= 0 {
		return
	}
	title, desc := lines(it, d.textWidth(m.Width()))
	if over := len(title) + len(desc) - d.height; over > 0 {
		// Only in a window too small for the whole item: the end is cut,
		// and says so.
		desc = desc[:max(len(desc)-over, 0)]
		if len(desc) > 0 {
			desc[len(desc)-1] = ansi.Truncate(desc[len(desc)-1], d.textWidth(m.Width())-1, "") + "…"
		}
	}
	s := &d.styles
	ts, ds := s.NormalTitle, s.NormalDesc
	switch {
	case m.FilterState() == list.Filtering && m.FilterValue() == "":
		ts, ds = s.DimmedTitle, s.DimmedDesc
	case index == m.Index() && m.FilterState() != list.Filtering:
		ts, ds = s.SelectedTitle, s.SelectedDesc
	}
	out := ts.Render(strings.Join(title, "\n"))
	if len(desc) > 0 {
		out += "\n" + ds.Render(strings.Join(desc, "\n"))
	}
	for n := len(title) + len(desc); n < d.height; n++ {
		out += "\n"
	}
	fmt.Fprint(w, out) //nolint:errcheck
}
