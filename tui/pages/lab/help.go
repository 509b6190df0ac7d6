package lab

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"

	"github.com/dpulab/dpulab/tui/keymap"
)

// helpView is what the footer's help depends on, read from the page's
// parts: the keys of the view shown, or of the dialog, form or whole-text
// view over it; on the steps view, those that matter for the selected
// step and the run.
type helpView struct {
	km *keymap.KeyMap
	// overlay is the open dialog's, form's or whole-text view's help
	// (nil: none is open).
	overlay help.KeyMap
	view    View
	review  bool
	// compare is the compare view's own help; benches how many benches
	// it has to show.
	compare help.KeyMap
	benches int
	// dashRunning: the running step shows the dashboard.
	dashRunning bool
	// Of the selected step: a task step, failed (with a status), a step
	// that writes files.
	task, failed, writesFiles bool
}

// compareKeys are the compare view's own keys, with b (next bench) when
// the view has more than one bench to show and does not list it itself.
func (h helpView) compareKeys() []key.Binding {
	ks := h.compare.ShortHelp()
	for _, k := range ks {
		if k.Help().Key == h.km.NextBench.Help().Key {
			return ks
		}
	}
	if h.benches > 1 {
		ks = append(ks, h.km.NextBench)
	}
	return ks
}

// short is ShortHelp: the keys that matter right now.
func (h helpView) short() []key.Binding {
	km := *h.km
	switch {
	case h.overlay != nil:
		return h.overlay.ShortHelp()
	case h.view == ViewCompare && h.review:
		return append(h.compareKeys(), km.Back, km.Restart, km.Quit, km.Help)
	case h.view == ViewCompare:
		return append(h.compareKeys(), km.Back, km.Quit, km.Help)
	case h.view == ViewDashboard:
		return []key.Binding{keymap.Relabel(km.Dashboard, "close dashboard"), km.Back, km.Compare, km.Whole, km.Quit, km.Help}
	}
	if h.review {
		return []key.Binding{km.Restart, km.Compare, keymap.Relabel(km.NextPrev, "next/prev"), km.Whole, km.SwitchPane, km.Copy, km.Quit, km.Help}
	}
	// n/p's short word, so that w and v fit a 100-column footer.
	km.NextPrev = keymap.Relabel(km.NextPrev, "next/prev")
	switch {
	case h.dashRunning:
		return []key.Binding{km.Dashboard, km.NextPrev, km.Whole, km.SwitchPane, km.Quit, km.Help}
	case h.task:
		// Short words, so that all four fit 80 columns.
		return []key.Binding{keymap.Relabel(km.Shell, "shell"), keymap.Relabel(km.Check, "check"), km.ShowMe, km.DoIt, km.Skip, km.NextPrev, km.Whole, km.Quit, km.Help}
	case h.failed:
		return []key.Binding{km.Retry, km.Skip, km.Whole, km.Vars, km.NextPrev, km.SwitchPane, km.Copy, km.Quit, km.Help}
	case h.writesFiles:
		// In the order they give way when the footer is too narrow:
		// the last first.
		return []key.Binding{km.Run, km.RunAll, km.Skip, km.NextPrev, km.Files, km.Whole, km.Vars, km.SwitchPane, km.Copy, km.Quit, km.Help}
	}
	return []key.Binding{km.Run, km.RunAll, km.Skip, km.NextPrev, km.Whole, km.Vars, km.SwitchPane, km.Copy, km.Quit, km.Help}
}

// full is FullHelp: everything the view shown answers to, in columns: a
// dialog's, the form's, the whole-text view's, the dashboard's or the
// compare view's own keys, else the lab screen's.
func (h helpView) full() [][]key.Binding {
	km := h.km
	switch {
	case h.overlay != nil:
		return h.overlay.FullHelp()
	case h.view == ViewCompare:
		own := h.compare.FullHelp()
		bench := []key.Binding{}
		if len(h.compareKeys()) > len(h.compare.ShortHelp()) {
			bench = append(bench, km.NextBench)
		}
		page := []key.Binding{km.Compare, km.Dashboard, km.Back, km.Quit}
		if h.review {
			page = append(page, km.Restart)
		}
		return append(append(own, append(bench, km.Whole)), page, []key.Binding{km.ForceQuit, km.Help})
	case h.view == ViewDashboard:
		return [][]key.Binding{
			{keymap.Relabel(km.Dashboard, "close dashboard"), km.Back, km.Compare},
			{km.Whole, km.Quit, km.ForceQuit, km.Help},
		}
	}
	// Three columns of up to seven rows (the help's height), so that all
	// of it fits 80 columns; the compare view's tabs are in its own help.
	run := []key.Binding{km.Run, km.RunAll, km.Retry, km.Skip, km.Vars, km.Whole, km.Copy}
	views := []key.Binding{km.Files, km.Dashboard, km.Compare, km.Back, km.Quit, km.ForceQuit, km.Help}
	switch {
	case h.review:
		run = []key.Binding{km.Restart, km.Whole, km.Copy}
	case h.task:
		// A task step's own keys; c checks here, so the compare view
		// is not among them.
		run = []key.Binding{keymap.Relabel(km.Shell, "open a shell (enter too)"), km.Check, km.ShowMe, km.DoIt, km.Skip, km.Vars, km.Whole}
		views = []key.Binding{km.Files, km.Copy, km.Dashboard, km.Back, km.Quit, km.ForceQuit, km.Help}
	}
	return [][]key.Binding{
		run,
		{km.Next, km.Prev, km.Up, km.Down, km.SwitchPane, km.Top, km.Bottom},
		views,
	}
}
