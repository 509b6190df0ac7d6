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
	} {
		if got := Banner(&tc.r); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Banner = %q, want it to start with %q", got, tc.want)
		}
	}
}
