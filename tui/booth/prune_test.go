package booth

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

func TestPruneResults(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, booth bool, at time.Time) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if booth {
			os.WriteFile(filepath.Join(d, Marker), []byte(at.UTC().Format(time.RFC3339Nano)), 0o644)
		}
		return d
	}
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 5; i++ {
		mk(fmt.Sprintf("b%d", i), true, t0.Add(time.Duration(i)*time.Minute))
	}
	mk("person", false, t0)
	os.Symlink(filepath.Join(root, "b0"), filepath.Join(root, "link"))
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("x"), 0o644)
	newest := mk("new", false, t0) // just written: no marker yet
	removed, err := PruneResults(newest, 3, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(removed)
	want := []string{filepath.Join(root, "b0"), filepath.Join(root, "b1"), filepath.Join(root, "b2")}
	if fmt.Sprint(removed) != fmt.Sprint(want) {
		t.Fatalf("removed %v, want %v (keep 3: the new folder and b3, b4)", removed, want)
	}
	for _, keep := range []string{"b3", "b4", "new", "person", "link", "notes.txt"} {
		if _, err := os.Lstat(filepath.Join(root, keep)); err != nil {
			t.Errorf("%s should be kept: %v", keep, err)
		}
	}
	if _, err := os.Stat(filepath.Join(newest, Marker)); err != nil {
		t.Errorf("the new folder was not marked as the booth's: %v", err)
	}
}
