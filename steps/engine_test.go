//go:build unix

package steps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/runner"
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

func TestConfirmAndSudoAsk(t *testing.T) {
	lab := loadLab(t, `
id: ask
title: Ask
summary: asks
duration: 1m
roles:
  local: this machine
steps:
  - id: careful
    title: Careful
    kind: run
    confirm: Really run this?
    run:
      - echo ran careful
  - id: root
    title: Root
    kind: run
    sudo: true
    run:
      - echo ran root
`)
	tests := []struct {
		name    string
		yes     bool
		answer  string
		wantErr string
		prompts int
	}{
		{"declined", false, "no", "not confirmed", 1},
		{"accepted", false, "yes", "", 2},
		{"--yes asks nothing", true, "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			rec := &recorder{onPrompt: func(p Prompt) {
				asked = append(asked, p.Message)
				if p.Type != PromptConfirm {
					t.Errorf("prompt type %v", p.Type)
				}
				p.Reply(Answer{Choice: tt.answer})
			}}
			e := newEngine(t, lab, Options{Yes: tt.yes, Only: "careful"}, rec)
			err := e.Run(testCtx(t, 30*time.Second))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Run = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Errorf("Run = %v", err)
			}
			if tt.prompts > 0 && (len(asked) == 0 || asked[0] != "Really run this?") {
				t.Errorf("asked %q", asked)
			}
			if tt.prompts == 0 && len(asked) > 0 {
				t.Errorf("asked %q despite --yes", asked)
			}
		})
	}
	// A sudo step asks before it runs, naming the hosts.
	var asked []string
	rec := &recorder{onPrompt: func(p Prompt) { asked = append(asked, p.Message); p.Reply(Answer{Choice: "no"}) }}
	e := newEngine(t, lab, Options{Only: "root"}, rec)
	if err := e.Run(testCtx(t, 30*time.Second)); err == nil {
		t.Error("declined sudo step ran")
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "root (sudo) on local") {
		t.Errorf("sudo question = %q", asked)
	}
	if strings.Contains(strings.Join(rec.output(), "\n"), "ran root") {
		t.Error("the declined sudo step ran its command")
	}
}

func TestVerifyRetriesAndExpect(t *testing.T) {
	dir := t.TempDir()
	lab := loadLab(t, `
id: verify
title: Verify
summary: verifies
duration: 1m
roles:
  local: this machine
variables:
  dir:
    type: string
    default: /nonexistent
    description: where
steps:
  - id: eventually
    title: Eventually true
    kind: check
    verify:
      run: echo x >> {{.vars.dir}}/n; test $(wc -l < {{.vars.dir}}/n) -ge 3 && echo ready
      expect: '^ready$'
      retries: 3
      interval: 10ms
  - id: never
    title: Never matches
    kind: check
    verify:
      run: echo nope
      expect: 'yes'
      retries: 1
      interval: 10ms
    hint: it never says yes
`)
	rec := &recorder{}
	e := newEngine(t, lab, Options{Vars: map[string]string{"dir": dir}}, rec)
	err := e.Run(testCtx(t, 30*time.Second))
	f := rec.finished()
	if f["eventually"].Status != results.Done {
		t.Errorf("eventually = %+v", f["eventually"])
	}
	if f["never"].Status != results.Failed || !strings.Contains(f["never"].Err, `does not match "yes"`) || !strings.Contains(f["never"].Err, "2 tries") || f["never"].Hint == "" {
		t.Errorf("never = %+v", f["never"])
	}
	if err == nil || !strings.Contains(err.Error(), "never") {
		t.Errorf("Run = %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "n"))
	if n := strings.Count(string(b), "x"); n != 3 {
		t.Errorf("verify ran %d times, want 3 (until it passed)", n)
	}
}

func TestBadVariablesRefused(t *testing.T) {
	lab := quickstart(t)
	for _, set := range []map[string]string{
		{"instances": "0"},
		{"instances": "many"},
		{"ratio": "x; rm -rf /"},
		{"nosuch": "1"},
	} {
		_, err := New(lab, Options{Vars: set, StateDir: t.TempDir()})
		if err == nil {
			t.Errorf("--set %v accepted", set)
			continue
		}
		for k := range set {
			if !strings.Contains(err.Error(), k) {
				t.Errorf("--set %v: error %q does not name %s", set, err, k)
			}
		}
	}
}

func TestInventoryMissingRole(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "hosts.yaml")
	os.WriteFile(inv, []byte("hosts:\n  - name: c1\n    address: 10.0.0.5\n    roles: [client]\n"), 0o600)
	in, err := runner.LoadInventory(inv)
	if err != nil {
		t.Fatal(err)
	}
	// A role other than "local" (which stays this machine) that no host
	// plays.
	lab := loadLab(t, strings.NewReplacer("local: this machine", "server: the server host", "kind: run\n", "kind: run\n    on: server\n").Replace(hostileLab))
	_, err = New(lab, Options{Inventory: in, StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "no host for role server") || !strings.Contains(err.Error(), "client") {
		t.Errorf("New with an inventory lacking the lab's role: %v", err)
	}
}

// TestLocalRoleWithInventory runs a lab whose role is "local" with an
// inventory that gives that role to no host (as when a trainee has loaded
// the inventory for another lab): it runs on this machine, and the results
// name this machine as its host.
func TestLocalRoleWithInventory(t *testing.T) {
	lab := loadLab(t, hostileLab)
	rec := &recorder{}
	inv, err := runner.ParseInventory("hosts.yaml", []byte("hosts:\n  - name: c1\n    address: 10.0.0.1\n    roles: [client]\n"))
	if err != nil {
		t.Fatal(err)
	}
	resDir := filepath.Join(t.TempDir(), "res")
	e := newEngine(t, lab, Options{Inventory: inv, ResultsDir: resDir, StateDir: t.TempDir(), Vars: map[string]string{"name": "x; rm"}}, rec)
	if err := e.Run(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	if out := strings.Join(rec.output(), "\n"); !strings.Contains(out, "hello x; rm") {
		t.Errorf("output: %s", out)
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hosts) != 1 || r.Hosts[0].Name != runner.LocalName {
		t.Errorf("results hosts = %+v, want this machine", r.Hosts)
	}
}
