package session

import (
	"context"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"
)

// The engine's session answers the task step's and the rendered-files
// view's questions for the embedded quickstart, sanitised: the rendered
// config, the task's solution, a shell on this machine; a check of work
// not done fails.
func TestEngineSessionTaskAndFiles(t *testing.T) {
	cat := Sanitize(&EngineCatalog{StateDir: t.TempDir(), Binary: "/bin/true"})
	s, err := cat.Open("quickstart", Options{Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{}
	for i, st := range s.Steps() {
		idx[st.ID] = i
	}
	files, more, err := s.Rendered(idx["config"])
	if err != nil || more != 0 || len(files) != 1 || !strings.HasSuffix(files[0].Path, "/redis.conf") || !strings.Contains(files[0].Content, "loglevel notice") {
		t.Fatalf("config's files = %+v (+%d), %v", files, more, err)
	}
	if files, _, err := s.Rendered(idx["deploy"]); err != nil || len(files) != 4 {
		t.Fatalf("deploy's files: %d, %v", len(files), err)
	}
	task := idx["edit-config"]
	sol, err := s.Solution(task)
	if err != nil || len(sol) != 1 || sol[0].Host != "local" || len(sol[0].Run) == 0 || !strings.Contains(sol[0].Verify, "loglevel warning") {
		t.Fatalf("solution = %+v, %v", sol, err)
	}
	sh, err := s.Shell(task)
	if err != nil || len(sh.Argv) != 1 {
		t.Fatalf("shell = %+v, %v", sh, err)
	}
	// Nothing rendered yet: the check of work not done fails.
	if st := s.CheckTask(context.Background(), task); st != results.Failed {
		t.Fatalf("check of an undone task = %s, want failed", st)
	}
	if err := s.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
}
