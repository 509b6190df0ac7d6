package compare

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/dpulab/dpulab/internal/plot"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap"
)

// tcoForm edits the TCO inputs; every change recomputes the outputs with
// the engine's formula (tco.Estimate.Edit, never one of our own), so the
// view and the report cannot disagree. Each input shows its unit and where
// its value came from (assumed, measured, entered); what the person
// changes is entered. In a rehearsal there is no estimate until the person
// enters servers_saved_pct, and then it says REHEARSAL.
type tcoForm struct {
	common.Common
	// assumed is set when the results hold no tco step: the inputs are
	// the engine's default assumptions.
	assumed bool
	names   []string
	inputs  []textinput.Model
	focus   int
	editing bool
	out     *tco.Estimate
	err     error
}

func newTCOForm(c common.Common, res *results.Results, compute TCOFunc) *tcoForm {
	f := &tcoForm{Common: c}
	var start *tco.Estimate
	if res != nil && res.TCO != nil {
		start = res.TCO
	} else if compute != nil {
		start, f.err = compute(nil)
		f.assumed = true
		if start != nil && res != nil && res.Rehearsal {
			// No estimate from a rehearsal unless asked for (by
			// entering servers_saved_pct), and then labelled.
			r := *start
			r.Rehearsal = res.RehearsalReason
			start = &r
		}
	}
	if start == nil {
		return f
	}
	f.out = start
	f.names = orderedInputs(start)
	for _, n := range f.names {
		in := textinput.New()
		in.Prompt = ""
		in.CharLimit = 20
		in.Width = 14
		if v, ok := start.Inputs[n]; ok {
			in.SetValue(strconv.FormatFloat(v, 'f', -1, 64))
		}
		f.inputs = append(f.inputs, in)
	}
	return f
}

// orderedInputs lists the estimate's inputs in the order the docs explain
// them, servers_saved_pct always among them (empty when none was measured,
// so that it can be entered).
func orderedInputs(t *tco.Estimate) []string {
	var names []string
	for _, n := range tco.InputNames {
		if _, ok := t.Inputs[n]; ok || n == tco.SavedPct {
			names = append(names, n)
		}
	}
	for _, n := range sortedKeys(t.Inputs) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

func (f *tcoForm) SetSize(w, h int) { f.Common.SetSize(w, h) }

func (f *tcoForm) recompute() {
	if f.out == nil {
		return
	}
	in := map[string]float64{}
	for i, n := range f.names {
		s := strings.TrimSpace(f.inputs[i].Value())
		if s == "" && n == tco.SavedPct {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			f.err = fmt.Errorf("%s: %q is not a number", n, f.inputs[i].Value())
			return
		}
		in[n] = v
	}
	out, err := f.out.Edit(in)
	if err != nil {
		f.err = err
		return
	}
	f.out, f.err = out, nil
	// A measured share re-read at another instance count shows here.
	for i, n := range f.names {
		if i == f.focus && f.editing {
			continue
		}
		if v, ok := out.Inputs[n]; ok {
			f.inputs[i].SetValue(strconv.FormatFloat(v, 'f', -1, 64))
		} else {
			f.inputs[i].SetValue("")
		}
	}
}

func (f *tcoForm) Update(k tea.KeyMsg) tea.Cmd {
	if len(f.inputs) == 0 {
		return nil
	}
	km := f.KeyMap
	if !f.editing {
		switch {
		case key.Matches(k, km.Up):
			f.focus = max(f.focus-1, 0)
		case key.Matches(k, km.Down):
			f.focus = min(f.focus+1, len(f.inputs)-1)
		case key.Matches(k, km.Edit):
			f.editing = true
			f.inputs[f.focus].Focus()
			f.inputs[f.focus].CursorEnd()
		}
		return nil
	}
	switch {
	case key.Matches(k, km.Enter), key.Matches(k, km.Cancel), key.Matches(k, km.SwitchPane):
		f.inputs[f.focus].Blur()
		f.editing = false
		f.recompute()
		return nil
	}
	var cmd tea.Cmd
	f.inputs[f.focus], cmd = f.inputs[f.focus].Update(k)
	f.recompute()
	return cmd
}

func money(v float64) string { return "$" + plot.Human(v) }

func (f *tcoForm) View() string {
	st := f.Styles
	if len(f.inputs) == 0 {
		msg := "No TCO estimate in these results."
		if f.err != nil {
			msg += " " + f.err.Error()
		}
		return st.Muted.Render(msg)
	}
	w := max(f.Width, 20)
	var b strings.Builder
	b.WriteString(st.Bold.Render("Inputs") + st.Muted.Render("  (↑/↓ choose · enter edit · enter/esc done)") + "\n")
	if f.assumed {
		b.WriteString(st.Hint.Render("This run has no tco step: these are dpulab's default assumptions, not the lab's.") + "\n")
	}
	nameW := 10
	for _, n := range f.names {
		nameW = max(nameW, len(n))
	}
	if f.out != nil {
		for n := range f.out.Outputs {
			nameW = max(nameW, len(n))
		}
	}
	for i, n := range f.names {
		mark := "  "
		if i == f.focus {
			mark = "› "
		}
		val := f.inputs[i].View()
		if !f.editing || i != f.focus {
			val = f.inputs[i].Value()
			if val == "" {
				val = "—"
			}
		}
		unit, src := tco.Units[n], ""
		if f.out != nil {
			if u := f.out.Units[n]; u != "" {
				unit = u
			}
			if _, ok := f.out.Inputs[n]; ok {
				src = f.out.Sources[n]
				if src == "" {
					src = tco.Assumed
				}
			}
		}
		fmt.Fprintf(&b, "%s%-*s  %-14s %s\n", mark, nameW, n, val, st.Muted.Render(strings.TrimSpace(fmt.Sprintf("%-20s %s", unit, src))))
	}
	if f.err != nil {
		b.WriteString(st.FieldInvalid.Render("✘ "+f.err.Error()) + "\n")
	}
	if f.out == nil {
		return b.String()
	}
	wrap := lipgloss.NewStyle().Width(w)
	for _, n := range results.ViewTCO(f.out).Notes {
		b.WriteString(wrap.Render(st.Hint.Render(n)) + "\n")
	}
	if len(f.out.Outputs) > 0 {
		b.WriteString("\n" + st.Bold.Render("Estimate") + "\n")
		for _, n := range orderedOutputs(f.out) {
			v := f.out.Outputs[n]
			s := results.FormatNumber(v)
			if strings.HasSuffix(n, "_usd") || strings.Contains(n, "_usd_") {
				s = money(v)
			}
			fmt.Fprintf(&b, "  %-*s  %s\n", nameW, n, st.BigNumber.Render(s))
		}
	}
	// The formula when there is room for it.
	if f.out.Formula != "" && (f.Height == 0 || strings.Count(b.String(), "\n")+strings.Count(f.out.Formula, "\n")+2 <= f.Height) {
		b.WriteString("\n" + st.Muted.Render(f.out.Formula) + "\n")
	}
	return b.String()
}

func orderedOutputs(t *tco.Estimate) []string {
	names := sortedKeys(t.Outputs)
	pos := func(n string) int {
		if i := strings.Index(t.Formula, strings.TrimSuffix(n, "_usd")); i >= 0 {
			return i
		}
		return len(t.Formula) + 1
	}
	sort.SliceStable(names, func(i, j int) bool { return pos(names[i]) < pos(names[j]) })
	return names
}

func (f *tcoForm) ShortHelp() []key.Binding {
	return []key.Binding{f.KeyMap.Up, f.KeyMap.Down, keymap.Relabel(f.KeyMap.Edit, "edit")}
}
