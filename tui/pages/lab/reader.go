package lab

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap"
)

// reader is the whole-text view: everything the steps view shows of the
// selected step, and cuts with "…" to fit (title, error, commands, hint,
// output, status line), wrapped to the screen's width in a scrollable
// overlay. It is built when opened: what arrives later shows on reopening,
// as in a pager.
type reader struct {
	common.Common
	vp    viewport.Model
	title string
	// text holds the sections unwrapped, wrapped again on resize.
	text []section
	// start is the section the view opened at (the focused pane's).
	start string
	// close is the key that opened the view and closes it again (esc and
	// q close every one).
	close key.Binding
}

// section is one titled part of the whole-text view.
type section struct {
	title string
	lines []string
}

var _ common.Component = (*reader)(nil)

func newReader(c common.Common, title string, text []section, start string) *reader {
	r := &reader{Common: c, vp: viewport.New(c.Width, c.Height), title: title, text: text, start: start, close: c.KeyMap.Whole}
	r.vp.KeyMap = viewport.KeyMap{
		PageDown:     c.KeyMap.PageDn,
		PageUp:       c.KeyMap.PageUp,
		Up:           c.KeyMap.Up,
		Down:         c.KeyMap.Down,
		HalfPageUp:   c.KeyMap.HalfPageUp,
		HalfPageDown: c.KeyMap.HalfPageDn,
	}
	r.SetSize(c.Width, c.Height)
	return r
}

// box is the overlay's frame: the dialogs' border, a column of padding.
func (r *reader) box() lipgloss.Style { return r.Styles.Modal.Padding(0, 1) }

// inner is the text's width: the screen less a column of margin each
// side and the box's frame.
func (r *reader) inner() int { return max(r.Width-2-r.box().GetHorizontalFrameSize(), 20) }

// SetSize implements common.Component: the overlay leaves a column and a
// line of margin, so the screen under it still shows at its edges.
func (r *reader) SetSize(w, h int) {
	r.Common.SetSize(w, h)
	r.vp.Width = r.inner()
	r.vp.Height = max(h-1-r.box().GetVerticalFrameSize()-2, 3) // margin, frame, title and help lines
	at := 0
	var b strings.Builder
	n := 0
	for k, s := range r.text {
		if k > 0 {
			b.WriteString("\n")
			n++
		}
		if s.title == r.start {
			at = n
		}
		b.WriteString(r.Styles.PaneTitle.Render("── "+s.title+" ") + "\n")
		n++
		for _, l := range s.lines {
			w := wrap(l, r.inner())
			b.WriteString(w + "\n")
			n += strings.Count(w, "\n") + 1
		}
	}
	off := r.vp.YOffset
	r.vp.SetContent(strings.TrimRight(b.String(), "\n"))
	if r.start != "" {
		off, r.start = at, ""
	}
	r.vp.SetYOffset(off)
}

// Init implements tea.Model.
func (r *reader) Init() tea.Cmd { return nil }

// Update scrolls; closing is the page's (it owns the reader).
func (r *reader) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(k, r.KeyMap.Top):
			r.vp.GotoTop()
			return r, nil
		case key.Matches(k, r.KeyMap.Bottom):
			r.vp.GotoBottom()
			return r, nil
		}
	}
	var cmd tea.Cmd
	r.vp, cmd = r.vp.Update(msg)
	return r, cmd
}

// View draws the box.
func (r *reader) View() string {
	st := r.Styles
	head := st.ModalTitle.Render(r.title)
	if !r.vp.AtTop() || !r.vp.AtBottom() {
		head += st.Muted.Render(fmt.Sprintf("  %3.f%%", r.vp.ScrollPercent()*100))
	}
	body := common.Fit(r.vp.View(), r.inner(), r.vp.Height)
	foot := st.Muted.Render("↑/↓ pgup/pgdn scroll · g/G top/bottom · esc close")
	return r.box().Width(r.inner() + r.box().GetHorizontalPadding()).
		Render(ansi.Truncate(head, r.inner(), "…") + "\n" + body + "\n" + ansi.Truncate(foot, r.inner(), "…"))
}

// ShortHelp implements help.KeyMap.
func (r *reader) ShortHelp() []key.Binding {
	km := r.KeyMap
	return []key.Binding{km.Up, km.Down, km.PageDn, keymap.Relabel(km.Back, "close"), km.Help}
}

// FullHelp implements help.KeyMap.
func (r *reader) FullHelp() [][]key.Binding {
	km := r.KeyMap
	return [][]key.Binding{
		{km.Up, km.Down, km.PageUp, km.PageDn},
		{km.HalfPageUp, km.HalfPageDn, km.Top, km.Bottom},
		{keymap.Relabel(km.Back, "close"), keymap.Relabel(r.close, "close"), km.Help},
	}
}

// setFlag matches the headless run's advice: --set NAME=VALUE.
var setFlag = regexp.MustCompile(`(?:--set|-s) ([A-Za-z_][A-Za-z0-9_.-]*)=(\S*[^\s.,;:)])?`)

// tuiHint words a hint for the TUI: the engine's hints are written for
// the command line (`--set port=NNNN`), where the TUI's way is the
// variables form (km.Vars).
func tuiHint(km *keymap.KeyMap, h string) string {
	k := km.Vars.Help().Key
	return setFlag.ReplaceAllString(h, "the variables form ("+k+"), field $1")
}

// wrap breaks l into lines of at most w columns at spaces only (ansi's
// wrappers also break at hyphens, which splits paths and flags such as
// /tmp/dpulab-check or --set-name in two); a word longer than a line is
// cut where the line ends. A line holding SGR ends with a reset, so a
// colour never runs into the box's border.
func wrap(l string, w int) string {
	var out []string
	cur, curW := "", 0
	flush := func() {
		if strings.IndexByte(cur, 0x1b) >= 0 {
			cur += ansi.ResetStyle
		}
		out = append(out, cur)
		cur, curW = "", 0
	}
	for k, word := range strings.Split(l, " ") {
		ww := ansi.StringWidth(word)
		switch {
		case k == 0:
		case curW+1+ww <= w:
			cur += " "
			curW++
		default:
			flush()
		}
		if ww > w {
			pieces := strings.Split(ansi.Hardwrap(word, w-curW, true), "\n")
			for _, p := range pieces[:len(pieces)-1] {
				cur += p
				flush()
			}
			word = pieces[len(pieces)-1]
			ww = ansi.StringWidth(word)
		}
		cur += word
		curW += ww
	}
	flush()
	return strings.Join(out, "\n")
}
