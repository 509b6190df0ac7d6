package lab

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"

	"github.com/dpulab/dpulab/tui/common"
)

// keysOf is the help's keys as shown, each "key desc".
func keysOf(bs []key.Binding) string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Help().Key+" "+b.Help().Desc)
	}
	return strings.Join(out, ", ")
}

// stubHelp is a part's own help.
type stubHelp struct{ short []key.Binding }

func (s stubHelp) ShortHelp() []key.Binding  { return s.short }
func (s stubHelp) FullHelp() [][]key.Binding { return [][]key.Binding{s.short} }

// TestHelpView: the footer's keys by what is shown and selected: a
// dialog's (or the form's, or the whole-text view's) own; the compare
// view's with b when it has benches to page through and does not list b;
// the dashboard's; a finished run's; while a dashboard step runs; a task
// step's; a failed step's; a step that writes files; any other step's.
func TestHelpView(t *testing.T) {
	km := common.NewCommon(true, 100, 30).KeyMap
	nextPrev := km.NextPrev.Help().Desc
	tab := stubHelp{[]key.Binding{key.NewBinding(key.WithKeys("1"), key.WithHelp("1-4", "tabs"))}}
	tabB := stubHelp{append(tab.short, km.NextBench)}
	for _, tc := range []struct {
		name  string
		h     helpView
		short string
		// full, when set, is the first column of the full help.
		full string
	}{
		{name: "a dialog", h: helpView{overlay: stubHelp{[]key.Binding{km.Cancel}}, view: ViewCompare, task: true}, short: "esc cancel", full: "esc cancel"},
		{name: "compare", h: helpView{view: ViewCompare, compare: tab, benches: 1}, short: "1-4 tabs, esc back, q quit, ? more keys", full: "1-4 tabs"},
		{name: "compare, benches", h: helpView{view: ViewCompare, compare: tab, benches: 2}, short: "1-4 tabs, b next bench, esc back, q quit, ? more keys"},
		{name: "compare listing b", h: helpView{view: ViewCompare, compare: tabB, benches: 2}, short: "1-4 tabs, b next bench, esc back, q quit, ? more keys"},
		{name: "compare, review", h: helpView{view: ViewCompare, compare: tab, review: true}, short: "1-4 tabs, esc back, R start over, q quit, ? more keys"},
		{name: "dashboard", h: helpView{view: ViewDashboard, task: true}, short: "d close dashboard, esc back, c compare view, w read whole, q quit, ? more keys", full: "d close dashboard, esc back, c compare view"},
		{name: "review", h: helpView{review: true, task: true}, short: "R start over, c compare view, n/p next/prev, w read whole, tab pane, y copy cmds, q quit, ? more keys", full: "R start over, w read whole, y copy cmds"},
		{name: "a dashboard step runs", h: helpView{dashRunning: true, task: true}, short: "d dashboard, n/p next/prev, w read whole, tab pane, q quit, ? more keys"},
		{name: "a task step", h: helpView{task: true, failed: true}, short: "t shell, c check, m show me, f do it for me, s skip, n/p next/prev, w read whole, q quit, ? more keys",
			full: "t open a shell (enter too), c check my work, m show me, f do it for me, s skip, v variables, w read whole"},
		{name: "a failed step", h: helpView{failed: true, writesFiles: true}, short: "r retry, s skip, w read whole, v variables, n/p next/prev, tab pane, y copy cmds, q quit, ? more keys"},
		{name: "a step that writes files", h: helpView{writesFiles: true}, short: "enter run, a run all, s skip, n/p next/prev, F rendered files, w read whole, v variables, tab pane, y copy cmds, q quit, ? more keys"},
		{name: "a step", h: helpView{}, short: "enter run, a run all, s skip, n/p next/prev, w read whole, v variables, tab pane, y copy cmds, q quit, ? more keys",
			full: "enter run, a run all, r retry, s skip, v variables, w read whole, y copy cmds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.h.km = km
			if got := keysOf(tc.h.short()); got != tc.short {
				t.Errorf("short help\n got %s\nwant %s", got, tc.short)
			}
			if tc.full != "" {
				if got := keysOf(tc.h.full()[0]); got != tc.full {
					t.Errorf("full help's first column\n got %s\nwant %s", got, tc.full)
				}
			}
			if km.NextPrev.Help().Desc != nextPrev {
				t.Fatalf("the shared key map's n/p now reads %q", km.NextPrev.Help().Desc)
			}
		})
	}
}
