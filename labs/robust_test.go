package labs_test

import (
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	. "github.com/dpulab/dpulab/labs"
)

// TestParseNeverPanicsOnMangledLabs feeds the parser every embedded lab cut
// short at each line, and with each line removed: half-edited files are
// what trainers lint most. Each must give problems with a file and a
// sensible line, never a panic.
func TestParseNeverPanicsOnMangledLabs(t *testing.T) {
	dirs, err := fs.ReadDir(EmbeddedFS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		src, err := fs.ReadFile(EmbeddedFS, path.Join(d.Name(), LabFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		variants := 0
		// Every line would take seconds on a busy machine; a spread of 80
		// cut points per lab still hits every kind of block.
		stride := max(1, len(lines)/80)
		for i := 0; i < len(lines); i += stride {
			for _, text := range []string{
				strings.Join(lines[:i], "\n"),
				strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "\n"),
			} {
				fsys := fstest.MapFS{"lab/" + LabFile: {Data: []byte(text)}}
				// The docs are missing in this FS; those problems are expected.
				_, probs := Parse(fsys, "lab", "lab.yaml")
				for _, p := range probs {
					if p.File == "" || p.Line < 0 || p.Line > len(lines)+1 || p.Msg == "" {
						t.Fatalf("%s, variant %d: bad problem %+v", d.Name(), variants, p)
					}
				}
				variants++
			}
		}
		if variants < 100 {
			t.Errorf("%s: only %d variants", d.Name(), variants)
		}
	}
}

// TestParseOddShapes covers YAML that is valid but not a lab.
func TestParseOddShapes(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"empty", "", "empty"},
		{"list", "- a\n- b\n", "lab must be a mapping"},
		{"scalar", "hello\n", "lab must be a mapping"},
		{"steps not a list", "id: x\ntitle: X\nsummary: s\nduration: 1m\nroles: [a]\nsteps: {a: 1}\n", "steps must be a non-empty list"},
		{"step not a mapping", "id: x\ntitle: X\nsummary: s\nduration: 1m\nroles: [a]\nsteps: [hello]\n", "step must be a mapping"},
		{"variables not a mapping", "id: x\ntitle: X\nsummary: s\nduration: 1m\nroles: [a]\nvariables: [a]\nsteps: [{id: a, title: A, kind: run, run: x}]\n", "variables must be a mapping"},
		{"run is a mapping", "id: x\ntitle: X\nsummary: s\nduration: 1m\nroles: [a]\nsteps: [{id: a, title: A, kind: run, run: {x: 1}}]\n", "must be a value or a list"},
		{"aliases", "id: x\ntitle: &t X\nsummary: *t\nduration: 1m\nroles: [a]\nsteps: [{id: a, title: *t, kind: run, run: x}]\n", ""},
		{"no roles", "id: x\ntitle: X\nsummary: s\nduration: 1m\nroles: []\nsteps: [{id: a, title: A, kind: read, doc: lab.yaml}]\n", "at least one role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"lab/" + LabFile: {Data: []byte(tt.yaml)}}
			_, probs := Parse(fsys, "lab", "lab.yaml")
			if tt.want == "" {
				if len(probs) > 0 {
					t.Fatalf("unexpected problems:\n%v", probs)
				}
				return
			}
			if !strings.Contains(probs.Error(), tt.want) {
				t.Fatalf("problems %q lack %q", probs.Error(), tt.want)
			}
		})
	}
}
