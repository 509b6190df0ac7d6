package labs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// counter is template data whose method counts its calls: it shows a
// render stops at the cap, not after running the rest of the template.
type counter struct{ n int }

func (c *counter) Next() string {
	c.n++
	return strings.Repeat("x", 1000)
}

func TestTemplateBounds(t *testing.T) {
	for _, shell := range []bool{false, true} {
		render := RenderText
		if shell {
			render = RenderCommand
		}
		for _, c := range []struct{ name, tmpl, msg string }{
			{"issue-10 range", `{{range 100000000}}x{{end}}`, "MaxRangeIterations"},
			{"nested ranges", `{{range 200}}{{range 200}}{{end}}{{end}}`, "MaxRangeIterations"},
			{"doubling", `{{$a := "xx"}}{{range 64}}{{$a = print $a $a}}{{end}}{{$a}}`, "MaxTemplateWork"},
			{"printf width", `{{printf "%0999999999d" 1}}`, "width"},
			{"printf star", `{{printf "%*d" 999999999 1}}`, "*"},
			{"output", `{{range 3000}}{{"` + strings.Repeat("y", 1000) + `"}}{{end}}`, "MaxTemplateOutput"},
			{"recursion", `{{define "a"}}{{template "a"}}{{template "a"}}{{end}}{{template "a"}}`, "not supported"},
			{"html", `{{html "x"}}`, "not available"},
		} {
			t.Run(c.name, func(t *testing.T) {
				out, err := render(c.tmpl, Data(nil, nil))
				if err == nil || !strings.Contains(err.Error(), c.msg) {
					t.Fatalf("got %d bytes, %v; want an error naming %s", len(out), err, c.msg)
				}
			})
		}
	}
	c := &counter{}
	_, err := RenderCommand(`{{range 5000}}{{$.c.Next}}{{end}}`, Data(nil, map[string]any{"c": c}))
	if !errors.Is(err, errOutputCap) {
		t.Fatalf("err = %v, want the output cap", err)
	}
	if limit := MaxTemplateOutput/1000 + 2; c.n > limit {
		t.Errorf("the template went on for %d iterations; it must stop at the cap (about %d)", c.n, limit)
	}
	// Within the bounds, loops and functions work.
	got, err := RenderText(`{{range $i := 3}}{{$i}}{{end}} {{printf "%05d" 42}} {{print "a" 1}}`, Data(nil, nil))
	if err != nil || got != "012 00042 a1" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestLintFlagsHugeRange(t *testing.T) {
	probs := lintRun(t, `{{range 100000000}}echo x{{end}}`)
	if !strings.Contains(probs.Error(), "iterations") {
		t.Errorf("want a problem about the range's iterations, got %v", probs)
	}
}

// endless is a file that never ends and lies about its size (as a pipe or
// /dev/zero would): only the read limit protects the reader.
type endless struct{ read *int64 }

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	*e.read += int64(len(p))
	return len(p), nil
}
func (endless) Close() error               { return nil }
func (endless) Stat() (fs.FileInfo, error) { return endlessInfo{}, nil }

type endlessInfo struct{}

func (endlessInfo) Name() string       { return LabFile }
func (endlessInfo) Size() int64        { return 0 }
func (endlessInfo) Mode() fs.FileMode  { return 0o644 }
func (endlessInfo) ModTime() time.Time { return time.Time{} }
func (endlessInfo) IsDir() bool        { return false }
func (endlessInfo) Sys() any           { return nil }

type endlessFS struct{ read *int64 }

func (f endlessFS) Open(name string) (fs.File, error) {
	if name != "x/"+LabFile {
		return nil, fs.ErrNotExist
	}
	return endless(f), nil
}

func TestLabFileSizeCap(t *testing.T) {
	var read int64
	_, probs := Parse(endlessFS{&read}, "x", LabFile)
	if !strings.Contains(probs.Error(), "cap") {
		t.Errorf("an endless lab.yaml gave %v; want the size cap", probs)
	}
	if read > MaxLabFileSize+64<<10 {
		t.Errorf("read %d bytes of an endless lab.yaml; the cap is %d", read, MaxLabFileSize)
	}

	// A 200 MB lab.yaml (sparse: no disk used) is refused by its size.
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, LabFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	probs, err = Lint(dir)
	if err != nil || len(probs) != 1 || !strings.Contains(probs[0].Msg, "200 MiB, over the 1 MiB cap") {
		t.Errorf("200 MiB lab.yaml: %v, %v", probs, err)
	}

	// A doc over its cap is a problem of the step that names it.
	fsys := fstest.MapFS{
		"x/lab.yaml": {Data: []byte("id: x\ntitle: X\nsummary: S.\nduration: 1m\nroles: [local]\nsteps:\n  - id: r\n    title: R\n    kind: read\n    doc: big.md\n")},
		"x/big.md":   {Data: make([]byte, MaxDocFileSize+1)},
	}
	if _, probs := Parse(fsys, "x", LabFile); !strings.Contains(probs.Error(), "over the 4 MiB cap") {
		t.Errorf("a doc over the cap: %v", probs)
	}
	l := &Lab{FS: fsys, Dir: "x"}
	if _, err := l.ReadFile("big.md"); err == nil {
		t.Error("Lab.ReadFile read a doc over the cap")
	}
}
