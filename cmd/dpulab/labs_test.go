//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// runCmd runs the dpulab command line in-process and returns its output.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

// decodeLabs reads `labs --json`: a header line, then a "lab" line each.
func decodeLabs(t *testing.T, out string) []labInfo {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var h header
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil || h.Type != "header" || h.Stream != "labs" || h.SchemaVersion != labsSchemaVersion {
		t.Fatalf("first line %q: %v; want the labs header", lines[0], err)
	}
	var infos []labInfo
	for _, l := range lines[1:] {
		var in labInfo
		if err := json.Unmarshal([]byte(l), &in); err != nil || in.Type != "lab" {
			t.Fatalf("labs --json line %q: %v", l, err)
		}
		infos = append(infos, in)
	}
	return infos
}

func TestLabsJSON(t *testing.T) {
	out, _, err := runCmd(t, "labs", "--json")
	if err != nil {
		t.Fatal(err)
	}
	infos := decodeLabs(t, out)
	if len(infos) < 3 || infos[0].ID != "quickstart" {
		t.Fatalf("want quickstart first of the built-in labs, got %+v", infos)
	}
	for _, in := range infos {
		if !in.Covered || in.Title == "" || in.DurationSeconds <= 0 || len(in.Roles) == 0 || !in.Embedded {
			t.Errorf("lab %s: %+v (without an inventory every lab is covered by this machine)", in.ID, in)
		}
	}
}

func TestLabsTableAndInventory(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(inv, []byte("hosts:\n  - name: c1\n    address: 127.0.0.1\n    roles: [client]\n  - name: s1\n    address: 127.0.0.2\n    roles: [server]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, "labs", "--inventory", inv)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = line
		}
	}
	tests := []struct{ lab, want string }{
		{"redis-rdma-rc-uc", "ok (client=c1 server=s1)"},
		{"redis-dpu-uptv2", "missing: baseline, accelerated"},
		// The role "local" is this machine unless a host takes it.
		{"quickstart", "this machine"},
	}
	for _, tt := range tests {
		if !strings.HasSuffix(strings.TrimSpace(rows[tt.lab]), tt.want) {
			t.Errorf("%s: row %q, want it to end with %q", tt.lab, rows[tt.lab], tt.want)
		}
	}
	if _, _, err := runCmd(t, "labs", "--inventory", filepath.Join(t.TempDir(), "none.yaml")); err == nil {
		t.Error("a missing inventory file gave no error")
	}
}

func TestLintCommand(t *testing.T) {
	if out, errOut, err := runCmd(t, "lint"); err != nil || out != "" || !strings.Contains(errOut, "3 labs, no problems") {
		t.Fatalf("built-in labs: %v\n%s%s", err, out, errOut)
	}
	if _, _, err := runCmd(t, "lint", "../../labs/quickstart", "../../labs/redis-dpu-uptv2/lab.yaml"); err != nil {
		t.Fatalf("lint of good labs by dir and by file: %v", err)
	}
	out, errOut, err := runCmd(t, "lint", "../../labs/testdata/bad/unknown-keys", "../../labs/testdata/bad/unknown-roles")
	var ee exitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("lint of bad labs: err = %v, want exit status 1", err)
	}
	for _, want := range []string{
		"labs/testdata/bad/unknown-keys/lab.yaml:12: step hello: unknown key \"tiemout\"",
		"labs/testdata/bad/unknown-roles/lab.yaml:12: step one: unknown role \"servre\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "8 problem(s) in 2 labs") {
		t.Errorf("stderr %q should count the problems", errOut)
	}
	if _, _, err := runCmd(t, "lint", t.TempDir()); err == nil || errors.As(err, &ee) {
		t.Errorf("a dir with no lab: %v, want a plain error", err)
	}
}

func TestLabsLabDir(t *testing.T) {
	dir := t.TempDir()
	lab := filepath.Join(dir, "extra")
	if err := os.MkdirAll(lab, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "id: extra\ntitle: An extra lab\nsummary: s\nduration: 2m\nroles: [local]\nsteps:\n  - {id: a, title: A, kind: run, run: \"true\"}\n"
	if err := os.WriteFile(filepath.Join(lab, "lab.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, "labs", "--json", "--lab-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	infos := decodeLabs(t, out)
	// quickstart first, then by id.
	if len(infos) != 4 || infos[0].ID != "quickstart" || infos[1].ID != "extra" || infos[1].Embedded || infos[1].Duration != "2m" {
		t.Fatalf("got %+v", infos)
	}
	// A broken lab in --lab-dir is reported with its line, not skipped.
	if err := os.WriteFile(filepath.Join(lab, "lab.yaml"), []byte(yaml+"bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, "labs", "--lab-dir", dir); err == nil || !strings.Contains(err.Error(), "lab.yaml:8: lab: unknown key \"bogus\"") {
		t.Errorf("err = %v", err)
	}
}

// hostileLab's title, summary and a step title carry a clipboard write
// (OSC 52), a screen clear and a window title. badLab's variable pattern
// does not compile, and Go's regexp error quotes it raw: the loader's and
// lint's messages carry its escape sequences.
const (
	hostileLab = "id: evil\ntitle: \"\\e]52;c;aGVsbG8=\\aEvil \\e[2Jtitle\"\nsummary: \"sum\\e[31mred\\e[0m\"\nduration: 2m\nroles: [local]\nsteps:\n  - {id: a, title: \"A\\e]0;pwned\\a\", kind: run, run: \"true\"}\n"
	badLab     = "id: bad\ntitle: Bad\nsummary: s\nduration: 2m\nroles: [local]\nvariables:\n  v: {type: string, default: a, pattern: \"(\\e]52;c;eA==\\a\", description: d}\nsteps:\n  - {id: a, title: A, kind: run, run: \"true\"}\n"
)

// TestLabsFilterOutsideText runs the dpulab binary on lab files whose text
// carries escape sequences: no ESC byte may reach its output, whatever the
// command and whether it succeeds.
func TestLabsFilterOutsideText(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dpulab: not in -short")
	}
	bin := testpeer.Dpulab(t)
	hostile := writeLabDir(t, "evil", hostileLab)
	bad := writeLabDir(t, "bad", badLab)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string // in stdout or stderr
	}{
		// The loader refuses escape sequences in lab text (labs, f9be4cc):
		// the error says so, and carries none itself.
		{"labs", []string{"labs", "--lab-dir", hostile}, 1, "escape sequence"},
		{"labs-json", []string{"labs", "--json", "--lab-dir", hostile}, 1, "escape sequence"},
		{"labs-broken-lab", []string{"labs", "--lab-dir", bad}, 1, "missing closing )"},
		{"lint", []string{"lint", filepath.Join(bad, "bad")}, 1, "missing closing )"},
		{"run-broken-lab", []string{"run", "bad", "--lab-dir", bad}, 1, "missing closing )"},
		{"run-dry", []string{"run", "evil", "--lab-dir", hostile, "--dry-run"}, 1, "escape sequence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			all := stdout.String() + stderr.String()
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d\n%s", code, tt.wantCode, all)
			}
			if i := strings.IndexByte(all, 0x1b); i >= 0 {
				t.Errorf("ESC reached the output at byte %d: %q", i, all)
			}
			// An OSC's payload goes with it; JSON must not carry it escaped.
			// (badLab's messages may quote it harmlessly, as Go's %q.)
			if strings.Contains(all, "pwned") || strings.Contains(all, "aGVsbG8=") || strings.Contains(all, `\u001b`) {
				t.Errorf("an escape sequence survived as text: %q", all)
			}
			if !strings.Contains(all, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, all)
			}
		})
	}
}
