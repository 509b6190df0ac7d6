package replay

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"
)

func TestBannerSaysWhatWasRecorded(t *testing.T) {
	for _, tc := range []struct {
		r    results.Results
		want string
	}{
		{results.Results{Lab: "quickstart"}, "REPLAY of a run recorded on "},
		{results.Results{Lab: "quickstart", Emulation: "paths emulated in one kernel"}, "REPLAY of an EMULATION (no DPU) recorded on "},
		{results.Results{Lab: "redis-dpu-uptv2", Rehearsal: true}, "REPLAY of a REHEARSAL (no DPU) recorded on "},
		{results.Results{Lab: "redis-dpu-uptv2", Rehearsal: true, Emulation: "x"}, "REPLAY of a REHEARSAL+EMULATION (no DPU) recorded on "},
		{results.Results{Lab: "redis-rdma-rc-uc", SoftwareRDMA: "rxe0 on s"}, "REPLAY of a run over SOFTWARE RDMA (Soft-RoCE) recorded on "},
		{results.Results{Lab: "redis-rdma-rc-uc", Rehearsal: true, SoftwareRDMA: "rxe0 on s"}, "REPLAY of a REHEARSAL+SOFTWARE RDMA (Soft-RoCE) recorded on "},
		// The quickstart's: a measured compare beside an emulated offload.
		{results.Results{Lab: "quickstart", Emulation: "some", Benches: []results.Compare{
			{Step: "compare", Variants: []results.VariantResult{{Label: "tcp"}, {Label: "unix"}}},
			{Step: "offload", Variants: []results.VariantResult{{Label: "host", Emulation: "x"}, {Label: "dpu", Emulation: "y"}}},
		}}, "REPLAY of a PART EMULATION (offload emulated; compare measured) recorded on "},
		{results.Results{Lab: "quickstart", Rehearsal: true, Emulation: "some", Benches: []results.Compare{
			{Step: "compare", Variants: []results.VariantResult{{Label: "tcp"}, {Label: "unix"}}},
			{Step: "offload", Variants: []results.VariantResult{{Label: "host"}, {Label: "dpu", Emulation: "y"}}},
		}}, "REPLAY of a REHEARSAL+PART EMULATION (offload (dpu) emulated; compare not emulated) recorded on "},
	} {
		if got := Banner(&tc.r); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Banner = %q, want it to start with %q", got, tc.want)
		}
	}
}
