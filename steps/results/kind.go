package results

import (
	"fmt"
	"strings"
)

// What a run's numbers are, as every output labels them (the product's
// promise: a number is measured where it says, or labelled for what it
// is). A run is measured unless it is marked: a rehearsal (Rehearsal), an
// emulation (Emulation), a run whose RDMA went through software devices
// (SoftwareRDMA), or, when shown from a saved folder, a replay (said by the
// replay view, which knows it replays).
//
// Software RDMA is a kind of its own, neither a rehearsal nor an emulation:
// its figures are real measurements, of the kernel's RDMA stack (rdma_rxe,
// siw) driving an ordinary network interface with the CPU. They are not
// measurements of RDMA hardware, which is what the RDMA lab and its
// published figures are about, so Measured is false for them: the reports
// set the published figures beside them as not comparable.

// RunKind is the label that heads every output of r (report.md's and
// report.html's status, the headless summary, the TUI's header, the
// booth), or "" when r was measured on the hosts it names.
func RunKind(r *Results) string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.Rehearsal {
		s := "REHEARSAL: no DPU in this run"
		if r.RehearsalReason != "" {
			s += " (" + r.RehearsalReason + ")"
		}
		parts = append(parts, s)
	}
	if r.Emulation != "" {
		parts = append(parts, "EMULATION: "+r.Emulation)
	}
	if r.SoftwareRDMA != "" {
		parts = append(parts, SoftwareRDMALabel(r.SoftwareRDMA)+": "+r.SoftwareRDMA+
			"; the kernel's RDMA stack on the CPU, not RDMA hardware")
	}
	return strings.Join(parts, "; ")
}

// RunKindShort is RunKind in one word for narrow places (a title bar, a
// compare table's caption): "REHEARSAL", "EMULATION", "SOFTWARE RDMA",
// several joined by "+", or "".
func RunKindShort(r *Results) string { return runFigures(r).Short() }

// runFigures is what r's figures are taken as a whole: the labels of
// every variant at once (Results.Emulation is set when any variant was).
func runFigures(r *Results) Figures {
	if r == nil {
		return Figures{}
	}
	return Figures{Rehearsal: r.Rehearsal, Emulation: r.Emulation, SoftwareRDMA: r.SoftwareRDMA}
}

// SoftwareRDMAShort is a software RDMA run's label in narrow places.
const SoftwareRDMAShort = "SOFTWARE RDMA"

// SoftwareRDMALabel is the label of a run over the software RDMA devices
// devs ("rxe0 on server, rxe1 on client"): "SOFTWARE RDMA (Soft-RoCE)",
// or soft-iWARP when every device is named as the kernel's siw names its
// own. Only the words in brackets come from the names; that the devices
// are software ones was read from sysfs.
func SoftwareRDMALabel(devs string) string {
	return SoftwareRDMAShort + " (" + softwareRDMAWhat(devs) + ")"
}

// softwareRDMAWhat names the software RDMA of devs: Soft-RoCE, unless
// every device is named like soft-iWARP's (siw0).
func softwareRDMAWhat(devs string) string {
	if !strings.Contains(devs, "rxe") && strings.Contains(devs, "siw") {
		return "soft-iWARP"
	}
	return "Soft-RoCE"
}

// RunKindTitle is the run's label for a chart's title, which may leave
// its page (a PNG on a slide): RunKindShort with the software RDMA label
// in full, or "".
func RunKindTitle(r *Results) string { return runFigures(r).Title() }

// Measured reports whether r's numbers are measurements of what its lab
// is about: false for a rehearsal, an emulation or software RDMA, whose
// figures must not be set beside published ones as if comparable.
func (r *Results) Measured() bool { return !r.Rehearsal && r.Emulation == "" && r.SoftwareRDMA == "" }

// kindArticle names r's kind in a sentence: "a rehearsal", "an emulation",
// "a run over software RDMA (Soft-RoCE)", several joined by "and".
func kindArticle(r *Results) string {
	var parts []string
	if r.Rehearsal {
		parts = append(parts, "a rehearsal")
	}
	if r.Emulation != "" {
		parts = append(parts, "an emulation")
	}
	if r.SoftwareRDMA != "" {
		parts = append(parts, "a run over software RDMA ("+softwareRDMAWhat(r.SoftwareRDMA)+")")
	}
	if len(parts) == 0 {
		return "a measurement"
	}
	return strings.Join(parts, " and ")
}

