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
	for _, tc := range []struct {
		r     *Results
		short string
		long  string
	}{
		{reh, "REHEARSAL", "REHEARSAL: no DPU in this run (baseline and accelerated ran on the same host)"},
		{emu, "EMULATION", "EMULATION: the DPU's work is emulated in this machine's kernel"},
	} {
		if tc.r.Measured() {
			t.Errorf("%s: Measured() = true", tc.short)
		}
		if got := RunKind(tc.r); got != tc.long {
			t.Errorf("RunKind = %q, want %q", got, tc.long)
		}
		md := RenderMarkdown(tc.r)
		if !strings.HasPrefix(md, "# "+tc.short+": ") || !strings.Contains(md, "> **"+tc.long+"**") {
			t.Errorf("report.md does not open with the %s label:\n%s", tc.short, md)
		}
		page, err := RenderHTML(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), "<title>"+tc.short+": ") || !strings.Contains(string(page), `id="kind"`) {
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
	raw, _ := json.Marshal(reh)
	if !strings.Contains(string(raw), `"rehearsal":true`) || !strings.Contains(string(raw), `"rehearsal_reason":`) {
		t.Errorf("results.json: %s", raw)
	}
}
