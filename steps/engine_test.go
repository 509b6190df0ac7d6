package steps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const hostileLab = `
id: hostile
title: Hostile values
summary: checks quoting
duration: 1m
roles:
  local: this machine
variables:
  name:
    type: string
    default: world
    description: a name
steps:
  - id: greet
    title: Greet
    kind: run
    run:
      - echo hello {{.vars.name}}
    verify:
      run: echo {{.vars.name}}
      expect: 'x; rm'
`

func TestDryRunQuotesHostileValues(t *testing.T) {
	lab := loadLab(t, hostileLab)
	rec := &recorder{}
	stateDir := t.TempDir()
	resDir := filepath.Join(t.TempDir(), "res")
	e := newEngine(t, lab, Options{DryRun: true, StateDir: stateDir, ResultsDir: resDir, Vars: map[string]string{"name": "x; rm -rf /"}}, rec)
	if err := e.Run(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	var cmds []string
	for _, ev := range rec.events() {
		if s, ok := ev.(StepStarted); ok {
			for _, c := range s.Commands {
				cmds = append(cmds, c.Host+": "+c.Cmd)
			}
		}
	}
	want := []string{`local: echo hello 'x; rm -rf /'`, `local: echo 'x; rm -rf /'`}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("planned commands:\n%s\nwant:\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
	}
	// A dry run leaves nothing behind.
	if _, err := os.Stat(resDir); !os.IsNotExist(err) {
		t.Errorf("dry run wrote results: %v", err)
	}
	if ents, _ := os.ReadDir(stateDir); len(ents) != 0 {
		t.Errorf("dry run saved progress: %v", ents)
	}
}

func TestHostileValueRunsAsOneWord(t *testing.T) {
	lab := loadLab(t, hostileLab)
	rec := &recorder{}
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	if err := os.WriteFile(canary, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, lab, Options{Vars: map[string]string{"name": "x; rm " + canary + "; echo $(id)"}}, rec)
	if err := e.Run(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("the hostile value ran as a command: %v", err)
	}
	out := strings.Join(rec.output(), "\n")
	if !strings.Contains(out, "hello x; rm "+canary+"; echo $(id)") {
		t.Errorf("output does not show the value verbatim:\n%s", out)
	}
}
