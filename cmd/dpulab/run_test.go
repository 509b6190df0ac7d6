//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const failingLab = `id: failing
title: Failing
summary: fails in step two
duration: 1m
roles:
  local: this machine
variables:
  word:
    type: string
    default: hello
    description: a word
steps:
  - id: one
    title: One
    kind: run
    run:
      - echo {{.vars.word}}
  - id: two
    title: Two
    kind: run
    run:
      - echo about to fail; echo really; exit 3
    hint: step two always fails
`

func writeLab(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "failing")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(failingLab), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunReportsFailure(t *testing.T) {
	labDir := writeLab(t)
	var stdout, stderr bytes.Buffer
	f := runFlags{labDirs: []string{labDir}, stateDir: t.TempDir(), results: t.TempDir()}
	err := runLab(context.Background(), "failing", f, &stdout, &stderr)
	var ee exitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("runLab = %v, want exit status 1", err)
	}
	out := stderr.String()
	for _, want := range []string{"[1/2] One", "local | hello", "FAILED: step two on local", "exit status 3", "really", "hint: step two always fails", "== failing FAILED"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout without --json: %q", stdout.String())
	}
}

func TestRunJSONAndDryRun(t *testing.T) {
	labDir := writeLab(t)
	var stdout, stderr bytes.Buffer
	f := runFlags{labDirs: []string{labDir}, stateDir: t.TempDir(), json: true, dryRun: true, set: []string{"word=x; rm -rf /"}}
	if err := runLab(context.Background(), "failing", f, &stdout, &stderr); err != nil {
		t.Fatalf("dry run: %v\n%s", err, stderr.String())
	}
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		types = append(types, m["type"].(string))
	}
	if types[0] != "header" || types[1] != "lab_started" || types[len(types)-1] != "lab_finished" {
		t.Errorf("event types = %v", types)
	}
	if !strings.Contains(stdout.String(), `"cmd":"echo 'x; rm -rf /'"`) || !strings.Contains(stderr.String(), "local$ echo 'x; rm -rf /'") {
		t.Errorf("hostile value not quoted in the dry run:\n%s\n%s", stdout.String(), stderr.String())
	}
}

func TestParseSets(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr bool
	}{
		{[]string{"a=1", "b=x=y", "c="}, map[string]string{"a": "1", "b": "x=y", "c": ""}, false},
		{[]string{"novalue"}, nil, true},
		{[]string{"=1"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, ","), func(t *testing.T) {
			got, err := parseSets(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// escLab's command prints a colour, a screen clear and a clipboard write,
// as a hostile or merely colourful host would.
const escLab = `id: esc
title: Escapes
summary: a command that prints escape sequences
duration: 1m
roles:
  local: this machine
steps:
  - id: colour
    title: Colour
    kind: run
    run: printf 'a\033[31mred\033[0m b\033[2J c\033]52;c;aGk=\007d\n'
`

func TestRunRawOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "esc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(escLab), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []bool{false, true} {
		var stdout, stderr bytes.Buffer
		f := runFlags{labDirs: []string{dir}, stateDir: t.TempDir(), results: t.TempDir(), rawOutput: raw}
		if err := runLab(context.Background(), "esc", f, &stdout, &stderr); err != nil {
			t.Fatalf("raw %v: %v\n%s", raw, err, stderr.String())
		}
		out := stderr.String()
		if !raw {
			// The command line shows the payload as typed (\033): fine.
			if strings.ContainsRune(out, 0x1b) || !strings.Contains(out, "local | ared b cd\n") {
				t.Errorf("without --raw-output the host's escapes must go, its text stay: %q", out)
			}
			continue
		}
		if !strings.Contains(out, "local | a\x1b[31mred\x1b[0m b\x1b[2J c\x1b]52;c;aGk=\ad") {
			t.Errorf("--raw-output must pass the host's output as it came: %q", out)
		}
	}
	if fl := newRunCmd().Flags().Lookup("raw-output"); fl == nil || !strings.Contains(fl.Usage, "trusted hosts only") {
		t.Errorf("--raw-output is not documented in --help: %+v", fl)
	}
}
