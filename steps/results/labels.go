package results

import (
	"fmt"
	"strings"
)

// The reports' and exports' labels, all taken from Figures (kind.go): a
// run's title and banner say what the run contains, each bench section and
// chart says what its variants are (CompareFigures), and each row, legend
// or CSV line says what its own variant is (VariantFigures). A run that
// emulates some paths and measures others (the quickstart: TCP and Unix
// socket are real, the offload compare is emulated) is not labelled
// EMULATION as a whole.

// PartEmulation is the title label of a run some of whose variants are
// emulated and some measured.
const PartEmulation = "PART EMULATION"

// emulatedSplit sorts r's benches with variants into those whose every
// variant is emulated, those with some emulated (each named with its
// emulated variants), and those measured. legacy is set when r says it
// emulated but no variant says so (a file whose variants do not carry
// their own label): the whole run is then taken as emulated, as before.
func emulatedSplit(r *Results) (all, some, none []string, legacy bool) {
	found := false
	for i := range r.Benches {
		c := &r.Benches[i]
		if len(c.Variants) == 0 {
			continue
		}
		var em []string
		for _, v := range c.Variants {
			if v.Emulation != "" {
				em = append(em, v.Label)
			}
		}
		switch {
		case len(em) == len(c.Variants):
			all = append(all, c.Step)
			found = true
		case len(em) > 0:
			some = append(some, c.Step+" ("+strings.Join(em, ", ")+")")
			found = true
		default:
			none = append(none, c.Step)
		}
	}
	return all, some, none, r.Emulation != "" && !found
}

// ReportKindTitle is the label before a report's title: the run's
// rehearsal and software RDMA labels, EMULATION when every figure of the
// run is emulated, PART EMULATION when some are, or "".
func ReportKindTitle(r *Results) string {
	if r == nil {
		return ""
	}
	base := VariantFigures(r, nil)
	switch reportEmulation(r) {
	case emulatedAll:
		base.Emulation = "emulated"
	case emulatedPart:
		return strings.Trim(base.Title()+"+"+PartEmulation, "+")
	}
	return base.Title()
}

// ReportKind is the banner of a report (report.md's first line,
// report.html's status box): what the run contains, "" for a run measured
// on the hosts it names. It is RunKind, with the emulation said per bench
// when the run emulated only some of its variants, naming the benches
// measured, where and when (MeasuredWhere: a report or a replay is read
// elsewhere and later, so never "here"). A file that says the run emulated but none of whose
// variants says which is labelled EMULATION as a whole: what is not
// known is not called measured.
func ReportKind(r *Results) string {
	if r == nil {
		return ""
	}
	rest := RunKind(&Results{Rehearsal: r.Rehearsal, RehearsalReason: r.RehearsalReason, SoftwareRDMA: r.SoftwareRDMA})
	switch reportEmulation(r) {
	case emulatedAll:
		whole := *r
		if whole.Emulation == "" {
			whole.Emulation = "every variant's path is emulated"
		}
		return RunKind(&whole)
	case emulatedNone:
		return rest
	}
	all, some, none, _ := emulatedSplit(r)
	s := fmt.Sprintf("EMULATION in part: the figures of %s are an emulation", strings.Join(append(all, some...), ", "))
	if r.Emulation != "" {
		s += " (" + r.Emulation + ")"
	}
	if len(none) > 0 {
		s += fmt.Sprintf("; those of %s are not emulated", strings.Join(none, ", "))
		if rest == "" {
			s += ": measured " + MeasuredWhere(r)
		}
	}
	if rest != "" {
		return rest + "; " + s
	}
	return s
}

// MeasuredWhere says where and when r's figures were measured, from what
// r records: "on a, b on 2026-12-06", "on the hosts this run names" when
// it names none, without a date it does not record. Never "here": a
// report or a replay is read on another machine, another day.
func MeasuredWhere(r *Results) string {
	var names []string
	for _, h := range r.Hosts {
		if h.Name != "" {
			names = append(names, h.Name)
		}
	}
	s := "on the hosts this run names"
	if len(names) > 0 {
		s = "on " + strings.Join(names, ", ")
	}
	when := r.Started
	if when.IsZero() {
		when = r.Finished
	}
	if !when.IsZero() {
		s += " on " + when.UTC().Format("2006-01-02")
	}
	return s
}

