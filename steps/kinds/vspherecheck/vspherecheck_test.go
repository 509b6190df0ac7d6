package vspherecheck_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	"github.com/dpulab/dpulab/steps/kinds/vspherecheck"
)

const checkLab = `
id: fakevsphere
title: Fake vSphere check
summary: a check step that asks vCenter
duration: 1m
roles:
  server: the VMs
steps:
  - id: upt
    title: UPTv2 is on
    kind: check
    hardware: true
    vsphere: uptv2
`

// env is kindtest's Env with a vCenter: VMs named after their hosts on
// ESXi host esx01, except hosts listed in noESXi.
type env struct {
	*kindtest.Env
	url     string
	noESXi  map[string]bool
	checker fakeVCenter
}

func (e *env) VCenterURL() string { return e.url }

func (e *env) VSphereNames(host string) (string, string) {
	if e.noESXi[host] {
		return "", ""
	}
	return "esx01", host + "-vm"
}

func (e *env) VCenter(context.Context, string) (vspherecheck.Checker, error) { return e.checker, nil }

func (e *env) Target(_ context.Context, host string) (runner.Target, error) {
	return e.Env.Target(host), nil
}

// fakeVCenter answers every UPTv2 check with status for the VM asked.
type fakeVCenter struct{ status vsphere.Status }

func (f fakeVCenter) CheckUPTv2(_ context.Context, vm string) ([]vsphere.Result, error) {
	return []vsphere.Result{{Check: vsphere.CheckUPTv2, Subject: "VM " + vm, Status: f.status, Detail: "said by the fake"}}, nil
}

func (f fakeVCenter) CheckUPTv2Off(context.Context, string) ([]vsphere.Result, error) {
	return nil, errors.New("not faked")
}

func (f fakeVCenter) CheckDPUs(context.Context, string) (vsphere.Result, []vsphere.DPU, error) {
	return vsphere.Result{}, nil, errors.New("not faked")
}

func (f fakeVCenter) CheckNetworkOffload(context.Context, string) ([]vsphere.Result, error) {
	return nil, errors.New("not faked")
}

func newEnv(t *testing.T, url string, status vsphere.Status, hosts ...string) *env {
	return &env{Env: kindtest.New(kindtest.Lab(t, checkLab, nil), hosts...), url: url, noESXi: map[string]bool{}, checker: fakeVCenter{status}}
}

func resolve(t *testing.T, e kind.Env) kind.Plan {
	t.Helper()
	k, _ := kind.Lookup("check")
	p, err := k.Resolve(e, e.Lab().Step("upt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func said(e *env) string {
	var b strings.Builder
	for _, l := range e.Lines() {
		b.WriteString(l.Host + ": " + l.Text + "\n")
	}
	return b.String()
}

// TestWithoutVCenter: the plan and the run say what to add to the
// inventory; nothing is asked.
func TestWithoutVCenter(t *testing.T) {
	e := newEnv(t, "", vsphere.Pass, "a")
	p := resolve(t, e)
	if c := p.Commands(); len(c) != 1 || !strings.Contains(c[0].Cmd, "the inventory has no vcenter: section") {
		t.Errorf("plan %+v", c)
	}
	if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no vcenter:") {
		t.Errorf("err = %v", err)
	}
}

// TestAsksVCenter: each host's VM is asked about; a pass is said and
// passes, a failure fails the step; a host without esxi: fails with what
// to add.
func TestAsksVCenter(t *testing.T) {
	e := newEnv(t, "https://vc.example", vsphere.Pass, "a", "b")
	if err := resolve(t, e).Run(context.Background()); err != nil {
		t.Fatalf("err = %v\n%s", err, said(e))
	}
	if s := said(e); !strings.Contains(s, "a: uptv2 VM a-vm: ok") || !strings.Contains(s, "b: uptv2 VM b-vm: ok") {
		t.Errorf("said:\n%s", s)
	}

	e = newEnv(t, "https://vc.example", vsphere.Fail, "a")
	err := resolve(t, e).Run(context.Background())
	var se *kind.StepError
	if !errors.As(err, &se) || se.Host != "a" || !strings.Contains(err.Error(), "failed") {
		t.Errorf("a failed check: err = %v", err)
	}

	e = newEnv(t, "https://vc.example", vsphere.Pass, "a")
	e.noESXi["a"] = true
	if err := resolve(t, e).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no esxi:") {
		t.Errorf("a host without esxi: err = %v", err)
	}
}

// TestRehearsalNotes: in a rehearsal a failure is a note and the step is
// skipped, not failed.
func TestRehearsalNotes(t *testing.T) {
	e := newEnv(t, "https://vc.example", vsphere.Fail, "a")
	r, ok := resolve(t, e).(kind.Rehearser)
	if !ok {
		t.Fatal("a vSphere check has no rehearsal behaviour")
	}
	if err := r.Rehearse(context.Background()); !errors.Is(err, kind.ErrSkipped) {
		t.Fatalf("err = %v, want skipped", err)
	}
	if s := said(e); !strings.Contains(s, "REHEARSAL note") {
		t.Errorf("said:\n%s", s)
	}
}

// TestPlainCheckIsUnchanged: a check without vsphere: is the command
// check, and needs no vCenter of its Env.
func TestPlainCheckIsUnchanged(t *testing.T) {
	l := kindtest.Lab(t, strings.Replace(checkLab, "    vsphere: uptv2\n", "    verify:\n      run: ibv_devinfo\n", 1), nil)
	e := kindtest.New(l, "a")
	k, _ := kind.Lookup("check")
	p, err := k.Resolve(e, l.Step("upt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Commands(); len(c) != 1 || c[0].Cmd != "ibv_devinfo" {
		t.Errorf("plan %+v", c)
	}
}
