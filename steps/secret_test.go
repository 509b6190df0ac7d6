//go:build unix

package steps

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"
)

// TestPasswordNeverLeaves runs a bench against servers that require a
// password: the bench gets it on stdin, and it appears in no event, no
// command line, no saved progress and no results file.
func TestPasswordNeverLeaves(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds dpulab and runs servers")
	}
	bin := dpulabBinary(t)
	port := freePorts(t, 1)
	lab := loadLab(t, fmt.Sprintf(`
id: secret
title: Secret
summary: password
duration: 1m
roles:
  local: this machine
variables:
  password:
    type: string
    default: ""
    description: the servers' password
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
    instances: 1
    port: %d
    settings:
      requirepass: "{{.vars.password}}"
  - id: bench
    title: Bench
    kind: bench
    target: g
    clients: 1
    duration: 1s
    key_maximum: 10
`, port))
	const pw = "s3cret-Pa55word"
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	stateDir := t.TempDir()
	e := newEngine(t, lab, Options{Binary: bin, ResultsDir: resDir, StateDir: stateDir, Vars: map[string]string{"password": pw}}, rec)
	if err := e.Run(testCtx(t, 2*time.Minute)); err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	run := r.Benches[0].Variants[0].Points[0].Runs[0]
	if run.OpsPerSec <= 0 || run.Errors != 0 {
		t.Errorf("bench with password: %+v (NOAUTH errors mean the password did not arrive)", run)
	}
	if r.Variables["password"] != "(hidden)" {
		t.Errorf("results variables = %v", r.Variables)
	}
	for _, ev := range rec.events() {
		b, _ := EventJSON(ev)
		if strings.Contains(string(b), pw) {
			t.Errorf("event carries the password: %s", b)
		}
	}
	for _, dir := range []string{resDir, stateDir} {
		ents, _ := os.ReadDir(dir)
		for _, f := range ents {
			b, _ := os.ReadFile(filepath.Join(dir, f.Name()))
			if strings.Contains(string(b), pw) {
				t.Errorf("%s contains the password", f.Name())
			}
		}
	}
}