// Figures is what one variant's figures are: the one label source every
// view takes its label from (the TUI's dashboard, compare and status line,
// the booth, the headless lines, samples.csv, both reports, the chart
// exports). It is decided once per variant and run, by the engine while
// it runs (FiguresOf) and from results.json afterwards (VariantFigures),
// and the two agree: a variant over a real path carries no EMULATION even
// in a lab whose other variants are emulated.
type Figures struct {
	// Rehearsal: the run could not measure what its lab is about.
	Rehearsal bool `json:"rehearsal,omitempty"`
	// Emulation says what the variant's path stands for, "" for a real path.
	Emulation string `json:"emulation,omitempty"`
	// SoftwareRDMA names the software RDMA devices the run used, "".
	SoftwareRDMA string `json:"software_rdma,omitempty"`
	// Replay: the figures are shown again from a saved results folder.
	Replay bool `json:"replay,omitempty"`
}

// VariantFigures is what variant v of r measured; v nil gives the run's
// label where no variant is meant (a host figure, a run with no compare):
// rehearsal and software RDMA, not emulation.
func VariantFigures(r *Results, v *VariantResult) Figures {
	if r == nil {
		return Figures{}
	}
	f := Figures{Rehearsal: r.Rehearsal, SoftwareRDMA: r.SoftwareRDMA}
	if v != nil {
		f.Emulation = v.Emulation
	}
	return f
}

// CompareFigures is the label of a compare's table or chart, which shows
// all its variants at once: the union of theirs, EMULATION when any
// variant is emulated. Each row or series still carries its own
// (VariantFigures); this is for the caption above them.
func CompareFigures(r *Results, c *Compare) Figures {
	f := VariantFigures(r, nil)
	if c == nil {
		return f
	}
	for i := range c.Variants {
		if c.Variants[i].Emulation != "" {
			f.Emulation = c.Variants[i].Emulation
			if n := c.emulatedCount(); n < len(c.Variants) {
				f.Emulation = fmt.Sprintf("%d of %d variants emulated", n, len(c.Variants))
			}
			break
		}
	}
	return f
}

func (c *Compare) emulatedCount() int {
	n := 0
	for i := range c.Variants {
		if c.Variants[i].Emulation != "" {
			n++
		}
	}
	return n
}

// Measured reports whether the figures are measurements of what the lab
// is about, shown live: no label at all.
func (f Figures) Measured() bool {
	return !f.Rehearsal && f.Emulation == "" && f.SoftwareRDMA == "" && !f.Replay
}

// Short is the label in one or a few words for narrow places (a chart
// caption, a table column, samples.csv's column): "EMULATION",
// "REHEARSAL+EMULATION", "SOFTWARE RDMA", "REPLAY", or "" for a live
// measurement.
func (f Figures) Short() string {
	var parts []string
	if f.Replay {
		parts = append(parts, "REPLAY")
	}
	if f.Rehearsal {
		parts = append(parts, "REHEARSAL")
	}
	if f.Emulation != "" {
		parts = append(parts, "EMULATION")
	}
	if f.SoftwareRDMA != "" {
		parts = append(parts, SoftwareRDMAShort)
	}
	return strings.Join(parts, "+")
}

// Title is Short with the software RDMA label in full, for a title that
// may leave its page (a PNG on a slide).
func (f Figures) Title() string {
	s := f.Short()
	if f.SoftwareRDMA != "" {
		s = strings.Replace(s, SoftwareRDMAShort, SoftwareRDMALabel(f.SoftwareRDMA), 1)
	}
	return s
}

// Tag is the prefix of a line that carries a figure ("[EMULATION] "), ""
// for a live measurement.
func (f Figures) Tag() string {
	if s := f.Short(); s != "" {
		return "[" + s + "] "
	}
	return ""
}

// Long says the label in a sentence's words, with what each part stands
// for ("EMULATION: host does it all: VXLAN overlay ... in this machine's
// kernel"), "" for a live measurement.
func (f Figures) Long() string {
	var parts []string
	if f.Replay {
		parts = append(parts, "REPLAY: figures from a saved results folder, not measured now")
	}
	if f.Rehearsal {
		parts = append(parts, "REHEARSAL: no DPU in this run")
	}
	if f.Emulation != "" {
		parts = append(parts, "EMULATION: "+f.Emulation)
	}
	if f.SoftwareRDMA != "" {
		parts = append(parts, SoftwareRDMALabel(f.SoftwareRDMA)+": the kernel's RDMA stack on the CPU, not RDMA hardware")
	}
	return strings.Join(parts, "; ")
}
