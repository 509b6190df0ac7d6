package labs

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// embedded holds the labs shipped with dpulab, one directory each.
//
//go:embed quickstart redis-dpu-uptv2 redis-rdma-rc-uc
var embedded embed.FS

// DefaultLab is the lab the picker selects first and lists first: it runs on
// this machine with nothing but dpulab.
const DefaultLab = "quickstart"

// Parse reads and checks the lab in dir of fsys. It returns the lab (as
// complete as it could be read) and every problem found; file is how
// lab.yaml is named in those problems.
func Parse(fsys fs.FS, dir, file string) (*Lab, Problems) {
	l := &Lab{File: file, Dir: dir, FS: fsys}
	p := &parser{file: file, fsys: fsys, dir: dir, lab: l}
	b, err := readCapped(fsys, path.Join(dir, LabFile), MaxLabFileSize, "a "+LabFile)
	if err != nil {
		p.errAt(file, 0, "cannot read: %v", cleanFSErr(err))
		return l, p.probs
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		p.errAt(file, yamlErrLine(err), "not valid YAML (here or in what this line starts): %s", yamlErrMsg(err))
		return l, p.probs
	}
	if root.Kind == 0 {
		p.errAt(file, 0, "the file is empty; a lab needs at least id, title, roles and steps")
		return l, p.probs
	}
	p.parse(&root)
	p.probs.Sort()
	return l, p.probs
}

// yamlErrLine pulls the line out of a yaml.v3 error ("yaml: line 7: ...").
func yamlErrLine(err error) int {
	var n int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i:], "line %d", &n)
	}
	return n
}

func yamlErrMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "line ") {
		msg = msg[i+2:]
	}
	return msg
}

// Load reads and validates the lab in dir of fsys (dir holds lab.yaml). It
// fails with a Problems error listing every problem as "file:line: message".
func Load(fsys fs.FS, dir string) (*Lab, error) {
	l, probs := Parse(fsys, dir, path.Join(dir, LabFile))
	if len(probs) > 0 {
		return nil, probs
	}
	return l, nil
}

// Embedded returns the labs compiled into dpulab, quickstart first, then by
// id.
func Embedded() ([]*Lab, error) {
	dirs, err := fs.ReadDir(embedded, ".")
	if err != nil {
		return nil, fmt.Errorf("embedded labs: %w", err)
	}
	var out []*Lab
	var probs Problems
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		l, ps := Parse(embedded, d.Name(), "labs/"+d.Name()+"/"+LabFile)
		if len(ps) > 0 {
			probs = append(probs, ps...)
			continue
		}
		l.Embedded = true
		out = append(out, l)
	}
	if len(probs) > 0 {
		return nil, probs
	}
	sortLabs(out)
	return out, nil
}

// sortLabs puts the default lab first, then the others by id.
func sortLabs(ls []*Lab) {
	sort.SliceStable(ls, func(i, j int) bool {
		a, b := ls[i].ID == DefaultLab, ls[j].ID == DefaultLab
		if a != b {
			return a
		}
		return ls[i].ID < ls[j].ID
	})
}

// FromDir loads a lab directory (holding lab.yaml) or a directory whose
// subdirectories are labs. Every problem of every lab is returned together.
func FromDir(dir string) ([]*Lab, error) {
	dirs, err := labDirs(dir)
	if err != nil {
		return nil, err
	}
	var out []*Lab
	var probs Problems
	for _, d := range dirs {
		l, ps := Parse(os.DirFS(d), ".", filepath.Join(d, LabFile))
		if len(ps) > 0 {
			probs = append(probs, ps...)
			continue
		}
		out = append(out, l)
	}
	if len(probs) > 0 {
		return nil, probs
	}
	if dup := duplicateIDs(out); dup != nil {
		return nil, dup
	}
	sortLabs(out)
	return out, nil
}

