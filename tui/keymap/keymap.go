// Package keymap holds every key binding of the TUI in one place, so that the
// footer help, the code and the docs never disagree on what a key does.
package keymap

import "github.com/charmbracelet/bubbles/key"

// KeyMap is the TUI's key bindings.
type KeyMap struct {
	Up, Down       key.Binding
	PageUp, PageDn key.Binding
	// HalfPageUp and HalfPageDn scroll the output pane by half a page.
	HalfPageUp, HalfPageDn key.Binding
	Top, Bottom            key.Binding
	Enter                  key.Binding
	Back                   key.Binding
	Quit                   key.Binding
	ForceQuit              key.Binding
	Help                   key.Binding
	Filter                 key.Binding
	// Restart opens a lab from its first step (picker).
	Restart key.Binding
	// Details shows the whole of the highlighted lab (picker): its list
	// line says what stops it in a few words, this says all of it.
	Details key.Binding

	// Lab screen.
	Run    key.Binding
	RunAll key.Binding
	Skip   key.Binding
	Retry  key.Binding
	Next   key.Binding
	Prev   key.Binding
	// NextPrev is n and p together, for the short footer.
	NextPrev   key.Binding
	SwitchPane key.Binding
	Copy       key.Binding
	Dashboard  key.Binding
	Compare    key.Binding
	// Whole opens the whole-text view: every line the screen cuts with
	// "…", whole and wrapped.
	Whole key.Binding
	// Vars opens the variables form from any step.
	Vars key.Binding
	// Files opens the rendered-files view: what the template and deploy
	// steps write, where, with what in it.
	Files key.Binding

	// Task steps (done by the trainee by hand): Shell hands the terminal
	// to a shell on the step's host (enter does too), Check runs the
	// step's verify, ShowMe shows the commands that would do it, DoIt has
	// dpulab run them. Check shares c with Compare: on a task step c
	// checks.
	Shell, Check, ShowMe, DoIt key.Binding

	// Dialogs and forms.
	Left, Right key.Binding
	NextField   key.Binding
	PrevField   key.Binding
	Cancel      key.Binding
	// Edit starts editing the focused TCO input.
	Edit key.Binding
	// NextBench shows the compare view's next bench.
	NextBench key.Binding

	// Compare view tabs.
	Tab1, Tab2, Tab3, Tab4 key.Binding

	// Results browser: Runs opens it from the picker; Replay and Report
	// act on the run highlighted.
	Runs, Replay, Report key.Binding

	// Replay / booth.
	Pause key.Binding
	// AnyKey is booth mode's help entry: whatever a visitor presses
	// pauses or resumes.
	AnyKey key.Binding
}

// Relabel returns b with the help text desc: the same keys, worded for
// where it is shown ("enter submit", "enter run with these values").
func Relabel(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() *KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return &KeyMap{
		Up:         b("↑/k", "up", "up", "k"),
		Down:       b("↓/j", "down", "down", "j"),
		PageUp:     b("pgup", "page up", "pgup"),
		PageDn:     b("pgdn", "page down", "pgdown"),
		HalfPageUp: b("ctrl+u", "half page up", "ctrl+u"),
		HalfPageDn: b("ctrl+d", "half page down", "ctrl+d"),
		Top:        b("g/home", "top", "home", "g"),
		Bottom:     b("G/end", "bottom (follow)", "end", "G"),
		Enter:      b("enter", "open", "enter"),
		Back:       b("esc", "back", "esc"),
		Quit:       b("q", "quit", "q"),
		ForceQuit:  b("ctrl+c", "quit now", "ctrl+c"),
		Help:       b("?", "more keys", "?"),
		Filter:     b("/", "filter", "/"),
		Restart:    b("R", "start over", "R"),
		Details:    b("i", "details", "i"),

		Run:        b("enter", "run", "enter"),
		RunAll:     b("a", "run all", "a"),
		Skip:       b("s", "skip", "s"),
		Retry:      b("r", "retry", "r"),
		Next:       b("n", "next step", "n"),
		Prev:       b("p", "previous step", "p"),
		NextPrev:   b("n/p", "next/prev step", "n", "p"),
		SwitchPane: b("tab", "pane", "tab"),
		Copy:       b("y", "copy cmds", "y"),
		Dashboard:  b("d", "dashboard", "d"),
		Compare:    b("c", "compare view", "c"),
		Whole:      b("w", "read whole", "w"),
		Vars:       b("v", "variables", "v"),
		Files:      b("F", "rendered files", "F"),

		Shell:  b("t", "open a shell", "t"),
		Check:  b("c", "check my work", "c"),
		ShowMe: b("m", "show me", "m"),
		DoIt:   b("f", "do it for me", "f"),

		Left:      b("←/h", "left", "left", "h"),
		Right:     b("→/l", "right", "right", "l"),
		NextField: b("tab", "next field", "tab", "down"),
		PrevField: b("shift+tab", "previous field", "shift+tab", "up"),
		Cancel:    b("esc", "cancel", "esc"),
		Edit:      b("enter", "edit", "enter", "e"),
		NextBench: b("b", "next bench", "b"),

		Tab1: b("1", "table", "1"),
		Tab2: b("2", "charts", "2"),
		Tab3: b("3", "sweep", "3"),
		Tab4: b("4", "TCO", "4"),

		Runs:   b("v", "past runs", "v"),
		Replay: b("r", "replay", "r"),
		Report: b("o", "report", "o"),

		Pause:  b("space", "pause", " "),
		AnyKey: b("any key", "pause/resume", " "),
	}
}
