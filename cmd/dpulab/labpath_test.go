//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUserLabFolders: labs in $XDG_CONFIG_HOME/dpulab/labs and in each
// folder of DPULAB_LAB_PATH are found without --lab-dir, and a --lab-dir
// lab with the same id wins.
func TestUserLabFolders(t *testing.T) {
	lab := func(id, title string) string {
		return "id: " + id + "\ntitle: " + title + "\nsummary: s\nduration: 2m\nroles: [local]\nsteps:\n  - {id: a, title: A, kind: run, run: \"true\"}\n"
	}
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "dpulab", "labs", "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "dpulab", "labs", "mine", "lab.yaml"), []byte(lab("mine", "From config")), 0o644); err != nil {
		t.Fatal(err)
	}
	p1, p2 := writeLabDir(t, "onpath", lab("onpath", "From the path")), writeLabDir(t, "second", lab("second", "Second on the path"))
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv(LabPathEnv, p1+string(os.PathListSeparator)+p2)
	override := writeLabDir(t, "mine", lab("mine", "From the flag"))

	out, _, err := runCmd(t, "labs", "--json", "--lab-dir", override)
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, l := range decodeLabs(t, out) {
		titles[l.ID] = l.Title
	}
	want := map[string]string{"mine": "From the flag", "onpath": "From the path", "second": "Second on the path"}
	for id, title := range want {
		if titles[id] != title {
			t.Errorf("lab %s: title %q, want %q (all: %v)", id, titles[id], title, titles)
		}
	}
	if _, ok := titles["quickstart"]; !ok {
		t.Errorf("the built-in labs went missing: %v", titles)
	}
}