// labDirs finds the lab directories a path names: the directory of a
// lab.yaml, a lab directory, or the lab directories inside a directory.
func labDirs(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("lab path: %w", err)
	}
	if !fi.IsDir() {
		if filepath.Base(p) != LabFile {
			return nil, fmt.Errorf("%s: a lab is a directory holding %s; give that directory or file", p, LabFile)
		}
		return []string{filepath.Dir(p)}, nil
	}
	if _, err := os.Stat(filepath.Join(p, LabFile)); err == nil {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("lab dir: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(p, e.Name())
		if _, err := os.Stat(filepath.Join(sub, LabFile)); err == nil {
			out = append(out, sub)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no lab (no %s in it or in its subdirectories)", p, LabFile)
	}
	return out, nil
}

// duplicateIDs reports labs that share an id.
func duplicateIDs(ls []*Lab) Problems {
	seen := map[string]*Lab{}
	var probs Problems
	for _, l := range ls {
		if prev, dup := seen[l.ID]; dup {
			probs = append(probs, Problem{File: l.File, Line: 1, Msg: fmt.Sprintf("lab id %q is also used by %s", l.ID, prev.File)})
			continue
		}
		seen[l.ID] = l
	}
	return probs
}

// Unreadable is a lab directory whose labs could not be loaded. The
// picker lists it with its error; `dpulab run` refuses to go on.
type Unreadable struct {
	Dir string
	Err error
}

// Catalogue is every lab dpulab knows: the embedded ones and those of
// labDirs. A lab of a later directory replaces one with the same id from an
// earlier directory or from the embedded labs, so a trainer can edit a copy
// of a shipped lab and run it under the same name, and the folder named
// last (the command line's --lab-dir) wins. Directories that cannot be read
// come back in broken, not as the error, which is only for the embedded
// labs (a build problem). This is the one catalogue: All, Find, the TUI's
// picker and `dpulab labs` all read it.
func Catalogue(labDirs ...string) (ls []*Lab, broken []Unreadable, err error) {
	emb, err := Embedded()
	if err != nil {
		return nil, nil, fmt.Errorf("embedded labs: %w", err)
	}
	byID := map[string]int{}
	add := func(l *Lab) {
		if i, ok := byID[l.ID]; ok {
			ls[i] = l
			return
		}
		byID[l.ID] = len(ls)
		ls = append(ls, l)
	}
	for _, l := range emb {
		add(l)
	}
	for _, d := range labDirs {
		dl, err := FromDir(d)
		if err != nil {
			broken = append(broken, Unreadable{Dir: d, Err: err})
			continue
		}
		for _, l := range dl {
			add(l)
		}
	}
	sortLabs(ls)
	return ls, broken, nil
}

// All returns the catalogue, or the first unreadable lab directory's error.
func All(labDirs ...string) ([]*Lab, error) {
	ls, broken, err := Catalogue(labDirs...)
	if err != nil {
		return nil, err
	}
	if len(broken) > 0 {
		return nil, broken[0].Err
	}
	return ls, nil
}

// ErrNoLab is the error Find wraps when no lab has the id asked for.
var ErrNoLab = errors.New("no lab")

// Find returns the lab with id from the catalogue. id may also be a path to a lab directory
// or lab.yaml. An unreadable lab directory does not stop Find from finding
// a lab elsewhere; when the id is nowhere, the error is that directory's
// (the lab may be the one that did not load), else it wraps ErrNoLab.
func Find(id string, labDirs ...string) (*Lab, error) {
	if strings.ContainsRune(id, os.PathSeparator) || strings.HasSuffix(id, ".yaml") {
		ls, err := FromDir(id)
		if err != nil {
			return nil, err
		}
		if len(ls) != 1 {
			return nil, fmt.Errorf("%s holds %d labs; name one of them", id, len(ls))
		}
		return ls[0], nil
	}
	all, broken, err := Catalogue(labDirs...)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(all))
	for i, l := range all {
		if l.ID == id {
			return l, nil
		}
		ids[i] = l.ID
	}
	if len(broken) > 0 {
		// The lab may be the one that did not load: its problems are the
		// answer, not "no such lab".
		errs := make([]error, len(broken))
		for i, b := range broken {
			errs[i] = b.Err
		}
		return nil, fmt.Errorf("no lab %q among those that load (available: %s): %w", id, strings.Join(ids, ", "), errors.Join(errs...))
	}
	return nil, fmt.Errorf("%w %q (available: %s; or give a path to a lab directory)", ErrNoLab, id, strings.Join(ids, ", "))
}

// Lint checks the labs a path names (a lab directory, a lab.yaml, or a
// directory of labs) and returns every problem. The error is for paths
// that hold no lab at all.
func Lint(p string) (Problems, error) {
	_, probs, err := lintCount(p)
	return probs, err
}

// LintPaths lints every path (no paths: the embedded labs) and also says
// how many labs it checked, for a summary line.
func LintPaths(paths ...string) (labsChecked int, probs Problems, err error) {
	if len(paths) == 0 {
		dirs, err := fs.ReadDir(embedded, ".")
		if err != nil {
			return 0, nil, err
		}
		return len(dirs), LintEmbedded(), nil
	}
	for _, p := range paths {
		n, ps, err := lintCount(p)
		if err != nil {
			return labsChecked, probs, err
		}
		labsChecked += n
		probs = append(probs, ps...)
	}
	return labsChecked, probs, nil
}

func lintCount(p string) (int, Problems, error) {
	dirs, err := labDirs(p)
	if err != nil {
		return 0, nil, err
	}
	var probs Problems
	var ok []*Lab
	for _, d := range dirs {
		l, ps := Parse(os.DirFS(d), ".", filepath.Join(d, LabFile))
		probs = append(probs, ps...)
		if l.ID != "" {
			ok = append(ok, l)
		}
	}
	probs = append(probs, duplicateIDs(ok)...)
	return len(dirs), probs, nil
}

// LintEmbedded checks the labs compiled into dpulab.
func LintEmbedded() Problems {
	_, err := Embedded()
	var probs Problems
	if errors.As(err, &probs) {
		return probs
	}
	if err != nil {
		return Problems{{File: "labs", Msg: err.Error()}}
	}
	return nil
}
