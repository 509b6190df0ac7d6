package main

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/server/transport"
)

// TestLintNotesJudgeThisMachine: lint's notes judge a run on this machine
// (no inventory) by this program's build: in a build without RDMA (go test
// -tags nordma) the RDMA lab's note says so and what to do; in one with
// it, there is none.
func TestLintNotesJudgeThisMachine(t *testing.T) {
	var rdmaNotes []string
	for _, n := range lintNotes(nil) {
		if strings.HasPrefix(n, "redis-rdma-rc-uc: ") {
			rdmaNotes = append(rdmaNotes, n)
		}
	}
	err := transport.Available(transport.RDMA)
	if err == nil {
		if transport.Simulated(transport.RDMA) == "" && len(rdmaNotes) != 0 {
			t.Errorf("a build with RDMA has notes: %q", rdmaNotes)
		}
		return
	}
	if len(rdmaNotes) != 1 || !strings.HasSuffix(rdmaNotes[0], " cannot run here: "+err.Error()) {
		t.Errorf("notes %q, want one ending %q", rdmaNotes, err)
	}
}
