package kindtest

import (
	"io/fs"
	"path"
	"testing"
	"testing/fstest"

	"github.com/dpulab/dpulab/labs"
)

// Problems parses a lab from lab.yaml text (and other files of the lab
// dir) and returns its problems as lint prints them, "file:line: message"
// with the file relative to the lab dir.
func Problems(t testing.TB, labYAML string, files map[string]string) []string {
	t.Helper()
	fsys := fstest.MapFS{"lab/lab.yaml": {Data: []byte(labYAML)}}
	for n, body := range files {
		fsys["lab/"+n] = &fstest.MapFile{Data: []byte(body)}
	}
	_, probs := labs.Parse(fsys, "lab", "lab.yaml")
	probs.Sort()
	out := make([]string, len(probs))
	for i, p := range probs {
		p.File = path.Base(p.File)
		out[i] = p.String()
	}
	return out
}

// RoundTrip writes l back with labs.Encode and parses that again beside
// l's other files, failing the test on any problem: what a kind's Encode
// writes its Parse must read.
func RoundTrip(t testing.TB, l *labs.Lab) *labs.Lab {
	t.Helper()
	out, err := labs.Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	err = fs.WalkDir(l.FS, l.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(l.FS, p)
		fsys[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fsys[path.Join(l.Dir, labs.LabFile)] = &fstest.MapFile{Data: out}
	b, probs := labs.Parse(fsys, l.Dir, labs.LabFile)
	if len(probs) > 0 {
		t.Fatalf("the encoded lab does not parse: %v\n%s", probs, out)
	}
	return b
}
