// Package replay plays a recorded results folder back: the dashboard fed
// with the recorded per-second series, then the compare view, always under
// a banner saying it is a replay, of which run, recorded where and when. A
// booth without the hardware shows a real DPU run this way.
package replay

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/components/compare"
	"github.com/dpulab/dpulab/tui/components/dashboard"
)

// TickMsg advances the playback by one recorded second.
type TickMsg struct{ gen int }

// Options configure a replay.
type Options struct {
	// Step is the wall time per recorded second (default 250ms: 4× speed).
	Step time.Duration
	// Loop starts over after showing the compare view for Hold.
	Loop bool
	Hold time.Duration
	TCO  compare.TCOFunc
	// Back says esc leaves the replay (opened from the results browser).
	Back bool
}

// Model is the replay page.
type Model struct {
	common.Common
	res     *results.Results
	opts    Options
	dash    *dashboard.Model
	cmp     *compare.Model
	samples []steps.Sample
	labels  []string // progress label per sample
	pos     int
	paused  bool
	showCmp bool
	holdEnd time.Time
	gen     int
}

var _ common.Component = (*Model)(nil)

// New builds a replay of res.
func New(c common.Common, res *results.Results, opts Options) *Model {
	if opts.Step <= 0 {
		opts.Step = 250 * time.Millisecond
	}
	if opts.Hold <= 0 {
		opts.Hold = 45 * time.Second
	}
	m := &Model{Common: c, res: res, opts: opts, dash: dashboard.New(c), cmp: compare.New(c, res, opts.TCO)}
	m.flatten()
	m.SetSize(c.Width, c.Height)
	return m
}

// flatten orders every recorded second as the run produced them, each
// labelled a replay of what its variant was (results.VariantFigures).
func (m *Model) flatten() {
	for bi := range m.res.Benches {
		b := &m.res.Benches[bi]
		for vi := range b.Variants {
			v := &b.Variants[vi]
			figs := results.VariantFigures(m.res, v)
			figs.Replay = true
			for _, p := range v.Points {
				sweep := ""
				if b.Sweep != "" {
					sweep = b.Sweep + " " + p.Value
				}
				for _, r := range p.Runs {
					for _, pt := range r.Series {
						m.samples = append(m.samples, steps.Sample{Step: b.Step, Variant: v.Label, Sweep: sweep, Run: r.Run, Point: pt, Figures: figs})
						lbl := "variant " + v.Label
						if sweep != "" {
							lbl += ", " + sweep
						}
						m.labels = append(m.labels, fmt.Sprintf("%s, run %d", lbl, r.Run))
					}
				}
			}
		}
	}
}

// Banner is the line that says this is a replay, of what, from where.
func Banner(res *results.Results) string {
	when := res.Started
	if when.IsZero() {
		when = res.Finished
	}
	date := "an unknown date"
	if !when.IsZero() {
		date = when.UTC().Format("2006-01-02 15:04 UTC")
	}
	var hosts []string
	for _, h := range res.Hosts {
		s := h.Name
		var ls []string
		for _, k := range sortedKeys(h.Labels) {
			ls = append(ls, k+"="+h.Labels[k])
		}
		if h.OS != "" {
			ls = append(ls, h.OS+"/"+h.Arch)
		}
		if len(ls) > 0 {
			s += " (" + strings.Join(ls, ", ") + ")"
		}
		hosts = append(hosts, s)
	}
	where := "this machine"
	if len(hosts) > 0 {
		where = strings.Join(hosts, ", ")
	}
	title := res.Title
	if title == "" {
		title = res.Lab
	}
	// What the recorded numbers were is said first: a replay of a
	// rehearsal or an emulation must not read as a replay of a measurement,
	// nor a run that emulated some benches and measured others as an
	// emulation as a whole (results.ReportKindTitle, as the reports say).
	what := "a run"
	switch k := results.ReportKindTitle(res); {
	case k == "":
	case strings.Contains(k, results.PartEmulation):
		em, rest := results.PartFigures(res)
		measured := "measured"
		if res.Rehearsal || res.SoftwareRDMA != "" {
			measured = "not emulated"
		}
		what = fmt.Sprintf("a %s (%s emulated", k, strings.Join(em, ", "))
		if len(rest) > 0 {
			what += fmt.Sprintf("; %s %s", strings.Join(rest, ", "), measured)
		}
		what += ")"
	case k == "EMULATION":
		what = "an EMULATION (no DPU)"
	case k == "REHEARSAL":
		what = "a REHEARSAL (no DPU)"
	case k == results.SoftwareRDMALabel(res.SoftwareRDMA):
		what = "a run over " + k
	default:
		what = "a " + k
		if !strings.Contains(k, results.SoftwareRDMAShort) {
			what += " (no DPU)"
		}
	}
	return fmt.Sprintf("REPLAY of %s recorded on %s on %s — %s", what, date, where, title)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SetSize implements common.Component.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	m.dash.SetSize(w, h-2)
	m.cmp.SetSize(w, h-2)
}

// Samples is the number of recorded seconds; Pos how many were played.
func (m *Model) Samples() int { return len(m.samples) }

// Pos is how many recorded seconds have been played.
func (m *Model) Pos() int { return m.pos }

