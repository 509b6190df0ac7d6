package labs_test

import (
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"testing"
	"testing/fstest"

	"go.yaml.in/yaml/v3"

	. "github.com/dpulab/dpulab/labs"
	tcokind "github.com/dpulab/dpulab/steps/kinds/tco"
)

// TestRoundTripEmbeddedLabs loads every embedded lab, writes it back with
// Encode and loads that again: the two labs must be equal (but for line
// numbers), and the written file must keep every key the original set, so
// no key the trainer wrote is silently dropped by the loader.
func TestRoundTripEmbeddedLabs(t *testing.T) {
	ls, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ls {
		t.Run(a.ID, func(t *testing.T) {
			out, err := Encode(a)
			if err != nil {
				t.Fatal(err)
			}
			// The docs and templates stay where they were; only lab.yaml
			// is replaced.
			fsys := fstest.MapFS{}
			err = fs.WalkDir(a.FS, a.Dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := fs.ReadFile(a.FS, p)
				fsys[p] = &fstest.MapFile{Data: b}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			fsys[path.Join(a.Dir, LabFile)] = &fstest.MapFile{Data: out}
			b, probs := Parse(fsys, a.Dir, a.File)
			if len(probs) > 0 {
				t.Fatalf("the encoded lab does not load:\n%v\n%s", probs, out)
			}
			if !reflect.DeepEqual(normalize(a), normalize(b)) {
				t.Errorf("the lab changed on the round trip:\n%s", out)
			}

			orig, err := fs.ReadFile(a.FS, path.Join(a.Dir, LabFile))
			if err != nil {
				t.Fatal(err)
			}
			have := keyPaths(t, out)
			for _, k := range keyPaths(t, orig) {
				if !contains(have, k) {
					t.Errorf("key %s is in the lab file but not in what dpulab read from it", k)
				}
			}
		})
	}
}

// normalize drops what may differ on a round trip: lines, the FS and
// whether the lab is built in.
func normalize(l *Lab) Lab {
	c := *l
	c.FS, c.File, c.Embedded = nil, "", false
	c.Roles = append([]Role(nil), l.Roles...)
	for i := range c.Roles {
		c.Roles[i].Line = 0
	}
	c.Variables = append([]Variable(nil), l.Variables...)
	for i := range c.Variables {
		c.Variables[i].Line = 0
	}
	c.References = append([]Reference(nil), l.References...)
	for i := range c.References {
		c.References[i].Line = 0
	}
	c.Steps = make([]Step, len(l.Steps))
	for i, s := range l.Steps {
		s.Line = 0
		if s.Verify != nil {
			v := *s.Verify
			v.Line = 0
			s.Verify = &v
		}
		if s.Compare != nil {
			cc := *s.Compare
			cc.Variants = append([]Variant(nil), cc.Variants...)
			for j := range cc.Variants {
				cc.Variants[j].Line = 0
			}
			if cc.Sweep != nil {
				sw := *cc.Sweep
				sw.Line = 0
				cc.Sweep = &sw
			}
			s.Compare = &cc
		}
		if sp, ok := s.Spec.(*tcokind.Spec); ok {
			tc := *sp
			tc.Inputs = append([]tcokind.Input(nil), tc.Inputs...)
			for j := range tc.Inputs {
				tc.Inputs[j].Line = 0
			}
			s.Spec = &tc
		}
		c.Steps[i] = s
	}
	return c
}

// keyPaths lists the mapping keys of a YAML document as paths
// (steps[3].verify.run), skipping keys whose value is false or empty:
// those say "not set" and need not survive.
func keyPaths(t *testing.T, b []byte) []string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		n = deref(n)
		switch n.Kind {
		case yaml.DocumentNode:
			walk(n.Content[0], prefix)
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i].Value, deref(n.Content[i+1])
				if v.Kind == yaml.ScalarNode && (v.Value == "false" || v.Value == "" || v.Tag == "!!null") {
					continue
				}
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				out = append(out, p)
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", prefix, i))
			}
		}
	}
	walk(&doc, "")
	sort.Strings(out)
	return out
}

// deref follows a YAML alias to what it names.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func contains(sorted []string, s string) bool {
	i := sort.SearchStrings(sorted, s)
	return i < len(sorted) && sorted[i] == s
}

// TestEncodeKeepsAwkwardStrings writes strings YAML would read as other
// types, or that contain ": ", and reads them back unchanged.
func TestEncodeKeepsAwkwardStrings(t *testing.T) {
	l := &Lab{ID: "x", Title: "true", Summary: "1:10", Duration: 60e9, Roles: []Role{{Name: "local"}},
		Variables: []Variable{{Name: "x", Type: TypeString, Default: "no", Description: "d"}},
		Steps: []Step{{ID: "a", Title: "0644", Kind: KindRun, On: []string{"local"}, Hint: "null",
			Run: []string{"echo {{.vars.x}}: y", "~", "- x", "{ a; }"}}}}
	out, err := Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	b, probs := Parse(fstest.MapFS{"x/" + LabFile: {Data: out}}, "x", "lab.yaml")
	if len(probs) > 0 {
		t.Fatalf("%v\n%s", probs, out)
	}
	s := b.Steps[0]
	if b.Title != "true" || b.Summary != "1:10" || s.Title != "0644" || s.Hint != "null" || !reflect.DeepEqual(s.Run, l.Steps[0].Run) {
		t.Errorf("changed on the way back:\n%s\n%+v", out, b)
	}
}
