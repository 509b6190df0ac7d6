package labs_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	. "github.com/dpulab/dpulab/labs"
	templatekind "github.com/dpulab/dpulab/steps/kinds/template"
)

// extraFor is the data the engine gives command and config templates; the
// test fills it with awkward values (spaces) to show they survive.
func extraFor(config bool) map[string]any {
	m := map[string]any{
		DataLab: "lab", DataHost: "local", DataRole: "client",
		DataWorkdir: "/tmp/dpulab work", DataDpulab: "/usr/local/bin/dpulab",
		DataLabels: map[string]string{},
	}
	if config {
		m[DataGroup] = "g"
		m[DataInstance] = 2
		m[DataPort] = 7402
		m[DataBind] = "127.0.0.1"
		m[DataSocket] = "/tmp/dpulab work/g-2.sock"
		m[DataTransport] = "tcp"
		m[DataDir] = "/tmp/dpulab work/g-2"
	}
	return m
}

// TestEmbeddedLabsRenderEverything loads every embedded lab and renders
// every doc, command, template and field with the defaults, and with each
// sweep value: what the engine will do, minus running it.
func TestEmbeddedLabsRenderEverything(t *testing.T) {
	ls, err := Embedded()
	if err != nil {
		t.Fatalf("embedded labs do not load:\n%v", err)
	}
	if len(ls) < 3 || ls[0].ID != DefaultLab {
		t.Fatalf("want %s first of at least 3 labs, got %d", DefaultLab, len(ls))
	}
	for _, l := range ls {
		t.Run(l.ID, func(t *testing.T) {
			if !l.Embedded || l.Title == "" || l.Summary == "" || l.Duration <= 0 || len(l.Roles) == 0 {
				t.Fatalf("incomplete lab header: %+v", l)
			}
			vars, err := l.ResolveVars(nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range l.Steps {
				s := &l.Steps[i]
				doc, err := l.Doc(s)
				if err != nil || (s.Doc != "" && strings.TrimSpace(doc) == "") {
					t.Errorf("step %s: doc %q: %v", s.ID, s.Doc, err)
				}
				if s.Doc == "" {
					t.Errorf("step %s has no doc; every embedded step explains itself", s.ID)
				}
				renderStep(t, l, s, vars)
				if s.Compare != nil && s.Compare.Sweep != nil {
					for _, v := range s.Compare.Sweep.Values {
						sv := map[string]string{}
						for k, x := range vars {
							sv[k] = x
						}
						sv[s.Compare.Sweep.Var] = v
						renderStep(t, l, s, sv)
					}
				}
			}
			for _, r := range l.References {
				if r.Source == "" || r.Value == "" {
					t.Errorf("reference %q has no value or source", r.Label)
				}
			}
		})
	}
}

func renderStep(t *testing.T, l *Lab, s *Step, vars map[string]string) {
	t.Helper()
	cmds := append([]string{}, s.Run...)
	if s.SkipIf != "" {
		cmds = append(cmds, s.SkipIf)
	}
	if s.Verify != nil {
		cmds = append(cmds, s.Verify.Run)
	}
	for _, c := range cmds {
		if _, err := RenderCommand(c, Data(vars, extraFor(false))); err != nil {
			t.Errorf("step %s: command %q: %v", s.ID, c, err)
		}
	}
	if _, err := s.Timeout.Duration(vars, 0); err != nil {
		t.Errorf("step %s timeout: %v", s.ID, err)
	}
	renderFile := func(name string, config bool) {
		b, err := l.ReadFile(name)
		if err != nil {
			t.Errorf("step %s: %s: %v", s.ID, name, err)
			return
		}
		if _, err := RenderText(string(b), Data(vars, extraFor(config))); err != nil {
			t.Errorf("step %s: %s: %v", s.ID, name, err)
		}
	}
	if tp, ok := s.Spec.(*templatekind.Spec); ok {
		renderFile(tp.Source, false)
		if _, err := RenderText(string(tp.Dest), Data(vars, extraFor(false))); err != nil {
			t.Errorf("step %s dest: %v", s.ID, err)
		}
	} else if s.Kind == KindTemplate {
		t.Errorf("step %s: a template step without its keys (%T)", s.ID, s.Spec)
	}
	deploy := func(d *DeploySpec) {
		if d.Config != "" {
			renderFile(d.Config, true)
		}
		if n, err := d.Instances.Int(vars, 1); err != nil || n < 1 {
			t.Errorf("step %s instances: %d, %v", s.ID, n, err)
		}
		if _, err := d.Port.Int(vars, 6379); err != nil {
			t.Errorf("step %s port: %v", s.ID, err)
		}
		for _, st := range d.Settings {
			if _, err := st.Value.Resolve(vars); err != nil {
				t.Errorf("step %s setting %s: %v", s.ID, st.Name, err)
			}
		}
	}
	if s.Deploy != nil {
		deploy(s.Deploy)
	}
	if b := s.Bench; b != nil {
		for _, v := range []Value{b.Clients, b.Pipeline, b.Runs, b.KeyMaximum, b.Requests, b.Rate} {
			if _, err := v.Int(vars, 1); err != nil {
				t.Errorf("step %s: %v", s.ID, err)
			}
		}
		for _, v := range []Value{b.Duration, b.Warmup} {
			if _, err := v.Duration(vars, 0); err != nil {
				t.Errorf("step %s: %v", s.ID, err)
			}
		}
		if _, err := b.DataSize.Size(vars, 32); err != nil {
			t.Errorf("step %s data_size: %v", s.ID, err)
		}
	}
	if c := s.Compare; c != nil {
		for _, v := range c.Variants {
			if v.Deploy != nil {
				deploy(v.Deploy)
			}
			if tr, err := v.Transport.String(vars, "tcp"); err != nil || CheckTransport(tr) != nil {
				t.Errorf("step %s variant %s transport %q: %v", s.ID, v.Label, tr, err)
			}
		}
	}
}

func TestParseMinimalLabAndDefaults(t *testing.T) {
	fsys := fstest.MapFS{
		"x/lab.yaml": {Data: []byte(`id: x
title: X
summary: A tiny lab.
duration: 90s
roles: [local]
variables:
  n: {type: int, default: 2, min: 1, max: 9, description: N.}
steps:
  - id: hello
    title: Hello
    kind: run
    run: echo {{.vars.n}}
    confirm: true
    verify: {run: "true", retries: 2}
`)},
	}
	l, err := Load(fsys, "x")
	if err != nil {
		t.Fatal(err)
	}
	s := l.Steps[0]
	if len(s.On) != 1 || s.On[0] != "local" {
		t.Errorf("on = %v; a single-role lab's steps default to that role", s.On)
	}
	if s.Confirm == "" || s.Verify == nil || s.Verify.Retries != 2 || s.Verify.Interval <= 0 {
		t.Errorf("confirm/verify not read: %+v %+v", s.Confirm, s.Verify)
	}
	if got := FormatDuration(l.Duration); got != "1m30s" {
		t.Errorf("duration %s", got)
	}
	if _, err := Load(fsys, "nowhere"); err == nil {
		t.Error("a missing lab loaded")
	}
}

func TestResolveVars(t *testing.T) {
	l := &Lab{ID: "x", Variables: []Variable{
		{Name: "instances", Type: TypeInt, Default: "10", Min: "1", Max: "80"},
		{Name: "mode", Type: TypeEnum, Default: "rc", Values: []string{"rc", "uc"}},
		{Name: "name", Type: TypeString, Default: "a"},
	}}
	tests := []struct {
		name string
		set  map[string]string
		want map[string]string
		err  string
	}{
		{"defaults", nil, map[string]string{"instances": "10", "mode": "rc", "name": "a"}, ""},
		{"override", map[string]string{"instances": " 40 ", "mode": "uc"}, map[string]string{"instances": "40", "mode": "uc", "name": "a"}, ""},
		{"hostile string is kept as is", map[string]string{"name": "x; rm -rf /"}, map[string]string{"instances": "10", "mode": "rc", "name": "x; rm -rf /"}, ""},
		{"above max", map[string]string{"instances": "81"}, nil, "above the maximum 80"},
		{"not an int", map[string]string{"instances": "ten"}, nil, "not an integer"},
		{"not in enum", map[string]string{"mode": "ud"}, nil, "not one of rc, uc"},
		{"unknown", map[string]string{"instnces": "1"}, nil, `no variable "instnces"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.ResolveVars(tt.set)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestCoverage(t *testing.T) {
	l := &Lab{Roles: []Role{{Name: "client"}, {Name: "baseline"}, {Name: "accelerated"}}}
	if m := l.MissingRoles(nil); m != nil {
		t.Errorf("no inventory: missing %v, want none (all local)", m)
	}
	if c := l.Coverage(nil); !c[0].Local || c[0].Hosts[0] != "local" {
		t.Errorf("no inventory: %+v", c)
	}
	inv := map[string][]string{"client": {"c1"}, "baseline": {"std"}, "other": {"x"}}
	if m := l.MissingRoles(inv); len(m) != 1 || m[0] != "accelerated" {
		t.Errorf("missing = %v, want [accelerated]", m)
	}
	inv["accelerated"] = []string{"dpu1", "dpu2"}
	if m := l.MissingRoles(inv); m != nil {
		t.Errorf("missing = %v, want none", m)
	}
	if c := l.Coverage(inv); len(c[2].Hosts) != 2 || c[2].Local {
		t.Errorf("coverage = %+v", c)
	}
}

func TestFindAndFromDir(t *testing.T) {
	dir := t.TempDir()
	lab := filepath.Join(dir, "mine")
	if err := os.MkdirAll(lab, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "id: quickstart\ntitle: My copy\nsummary: s\nduration: 1m\nroles: [local]\nsteps:\n  - {id: a, title: A, kind: run, run: \"true\"}\n"
	if err := os.WriteFile(filepath.Join(lab, LabFile), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Find("quickstart", dir)
	if err != nil || l.Title != "My copy" || l.Embedded {
		t.Fatalf("a --lab-dir lab should replace the embedded one with its id: %v %+v", err, l)
	}
	l, err = Find("quickstart")
	if err != nil || !l.Embedded {
		t.Fatalf("embedded quickstart: %v", err)
	}
	if l, err = Find(filepath.Join(lab, LabFile)); err != nil || l.Title != "My copy" {
		t.Fatalf("find by path: %v", err)
	}
	if _, err := Find("no-such-lab"); err == nil || !strings.Contains(err.Error(), "quickstart") {
		t.Errorf("unknown lab: %v; the error should list the labs there are", err)
	}
	if _, err := FromDir(t.TempDir()); err == nil {
		t.Error("an empty dir gave no error")
	}
	all, err := All(dir)
	if err != nil || all[0].ID != DefaultLab || all[0].Title != "My copy" {
		t.Fatalf("All: %v", err)
	}
}

func TestLintEmbeddedIsClean(t *testing.T) {
	if probs := LintEmbedded(); len(probs) > 0 {
		t.Fatalf("embedded labs have problems:\n%v", probs)
	}
	// The same labs, linted from the source tree as a trainer would.
	probs, err := Lint(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) > 0 {
		t.Fatalf("labs/ has problems:\n%v", probs)
	}
}

func TestLoadTime(t *testing.T) {
	ls, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{
		// bench 1 × (1s + 5s), compare 2 variants × 3 runs × (1s + 5s),
		// offload 3 variants × 3 runs × (1s + 5s)
		"quickstart": 6*time.Second + 2*3*6*time.Second + 3*3*6*time.Second,
		// smoke 1 × (2s + 10s), compare 8 points × 2 variants × 3 runs × (5s + 30s)
		"redis-dpu-uptv2": 12*time.Second + 8*3*3*35*time.Second, // three variants: standard NIC, default mode, UPTv2
		// smoke 1 × (1s + 5s), sizes 6 × 3 × 5 × 12s, connections 4 × 3 × 5 × 12s
		"redis-rdma-rc-uc": 6*time.Second + 6*4*5*12*time.Second + 4*4*5*12*time.Second,
	}
	for _, l := range ls {
		vars, err := l.ResolveVars(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.LoadTime(vars); got != want[l.ID] {
			t.Errorf("%s: load time %s, want %s", l.ID, got, want[l.ID])
		}
	}
	q := ls[0]
	vars, _ := q.ResolveVars(map[string]string{"runs": "20", "duration": "10m"})
	if got := q.LoadTime(vars); got < time.Hour {
		t.Errorf("quickstart with 20 runs of 10m: %s", got)
	}
}

func TestBoothAutoConfirm(t *testing.T) {
	fsys := fstest.MapFS{
		"x/lab.yaml": {Data: []byte(`id: x
title: X
summary: A tiny lab.
duration: 1m
roles: [local]
booth:
  auto_confirm: [careful]
steps:
  - id: careful
    title: Asks first
    kind: run
    run: "true"
    confirm: Go?
  - id: root
    title: As root
    kind: run
    run: "true"
    sudo: true
`)},
	}
	l, err := Load(fsys, "x")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"careful": true, "root": false, "nosuch": false} {
		if got := slices.Contains(l.Booth.AutoConfirm, id); got != want {
			t.Errorf("booth may confirm %q = %v, want %v", id, got, want)
		}
	}
	q, err := Find("quickstart")
	if err != nil {
		t.Fatal(err)
	}
	// The quickstart runs headless with no terminal and no --yes: it asks
	// nothing, so a booth has nothing to answer.
	for _, st := range q.Steps {
		if st.Confirm != "" || st.Sudo {
			t.Errorf("quickstart step %s asks before it runs; `dpulab run quickstart` must not need --yes", st.ID)
		}
	}
}
