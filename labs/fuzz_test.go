package labs_test

import (
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	. "github.com/dpulab/dpulab/labs"
)

// FuzzParseLab feeds the lab loader arbitrary lab.yaml text: it must
// return problems with a file and a message, never panic, and the lab
// files beside it (a doc, a template) are read through the same caps.
// Seeds: the embedded labs, the lint cases and testdata/fuzz/FuzzParseLab.
func FuzzParseLab(f *testing.F) {
	for _, src := range []fs.FS{EmbeddedFS, os.DirFS("testdata/bad")} {
		names, _ := fs.Glob(src, "*/"+LabFile)
		for _, n := range names {
			if b, err := fs.ReadFile(src, n); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			"x/" + LabFile:      {Data: data},
			"x/doc.md":          {Data: []byte("# Doc\n")},
			"x/config.tmpl":     {Data: []byte("port {{.port}}\n")},
			"x/welcome.md":      {Data: []byte("hi")},
			"x/redis.conf.tmpl": {Data: []byte("dir {{.workdir}}\n")},
		}
		l, probs := Parse(fsys, "x", LabFile)
		if l == nil {
			t.Fatal("Parse returned no lab")
		}
		for _, p := range probs {
			if p.File == "" || p.Msg == "" || p.Line < 0 {
				t.Fatalf("bad problem %+v", p)
			}
		}
	})
}

// FuzzRenderTemplate renders arbitrary templates with arbitrary values in
// both contexts: no panic, no hang (the bounds), output within the cap.
// Seeds: the contexts of the injection tests and testdata/fuzz.
func FuzzRenderTemplate(f *testing.F) {
	for _, s := range []string{
		`echo {{.vars.v}}`, `echo "dq=x{{.vars.v}}"`, `echo 'sq={{.vars.v}}'`, "cat <<EOF\n{{.vars.v}}\nEOF",
		"cat <<'EOF'\n{{.vars.v}}\nEOF", `echo "$(echo {{.vars.v}})"`, "echo `{{.vars.v}}`", `echo $(( {{.vars.v}} ))`,
		`# {{.vars.v}}`, `{{range 100000000}}x{{end}}`, `{{if .vars.v}}"{{.vars.v}}"{{else}}'{{.vars.v}}'{{end}}`,
		`{{$a := .vars.v}}{{range 10}}{{$a = print $a $a}}{{end}}{{$a}}`, `{{printf "%5s|%-3d" .vars.v 7}}`,
		"x $(case a in a) echo {{.vars.v}};; esac)", `echo ${x:-{{.vars.v}}}`, `{{.vars.v | upper | quote}}`,
	} {
		for _, v := range []string{"1", "$(touch X)", "a'b\"c\n\\!`", "EOF", ""} {
			f.Add(s, v)
		}
	}
	f.Fuzz(func(t *testing.T, tmpl, v string) {
		data := Data(map[string]string{"v": v}, nil)
		if out, err := RenderText(tmpl, data); err == nil && len(out) > MaxTemplateOutput {
			t.Fatalf("text render of %d bytes passed the cap", len(out))
		}
		out, err := RenderCommand(tmpl, data)
		if err != nil {
			return
		}
		if len(out) > MaxTemplateOutput {
			t.Fatalf("command render of %d bytes passed the cap", len(out))
		}
	})
}
