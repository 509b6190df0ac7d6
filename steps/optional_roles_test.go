//go:build unix

package steps

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

const optionalRoleLab = `
id: optional-role
title: An optional server role
summary: base always, extra when a host plays it
duration: 1m
roles:
  client: Runs the load.
  base: Runs the servers.
  extra:
    description: Runs more servers, when there is such a host.
    optional: true
steps:
  - id: everywhere
    title: On every role
    kind: run
    on: [client, base, extra]
    run: [echo hi]
  - id: extra-only
    title: On the optional role alone
    kind: run
    on: extra
    run: [echo extra]
  - id: deploy-base
    title: Start base
    kind: deploy
    on: base
    group: base
    instances: 1
    port: 7400
  - id: deploy-extra
    title: Start extra
    kind: deploy
    on: extra
    group: extra
    instances: 1
    port: 7500
  - id: compare
    title: Base against extra
    kind: compare
    on: client
    target: base
    warmup: 0s
    duration: 1s
    runs: 1
    variants:
      - {label: Base, on: base, group: base}
      - {label: Extra, on: extra, group: extra}
  - id: cleanup
    title: Clean up
    kind: cleanup
    on: [client, base, extra]
    run: ["true"]
`

// optionalRoleEngine makes an engine over optionalRoleLab with an
// inventory of the given "name: [roles]" lines, each host a fake target.
func optionalRoleEngine(t *testing.T, hosts map[string]string, rec *recorder, dryRun bool) (*Engine, map[string]*fakeTarget, error) {
	t.Helper()
	dir := t.TempDir()
	var inv strings.Builder
	inv.WriteString("hosts:\n")
	fakes := map[string]*fakeTarget{}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range hosts {
			if !yield(n) {
				return
			}
		}
	}) {
		inv.WriteString("  - name: " + n + "\n    address: 192.0.2.1\n    roles: " + hosts[n] + "\n")
		fakes[n] = &fakeTarget{name: n}
	}
	invPath := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(invPath, []byte(inv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dpulab")
	if err := os.WriteFile(bin, []byte("not really dpulab"), 0o755); err != nil {
		t.Fatal(err)
	}
	targets := func(name string) (runner.Target, error) { return fakes[name], nil }
	e, err := New(loadLab(t, optionalRoleLab), Options{Inventory: in, Targets: targets, Binary: bin, Yes: true, DryRun: dryRun,
		StateDir: t.TempDir(), ResultsDir: filepath.Join(t.TempDir(), "results"), Emit: rec.emit})
	if err == nil {
		t.Cleanup(func() { os.RemoveAll(e.workdir()) })
	}
	return e, fakes, err
}

func planText(t *testing.T, e *Engine, i int) string {
	t.Helper()
	cmds, err := e.Plan(i)
	if err != nil {
		t.Fatalf("plan of step %d: %v", i, err)
	}
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(c.Host + "$ " + c.Cmd + "\n")
	}
	return b.String()
}

// TestOptionalRoleWithoutHost: an inventory without a host for the lab's
// optional role is accepted (one without a required role still is not);
// a step on several roles runs on the hosts there are, a step on the
// optional role alone is skipped with the reason, and a compare variant
// on it is planned and listed as not run with the reason, while the rest
// is planned as usual.
func TestOptionalRoleWithoutHost(t *testing.T) {
	if _, _, err := optionalRoleEngine(t, map[string]string{"c": "[client]"}, &recorder{}, false); err == nil || !strings.Contains(err.Error(), "no host for role base") {
		t.Fatalf("inventory without the required role base: err %v, want it refused naming base", err)
	}

	rec := &recorder{}
	e, fakes, err := optionalRoleEngine(t, map[string]string{"c": "[client]", "b": "[base]"}, rec, false)
	if err != nil {
		t.Fatalf("inventory without the optional role extra: %v", err)
	}
	const why = "no host plays role extra in inventory "
	if p := planText(t, e, 1); !strings.HasPrefix(p, "(extra)$ # not run: "+why) || !strings.Contains(p, "optional in this lab") {
		t.Errorf("plan of the step on extra alone:\n%s", p)
	}
	if p := planText(t, e, 3); !strings.Contains(p, "# not run: "+why) {
		t.Errorf("plan of the deploy on extra alone:\n%s", p)
	}
	cmp := planText(t, e, 4)
	if !strings.Contains(cmp, "c$ # variant \"Extra\"\nc$ # not run: "+why) || !strings.Contains(cmp, "c$ # variant \"Base\"") || !strings.Contains(cmp, "dpulab bench") {
		t.Errorf("plan of the compare: the Extra variant is not shown as not run beside Base's bench:\n%s", cmp)
	}
	if strings.Count(cmp, "dpulab bench") != 1 {
		t.Errorf("plan of the compare runs a bench for the variant without a host:\n%s", cmp)
	}

	ctx := testCtx(t, time.Minute)
	if st := e.RunStep(ctx, 0); st != results.Done {
		t.Errorf("step on [client, base, extra]: %v, want done on the hosts there are", st)
	}
	for _, n := range []string{"c", "b"} {
		if !slices.Contains(fakes[n].commands(), "echo hi") {
			t.Errorf("host %s did not run the step on every role: %q", n, fakes[n].commands())
		}
	}
	if st := e.RunStep(ctx, 1); st != results.Skipped {
		t.Errorf("step on extra alone: %v, want skipped", st)
	}
	if f := rec.finished()["extra-only"]; f.Err != "" {
		t.Errorf("step on extra alone finished with an error: %s", f.Err)
	}
	if out := strings.Join(rec.output(), "\n"); !strings.Contains(out, "not run: "+why) {
		t.Errorf("the skipped step does not say why:\n%s", out)
	}
	for _, n := range []string{"c", "b"} {
		if slices.Contains(fakes[n].commands(), "echo extra") {
			t.Errorf("host %s ran the step of the optional role", n)
		}
	}
}

// TestOptionalRoleWithHost: when a host plays the optional role, it is a
// role like the others.
func TestOptionalRoleWithHost(t *testing.T) {
	rec := &recorder{}
	e, fakes, err := optionalRoleEngine(t, map[string]string{"c": "[client]", "b": "[base]", "x": "[extra]"}, rec, false)
	if err != nil {
		t.Fatal(err)
	}
	if p := planText(t, e, 4); strings.Contains(p, "not run") || strings.Count(p, "dpulab bench") != 2 {
		t.Errorf("plan of the compare with a host for extra:\n%s", p)
	}
	if st := e.RunStep(testCtx(t, time.Minute), 1); st != results.Done || !slices.Contains(fakes["x"].commands(), "echo extra") {
		t.Errorf("step on extra: %v, host x ran %q", st, fakes["x"].commands())
	}
}