// PartFigures says, for a PART EMULATION run (ReportKindTitle), which
// benches' figures are emulated (a bench only some of whose variants are
// named with them: "offload (overlay)") and which are not, for a banner
// that must not call the whole run either.
func PartFigures(r *Results) (emulated, notEmulated []string) {
	all, some, none, _ := emulatedSplit(r)
	return append(all, some...), none
}

type emulated int

const (
	emulatedNone emulated = iota
	emulatedPart
	emulatedAll
)

// reportEmulation says how much of r's kept figures are emulated.
func reportEmulation(r *Results) emulated {
	all, some, none, legacy := emulatedSplit(r)
	switch {
	case legacy, len(all) > 0 && len(some) == 0 && len(none) == 0:
		return emulatedAll
	case len(all)+len(some) > 0:
		return emulatedPart
	}
	return emulatedNone
}

// mixedFigures reports whether c's variants carry different labels, so
// that each row and legend must carry its own.
func mixedFigures(r *Results, c *Compare) bool {
	for i := 1; i < len(c.Variants); i++ {
		if VariantFigures(r, &c.Variants[i]).Short() != VariantFigures(r, &c.Variants[0]).Short() {
			return true
		}
	}
	return false
}

// rowLabel is a table row's variant cell: the label, with its figures'
// tag in brackets after it when c's variants differ in what they are.
func rowLabel(r *Results, c *Compare, v *VariantResult) string {
	if s := VariantFigures(r, v).Short(); s != "" && mixedFigures(r, c) {
		return v.Label + " [" + s + "]"
	}
	return v.Label
}

// LegendLabel is a chart series' legend for variant v: its figures' tag
// first ("[EMULATION] host does it all"), so a legend cut to fit keeps it.
func LegendLabel(r *Results, v *VariantResult) string {
	return VariantFigures(r, v).Tag() + v.Label
}

// ChartLegends are the legends of c's series in a narrow chart: each
// variant's LegendLabel when c's variants differ in what they are, else
// the bare labels, for the chart's caption or title says it once
// (CompareFigures): three "[EMULATION] " tags do not fit 80 columns and
// would cut the last series' name.
func ChartLegends(r *Results, c *Compare) []string {
	out := make([]string, len(c.Variants))
	mixed := mixedFigures(r, c)
	for i := range c.Variants {
		out[i] = c.Variants[i].Label
		if mixed {
			out[i] = LegendLabel(r, &c.Variants[i])
		}
	}
	return out
}

// fillFigures sets each variant's Figures (results.json's "figures") from
// the one label source, before r is written.
func fillFigures(r *Results) {
	for i := range r.Benches {
		c := &r.Benches[i]
		for j := range c.Variants {
			c.Variants[j].Figures = VariantFigures(r, &c.Variants[j]).Short()
		}
	}
}

// article names f in a sentence, as kindArticle names a run's kind: "an
// emulation", "a rehearsal and an emulation", "a measurement".
func (f Figures) article() string {
	return kindArticle(&Results{Rehearsal: f.Rehearsal, Emulation: f.Emulation, SoftwareRDMA: f.SoftwareRDMA})
}

// conclusionFigures is what the figures of report.html's conclusion line
// are: those of the compare Conclude compares (the last with two variants
// and a delta), else of the variant it names, else the run's.
func conclusionFigures(r *Results) Figures {
	for i := len(r.Benches) - 1; i >= 0; i-- {
		c := &r.Benches[i]
		if len(c.Variants) < 2 {
			continue
		}
		last := c.Variants[len(c.Variants)-1]
		for _, p := range last.Points {
			if bp := basePoint(c, p.Value); bp != nil {
				for _, m := range MetricDescs() {
					if _, ok := DeltaOf(m.Name, p.Stats, bp.Stats); ok {
						return CompareFigures(r, c)
					}
				}
			}
		}
	}
	for i := len(r.Benches) - 1; i >= 0; i-- {
		c := &r.Benches[i]
		for vi := range c.Variants {
			if len(c.Variants[vi].Points) > 0 {
				return VariantFigures(r, &c.Variants[vi])
			}
		}
	}
	return VariantFigures(r, nil)
}
