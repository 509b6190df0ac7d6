package results

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRunKindLabelsEveryOutput(t *testing.T) {
	measured := &Results{Lab: "quickstart", Title: "Quickstart", Status: RunComplete}
	if k := RunKind(measured); k != "" || !measured.Measured() {
		t.Fatalf("a measured run is labelled %q", k)
	}
	if md := RenderMarkdown(measured); strings.Contains(md, "REHEARSAL") || strings.Contains(md, "EMULATION") {
		t.Errorf("a measured run's report.md carries a kind label:\n%s", md)
	}

	reh := &Results{Lab: "redis-dpu-uptv2", Title: "DPU lab", Status: RunComplete,
		Rehearsal: true, RehearsalReason: "baseline and accelerated ran on the same host",
		References: []Reference{{Label: "TPS", Value: "17.74M", Source: "the whitepaper", Step: "compare"}},
		Benches:    []Compare{{Step: "compare", Title: "compare"}},
	}
	emu := &Results{Lab: "quickstart", Title: "Quickstart", Status: RunComplete,
		Emulation: "the DPU's work is emulated in this machine's kernel"}
	soft := &Results{Lab: "redis-rdma-rc-uc", Title: "RDMA lab", Status: RunComplete,
		SoftwareRDMA: "rxe0 on server, rxe1 on client",
		References:   []Reference{{Label: "SET ops/s, RC", Value: "98,500", Source: "the article", Step: "sizes"}},
		Benches:      []Compare{{Step: "sizes", Title: "sizes"}},
	}
	for _, tc := range []struct {
		r     *Results
		short string
		long  string
	}{
		{reh, "REHEARSAL", "REHEARSAL: no DPU in this run (baseline and accelerated ran on the same host)"},
		{emu, "EMULATION", "EMULATION: the DPU's work is emulated in this machine's kernel"},
		{soft, "SOFTWARE RDMA", "SOFTWARE RDMA (Soft-RoCE): rxe0 on server, rxe1 on client; the kernel's RDMA stack on the CPU, not RDMA hardware"},
	} {
		if tc.r.Measured() {
			t.Errorf("%s: Measured() = true", tc.short)
		}
		if got := RunKind(tc.r); got != tc.long {
			t.Errorf("RunKind = %q, want %q", got, tc.long)
		}
		md := RenderMarkdown(tc.r)
		if !strings.HasPrefix(md, "# "+tc.short) || !strings.Contains(md, "> **"+tc.long+"**") {
			t.Errorf("report.md does not open with the %s label:\n%s", tc.short, md)
		}
		page, err := RenderHTML(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), "<title>"+tc.short) || !strings.Contains(string(page), `id="kind"`) {
			t.Errorf("report.html lacks the %s label in its title or banner", tc.short)
		}
		raw, err := json.Marshal(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		var back Results
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if RunKind(&back) != tc.long {
			t.Errorf("results.json loses the kind: %s", raw)
		}
	}
	if md := RenderMarkdown(reh); !strings.Contains(md, "not comparable with them") {
		t.Errorf("a rehearsal's reference figures are not marked as not comparable:\n%s", md)
	}
	md := RenderMarkdown(soft)
	for _, want := range []string{
		"# SOFTWARE RDMA (Soft-RoCE): RDMA lab — results",
		"## SOFTWARE RDMA (Soft-RoCE): sizes (`sizes`)",
		"this run is a run over software RDMA (Soft-RoCE), so its deltas above are not comparable with them",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("a Soft-RoCE run's report.md lacks %q:\n%s", want, md)
		}
	}
	if raw, _ := json.Marshal(soft); !strings.Contains(string(raw), `"software_rdma":"rxe0 on server, rxe1 on client"`) {
		t.Errorf("results.json: %s", raw)
	}
	raw, _ := json.Marshal(reh)
	if !strings.Contains(string(raw), `"rehearsal":true`) || !strings.Contains(string(raw), `"rehearsal_reason":`) {
		t.Errorf("results.json: %s", raw)
	}
}

// TestSoftwareRDMALabels: the label names Soft-RoCE unless every device is
// named like soft-iWARP's; narrow places say SOFTWARE RDMA; it joins the
// other kinds.
func TestSoftwareRDMALabels(t *testing.T) {
	for _, tc := range []struct{ devs, label string }{
		{"rxe0 on a", "SOFTWARE RDMA (Soft-RoCE)"},
		{"siw0 on a, siw0 on b", "SOFTWARE RDMA (soft-iWARP)"},
		{"rxe0 on a, siw0 on b", "SOFTWARE RDMA (Soft-RoCE)"},
		{"roce1 on a", "SOFTWARE RDMA (Soft-RoCE)"},
	} {
		if got := SoftwareRDMALabel(tc.devs); got != tc.label {
			t.Errorf("SoftwareRDMALabel(%q) = %q, want %q", tc.devs, got, tc.label)
		}
	}
	r := &Results{Rehearsal: true, SoftwareRDMA: "rxe0 on local"}
	if got := RunKindShort(r); got != "REHEARSAL+SOFTWARE RDMA" {
		t.Errorf("RunKindShort = %q", got)
	}
	if got := RunKindTitle(r); got != "REHEARSAL+SOFTWARE RDMA (Soft-RoCE)" {
		t.Errorf("RunKindTitle = %q", got)
	}
	if got := kindArticle(r); got != "a rehearsal and a run over software RDMA (Soft-RoCE)" {
		t.Errorf("kindArticle = %q", got)
	}
	if r.Measured() || (&Results{}).Measured() == false {
		t.Error("Measured: a software RDMA run is not a measurement of RDMA hardware; a plain run is")
	}
}
