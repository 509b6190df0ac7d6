package labs

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/server/transport"
)

// TestTransportNotesSayWhatThisBuildCannotRun: the RDMA lab's rdma steps and
// variants are named, with the seam's reason, once; the TCP/Unix quickstart
// has nothing to say.
func TestTransportNotesSayWhatThisBuildCannotRun(t *testing.T) {
	q, err := Find("quickstart")
	if err != nil {
		t.Fatal(err)
	}
	if n := TransportNotes(q); len(n) != 0 {
		t.Errorf("quickstart: %q", n)
	}
	r, err := Find("redis-rdma-rc-uc")
	if err != nil {
		t.Fatal(err)
	}
	notes := TransportNotes(r)
	err = transport.Available(transport.RDMA)
	if err == nil {
		if transport.Simulated(transport.RDMA) == "" && len(notes) != 0 {
			t.Errorf("a build with RDMA has notes: %q", notes)
		}
		return
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `step sizes, variant "RDMA UC"`) || !strings.Contains(notes[0], err.Error()) {
		t.Errorf("notes = %q, want one naming every rdma step with %q", notes, err)
	}
}
