package results

import "strings"

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
func RunKindShort(r *Results) string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.Rehearsal {
		parts = append(parts, "REHEARSAL")
	}
	if r.Emulation != "" {
		parts = append(parts, "EMULATION")
	}
	if r.SoftwareRDMA != "" {
		parts = append(parts, SoftwareRDMAShort)
	}
	return strings.Join(parts, "+")
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
func RunKindTitle(r *Results) string {
	if r == nil || r.SoftwareRDMA == "" {
		return RunKindShort(r)
	}
	return strings.Replace(RunKindShort(r), SoftwareRDMAShort, SoftwareRDMALabel(r.SoftwareRDMA), 1)
}

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
