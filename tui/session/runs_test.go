package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"
)

func writeRun(t *testing.T, dir string, r *results.Results) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteResults(dir, r); err != nil {
		t.Fatal(err)
	}
}

// TestScanRuns: three runs (complete, failed at a step, killed while
// "running"), a foreign folder and a booth folder under one root, listed
// newest first with their status; a hostile title and folder name come
// out as plain text.
func TestScanRuns(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	hosts := []results.HostInfo{{Name: "server1"}, {Name: "client1"}}
	writeRun(t, filepath.Join(root, "quickstart", "a"), &results.Results{Lab: "quickstart", Title: "Q\x1b]52;c;SE9TVElMRQ==\x07", Started: t0, Status: results.RunComplete})
	writeRun(t, filepath.Join(root, "rdma", "b"), &results.Results{Lab: "rdma", Started: t0.Add(time.Hour), Hosts: hosts, Status: results.RunFailed, FailedStep: "deploy", Error: "boom"})
	writeRun(t, filepath.Join(root, "rdma", "c"), &results.Results{Lab: "rdma", Started: t0.Add(2 * time.Hour), Status: results.RunRunning})
	booth := filepath.Join(root, "quickstart", "d")
	writeRun(t, booth, &results.Results{Lab: "quickstart", Started: t0.Add(-time.Hour), Status: results.RunComplete})
	if err := os.WriteFile(filepath.Join(booth, BoothMarker), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(root, "quickstart", "photos\x1b[2J")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	old := t0.Add(-48 * time.Hour)
	if err := os.Chtimes(foreign, old, old); err != nil {
		t.Fatal(err)
	}
	got := ScanRuns([]string{root, filepath.Join(root, "missing")}, []string{filepath.Join(root, "rdma", "b")})
	var rows []string
	for _, r := range got {
		rows = append(rows, r.Row())
	}
	want := []string{
		"rdma · 2026-12-01 11:00 UTC · this machine · killed (never finished)",
		"rdma · 2026-12-01 10:00 UTC · server1, client1 · failed at deploy",
		"quickstart · 2026-12-01 09:00 UTC · this machine · complete",
		"quickstart · 2026-12-01 08:00 UTC · this machine · complete · booth",
		"quickstart · 2026-11-29 09:00 UTC · ✘ no results.json: not a dpulab results folder",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	for _, r := range got {
		for _, s := range []string{r.Dir, r.Row()} {
			if strings.ContainsAny(s, "\x1b\x07") {
				t.Errorf("control byte reached a row: %q", s)
			}
		}
		if r.Results != nil && strings.ContainsAny(r.Results.Title, "\x1b\x07") {
			t.Errorf("title not cleaned: %q", r.Results.Title)
		}
	}
}

// TestRunStatusWords: past runs says how each run ended, in the words of
// results.json: interrupted by what, killed (so recorded, or a "running"
// file whose writer is gone), running now (its writer lives), and the
// attempt of a resumed run.
func TestRunStatusWords(t *testing.T) {
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	for _, tc := range []struct {
		r    results.Results
		want string
	}{
		{results.Results{Status: results.RunInterrupted, InterruptedBy: "q in the TUI"}, "interrupted (q in the TUI)"},
		{results.Results{Status: results.RunInterrupted, FailedStep: "bench", InterruptedBy: "SIGTERM"}, "interrupted at bench (SIGTERM)"},
		{results.Results{Status: results.RunKilled}, "killed (never finished)"},
		{results.Results{Status: results.RunRunning, WriterPID: dead.Process.Pid, WriterHost: host}, "killed (never finished)"},
		{results.Results{Status: results.RunRunning, WriterPID: os.Getpid(), WriterHost: host}, "running now"},
		{results.Results{Status: results.RunRunning, WriterPID: 1234, WriterHost: "elsewhere"}, "not finished (running on elsewhere, or killed there)"},
		{results.Results{Status: results.RunComplete, Attempts: []results.Attempt{{Status: results.RunKilled}}}, "complete · attempt 2 (resumed)"},
	} {
		if got := describeStatus(&tc.r); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}

// TestRunRowsSayWhatTheFiguresAre: a past run whose figures are a
// rehearsal, software RDMA or an emulation says so on its row, as its
// report's title does; a measured run says nothing more.
func TestRunRowsSayWhatTheFiguresAre(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	writeRun(t, filepath.Join(root, "redis-dpu-uptv2", "a"), &results.Results{Lab: "redis-dpu-uptv2", Started: t0, Status: results.RunComplete, Rehearsal: true, RehearsalReason: "asked for with --rehearse"})
	writeRun(t, filepath.Join(root, "redis-rdma-rc-uc", "b"), &results.Results{Lab: "redis-rdma-rc-uc", Started: t0.Add(time.Hour), Status: results.RunComplete, SoftwareRDMA: "rxe0 (Soft-RoCE)"})
	writeRun(t, filepath.Join(root, "quickstart", "c"), &results.Results{Lab: "quickstart", Started: t0.Add(2 * time.Hour), Status: results.RunComplete, Emulation: "network paths emulated in one kernel"})
	writeRun(t, filepath.Join(root, "quickstart", "d"), &results.Results{Lab: "quickstart", Started: t0.Add(3 * time.Hour), Status: results.RunComplete})
	want := map[string]string{"a": "REHEARSAL", "b": "SOFTWARE RDMA", "c": "EMULATION", "d": ""}
	for _, r := range ScanRuns([]string{root}, nil) {
		w := want[filepath.Base(r.Path)]
		row := r.Row()
		switch {
		case w == "" && strings.Count(row, " · ") != 3:
			t.Errorf("a measured run's row says more than lab, date, hosts and status: %q", row)
		case w != "" && !strings.Contains(row, " · "+w):
			t.Errorf("row %q does not say %s", row, w)
		}
	}
}
