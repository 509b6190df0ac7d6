// Package styles holds every lipgloss style of the TUI in one place, so that
// no component writes a colour inline and NO_COLOR can turn all of them off.
package styles

import (
	"github.com/charmbracelet/lipgloss"
)

// Styles are the TUI's styles. Components read them from common.Common.
type Styles struct {
	// NoColor is set when colours are off (NO_COLOR or a dumb terminal);
	// charts and markdown then render without colour escapes too.
	NoColor bool

	App        lipgloss.Style
	Title      lipgloss.Style
	Subtitle   lipgloss.Style
	Muted      lipgloss.Style
	Bold       lipgloss.Style
	Error      lipgloss.Style
	ErrorBox   lipgloss.Style
	Hint       lipgloss.Style
	Better     lipgloss.Style
	Worse      lipgloss.Style
	Banner     lipgloss.Style
	StatusBar  lipgloss.Style
	Pane       lipgloss.Style
	PaneActive lipgloss.Style
	PaneTitle  lipgloss.Style

	// Step list.
	StepSelected lipgloss.Style
	StepNormal   lipgloss.Style
	StepDone     lipgloss.Style
	StepFailed   lipgloss.Style
	StepSkipped  lipgloss.Style
	StepRunning  lipgloss.Style

	// Commands pane.
	CmdHost lipgloss.Style
	CmdSudo lipgloss.Style
	CmdText lipgloss.Style

	// Output pane.
	OutHost   lipgloss.Style
	OutStderr lipgloss.Style

	// Modal dialogs.
	Modal         lipgloss.Style
	ModalTitle    lipgloss.Style
	Choice        lipgloss.Style
	ChoiceActive  lipgloss.Style
	FieldLabel    lipgloss.Style
	FieldInvalid  lipgloss.Style
	Fingerprint   lipgloss.Style
	Countdown     lipgloss.Style
	BigNumber     lipgloss.Style
	BigNumberUnit lipgloss.Style
	BigBox        lipgloss.Style

	// Table (compare view).
	TableHeader lipgloss.Style
	TableCell   lipgloss.Style

	// SeriesColors colour a chart's series in order (the variants of a
	// compare); nil with NO_COLOR, when the glyphs tell series apart.
	SeriesColors []lipgloss.Style
	// LiveColors colour the dashboard's live metrics in the metric table's
	// order (TPS, p50, p99, CPU, its network share, Gb/s, then any new
	// one); nil with NO_COLOR.
	LiveColors []lipgloss.Style
	// ProgressFull and ProgressEmpty colour the progress bars.
	ProgressColor string
}

// DefaultStyles returns the TUI's styles; with noColor every style keeps its
// layout (borders, padding, bold) but no colour.
func DefaultStyles(noColor bool) *Styles {
	c := func(s string) lipgloss.TerminalColor {
		if noColor {
			return lipgloss.NoColor{}
		}
		return lipgloss.Color(s)
	}
	const (
		accent = "#76B900" // NVIDIA green
		blue   = "#5FAFFF"
		red    = "#FF5F5F"
		yellow = "#FFD75F"
		grey   = "#8A8A8A"
		dark   = "#303030"
		white  = "#EEEEEE"
	)
	s := &Styles{NoColor: noColor}
	s.App = lipgloss.NewStyle()
	s.Title = lipgloss.NewStyle().Bold(true).Foreground(c(accent))
	s.Subtitle = lipgloss.NewStyle().Foreground(c(grey))
	s.Muted = lipgloss.NewStyle().Foreground(c(grey))
	s.Bold = lipgloss.NewStyle().Bold(true)
	s.Error = lipgloss.NewStyle().Bold(true).Foreground(c(red))
	s.ErrorBox = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c(red)).Padding(0, 1)
	s.Hint = lipgloss.NewStyle().Foreground(c(yellow))
	s.Better = lipgloss.NewStyle().Foreground(c(accent))
	s.Worse = lipgloss.NewStyle().Foreground(c(red))
	s.Banner = lipgloss.NewStyle().Bold(true).Foreground(c(dark)).Background(c(yellow)).Padding(0, 1)
	if noColor {
		s.Banner = lipgloss.NewStyle().Bold(true).Reverse(true).Padding(0, 1)
	}
	s.StatusBar = lipgloss.NewStyle().Foreground(c(white))
	s.Pane = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c(dark))
	s.PaneActive = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c(accent))
	if noColor {
		// Without colour the active pane must still be visible.
		s.PaneActive = lipgloss.NewStyle().Border(lipgloss.ThickBorder())
	}
	s.PaneTitle = lipgloss.NewStyle().Bold(true)

	s.StepSelected = lipgloss.NewStyle().Bold(true).Reverse(true)
	s.StepNormal = lipgloss.NewStyle()
	s.StepDone = lipgloss.NewStyle().Foreground(c(accent))
	s.StepFailed = lipgloss.NewStyle().Foreground(c(red))
	s.StepSkipped = lipgloss.NewStyle().Foreground(c(grey))
	s.StepRunning = lipgloss.NewStyle().Foreground(c(blue))

	s.CmdHost = lipgloss.NewStyle().Foreground(c(blue))
	s.CmdSudo = lipgloss.NewStyle().Bold(true).Foreground(c(red))
	s.CmdText = lipgloss.NewStyle()

	s.OutHost = lipgloss.NewStyle().Foreground(c(blue))
	s.OutStderr = lipgloss.NewStyle().Foreground(c(yellow))

	s.Modal = lipgloss.NewStyle().Border(lipgloss.DoubleBorder()).BorderForeground(c(yellow)).Padding(1, 2)
	s.ModalTitle = lipgloss.NewStyle().Bold(true).Foreground(c(yellow))
	s.Choice = lipgloss.NewStyle().Padding(0, 1)
	s.ChoiceActive = lipgloss.NewStyle().Padding(0, 1).Bold(true).Reverse(true)
	s.FieldLabel = lipgloss.NewStyle().Bold(true)
	s.FieldInvalid = lipgloss.NewStyle().Foreground(c(red))
	s.Fingerprint = lipgloss.NewStyle().Bold(true).Foreground(c(blue))
	s.Countdown = lipgloss.NewStyle().Bold(true).Foreground(c(yellow))
	s.BigNumber = lipgloss.NewStyle().Bold(true).Foreground(c(accent))
	s.BigNumberUnit = lipgloss.NewStyle().Foreground(c(grey))
	s.BigBox = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c(dark)).Padding(0, 1)

	s.TableHeader = lipgloss.NewStyle().Bold(true)
	s.TableCell = lipgloss.NewStyle()

	if !noColor {
		// The terminal's own ANSI colours (its theme decides the shades), as
		// btop and k9s draw their graphs: red, green, bright blue, yellow,
		// magenta, cyan.
		ansi := func(cs ...string) []lipgloss.Style {
			out := make([]lipgloss.Style, len(cs))
			for i, c := range cs {
				out[i] = lipgloss.NewStyle().Foreground(lipgloss.Color(c))
			}
			return out
		}
		s.SeriesColors = ansi("1", "2", "12", "3", "5", "6")
		s.LiveColors = ansi("2", "12", "1", "3", "5", "6")
		s.ProgressColor = accent
	}
	return s
}