// ShowingCompare reports whether the compare view is shown.
func (m *Model) ShowingCompare() bool { return m.showCmp }

// Dashboard returns the dashboard (for tests).
func (m *Model) Dashboard() *dashboard.Model { return m.dash }

// Compare returns the compare view (for tests).
func (m *Model) Compare() *compare.Model { return m.cmp }

func (m *Model) tick() tea.Cmd {
	gen := m.gen
	return tea.Tick(m.opts.Step, func(time.Time) tea.Msg { return TickMsg{gen: gen} })
}

// Init starts the playback.
func (m *Model) Init() tea.Cmd {
	if len(m.samples) == 0 {
		m.showCmp = true
		return nil
	}
	return m.tick()
}

// Advance plays n recorded seconds at once (tests, fast-forward).
func (m *Model) Advance(n int) {
	for ; n > 0 && m.pos < len(m.samples); n-- {
		s := m.samples[m.pos]
		m.dash.AddSample(s)
		m.pos++
		m.dash.SetProgress(m.progress())
	}
	if m.pos >= len(m.samples) && !m.showCmp {
		m.showCmp = true
		m.holdEnd = time.Now().Add(m.opts.Hold)
	}
}

func (m *Model) progress() steps.Progress {
	total := len(m.samples)
	sec := time.Second
	figs := results.Figures{Replay: true}
	if m.pos > 0 {
		figs = m.samples[m.pos-1].Figures
	}
	return steps.Progress{
		Figures:   figs,
		Label:     "replay · " + m.labels[max(m.pos-1, 0)],
		Fraction:  float64(m.pos) / float64(max(total, 1)),
		Elapsed:   time.Duration(m.pos) * sec,
		Remaining: time.Duration(total-m.pos) * sec,
	}
}

// Update plays, pauses, switches views.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case TickMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		if m.showCmp {
			if m.opts.Loop && !m.paused && time.Now().After(m.holdEnd) {
				m.restart()
			}
			return m, m.tick()
		}
		if !m.paused {
			m.Advance(1)
		}
		return m, m.tick()
	case tea.KeyMsg:
		km := m.KeyMap
		switch {
		case key.Matches(msg, km.Pause):
			m.paused = !m.paused
			return m, nil
		case key.Matches(msg, km.SwitchPane), key.Matches(msg, km.Compare), key.Matches(msg, km.Dashboard):
			m.showCmp = !m.showCmp
			return m, nil
		case msg.String() == "R":
			m.restart()
			return m, nil
		case !m.showCmp && key.Matches(msg, km.Right):
			// Step one recorded second (handy while paused).
			m.Advance(1)
			return m, nil
		}
		if m.showCmp {
			_, cmd := m.cmp.Update(msg)
			return m, cmd
		}
	}
	return m, nil
}

func (m *Model) restart() {
	m.pos = 0
	m.showCmp = false
	m.dash.Reset()
}

// View draws the banner and the active view.
func (m *Model) View() string {
	if m.TooSmall() {
		return m.TooSmallView()
	}
	st := m.Styles
	// The banner wraps (a long title or host list is read whole at 80
	// columns); the body gives up the lines it takes.
	bl := strings.Split(ansi.Wrap(Banner(m.res), max(m.Width-st.Banner.GetHorizontalFrameSize(), 10), " "), "\n")
	if len(bl) > 3 {
		bl = bl[:3]
		bl[2] = ansi.Truncate(bl[2], m.Width-st.Banner.GetHorizontalFrameSize()-1, "") + "…"
	}
	for i, l := range bl {
		bl[i] = st.Banner.Render(l)
	}
	banner := strings.Join(bl, "\n")
	state := fmt.Sprintf("second %d/%d", m.pos, len(m.samples))
	if !m.showCmp && m.pos > 0 {
		// What the figures shown now are, per variant, as the live
		// run says it: a replay's banner names the whole recording.
		f := m.samples[m.pos-1].Figures
		f.Replay = false
		state += " (" + cmp.Or(f.Short(), "measured") + ")"
	}
	if m.paused {
		state += " · PAUSED"
	}
	keys := " · space pause · → step · tab dashboard/compare · R restart · q quit"
	if m.opts.Back {
		keys += " · esc back"
	}
	help := st.Muted.Render(state + keys)
	var body string
	bodyH := m.Height - 1 - len(bl)
	if m.showCmp {
		if m.cmp.Height != bodyH {
			m.cmp.SetSize(m.Width, bodyH)
		}
		body = m.cmp.View()
	} else {
		if m.dash.Height != bodyH {
			m.dash.SetSize(m.Width, bodyH)
		}
		body = m.dash.View()
	}
	return banner + "\n" + common.Fit(body, m.Width, bodyH) + "\n" + ansi.Truncate(help, m.Width, "…")
}

// ShortHelp implements help.KeyMap.
func (m *Model) ShortHelp() []key.Binding {
	return []key.Binding{m.KeyMap.Pause, m.KeyMap.SwitchPane, m.KeyMap.Quit}
}

// FullHelp implements help.KeyMap.
func (m *Model) FullHelp() [][]key.Binding { return [][]key.Binding{m.ShortHelp()} }
