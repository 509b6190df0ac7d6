package labs_test

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/internal/wire/transportwire"

	. "github.com/dpulab/dpulab/labs"
)

// TestTransportNotesSayWhatCannotRun: labs does not judge builds; given a
// judge (here transportwire.Build's rule for a few binaries), the RDMA
// lab's rdma steps and variants are named, with the judge's reason, once;
// the TCP/Unix quickstart has nothing to say; a simulation labels them.
func TestTransportNotesSayWhatCannotRun(t *testing.T) {
	q, err := Find("quickstart")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Find("redis-rdma-rc-uc")
	if err != nil {
		t.Fatal(err)
	}
	by := func(b transportwire.Build) TransportJudge {
		return func(n transportwire.Name) (string, string) { return b.Lacks(n), "" }
	}
	for _, b := range []transportwire.Build{{OS: "darwin", Arch: "arm64"}, {OS: "windows", Arch: "amd64"}, {OS: "linux", Arch: "amd64", NoRDMA: true}, {OS: "linux", Arch: "arm64"}, {OS: "linux"}} {
		if n := TransportNotes(q, by(b)); len(n) != 0 {
			t.Errorf("%+v: quickstart: %q", b, n)
		}
		notes := TransportNotes(r, by(b))
		why := b.Lacks(transportwire.RDMA)
		if why == "" {
			if len(notes) != 0 {
				t.Errorf("%+v has RDMA, but: %q", b, notes)
			}
			continue
		}
		if len(notes) != 1 || !strings.Contains(notes[0], `step sizes, variant "RDMA UC"`) || !strings.HasSuffix(notes[0], " cannot run here: "+why) {
			t.Errorf("%+v: notes = %q, want one naming every rdma step with %q", b, notes, why)
		}
	}
	sim := TransportProblems(r, func(n transportwire.Name) (string, string) {
		if n == transportwire.RDMA {
			return "", "a simulation of RDMA"
		}
		return "", ""
	})
	if len(sim) != 1 || sim[0].Cannot || sim[0].Reason != "a simulation of RDMA" {
		t.Errorf("simulated: %+v", sim)
	}
}
