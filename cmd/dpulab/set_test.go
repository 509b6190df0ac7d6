//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// heredocLab takes any text in msg, but its second step cannot render a
// line that would end its here-document: a --set the run refuses before
// anything runs.
const heredocLab = `id: heredoc
title: Here-document
summary: a value only the second step cannot take
duration: 1m
roles:
  local: this machine
variables:
  msg:
    type: string
    default: hello
    description: a line of a here-document
steps:
  - id: first
    title: First
    kind: run
    run:
      - "true"
  - id: second
    title: Second
    kind: run
    run:
      - |
        cat <<EOF
        {{.vars.msg}}
        EOF
`

// TestBadSetIsUsageError runs `dpulab run` through its command line with
// every kind of bad --set: each exits with status 2 (as --help and the
// README say) and a message that says what the variable takes.
func TestBadSetIsUsageError(t *testing.T) {
	heredoc := filepath.Join(t.TempDir(), "heredoc")
	if err := os.MkdirAll(heredoc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(heredoc, "lab.yaml"), []byte(heredocLab), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, lab, set string
		want           []string
	}{
		{"unknown variable", "quickstart", "instanse=1", []string{`no variable "instanse"`, "did you mean instances?", "it has: clients"}},
		{"unknown, nothing close", "quickstart", "colour=red", []string{`no variable "colour"`, "it has: clients"}},
		{"not an integer", "quickstart", "instances=abc", []string{`"abc" is not an integer`, "from 1 to 32"}},
		{"below the minimum", "quickstart", "instances=0", []string{"below the minimum 1"}},
		{"above the maximum", "quickstart", "warmup=2m", []string{"above the maximum 1m"}},
		{"not a duration", "quickstart", "duration=5parsecs", []string{"is not a duration"}},
		{"not a size", "quickstart", "data_size=huge", []string{"is not a size"}},
		{"pattern", "quickstart", "ratio=abc", []string{"does not match"}},
		{"missing =", "quickstart", "instances", []string{`--set "instances": want NAME=VALUE`}},
		{"empty name", "quickstart", "=4", []string{`--set "=4": want NAME=VALUE`}},
		{"blank name", "quickstart", " =4", []string{"want NAME=VALUE"}},
		{"no step can take it", "heredoc", "msg=EOF", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"run", tc.lab, "--set", tc.set, "--state-dir", t.TempDir(), "--results", filepath.Join(t.TempDir(), "r"), "--lab-dir", filepath.Dir(heredoc)}
			if tc.lab == "quickstart" {
				// Nothing may run if the value were taken.
				args = append(args, "--dry-run")
			}
			root := newRootCmd()
			var out, errOut bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&errOut)
			root.SetArgs(args)
			code, msg := exitStatus(root.Execute())
			if code != exitUsage {
				t.Fatalf("--set %q: exit status %d, want 2 (%s)\n%s", tc.set, code, msg, errOut.String())
			}
			all := msg + errOut.String()
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("--set %q: the message lacks %q:\n%s", tc.set, w, all)
				}
			}
			if tc.lab == "heredoc" && !strings.Contains(all, "nothing was run") {
				t.Errorf("the refusal does not say nothing ran:\n%s", all)
			}
		})
	}
}

// TestBadInventoryIsUsageError is `dpulab run` with an inventory holding
// a field typo or a mistyped role: exit status 2 and the mistake in the
// inventory's words, with the fix.
func TestBadInventoryIsUsageError(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"field typo", "hosts:\n  - name: h1\n    adress: 10.0.0.1\n    roles: [client]\n", []string{"hosts.yaml:3: unknown field adress in host h1; did you mean address?"}},
		{"role typo", "hosts:\n  - name: h1\n    address: local\n    roles: [locl]\n", []string{`hosts.yaml:2: host h1: unknown role "locl"; did you mean local?`, "the labs' roles:", "client"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := filepath.Join(t.TempDir(), "hosts.yaml")
			if err := os.WriteFile(inv, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			root := newRootCmd()
			var out, errOut bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&errOut)
			root.SetArgs([]string{"run", "quickstart", "--dry-run", "--inventory", inv, "--state-dir", t.TempDir()})
			code, msg := exitStatus(root.Execute())
			if code != exitUsage {
				t.Fatalf("exit status %d, want 2 (%s)", code, msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}
