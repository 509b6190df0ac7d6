//go:build unix

package steps

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner/vsphere"
	"github.com/dpulab/dpulab/steps/results"
)

// TestVSphereCheckDiagnoses: a hardware check that asks vCenter, failing
// for a reason that is not the hardware (a certificate, an unreachable
// vCenter, a login, a missing password, a missing VM), ends with that
// reason's own fix: never the step's hint about the hardware, never
// --rehearse. Against govmomi's simulator over TLS, and a closed loopback
// port.
func TestVSphereCheckDiagnoses(t *testing.T) {
	u, thumb, _ := vsSimModel(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + l.Addr().String() + "/sdk"
	l.Close()
	pin := "  thumbprint: " + thumb + "\n"
	tests := []struct {
		name, url, thumbLine, vm string
		// answer is the password prompt's answer.
		answer Answer
		want   []string
	}{
		{name: "wrong thumbprint", url: u, thumbLine: "  thumbprint: " + strings.Repeat("ab", 32) + "\n", answer: Answer{Secret: vsPassword},
			want: []string{thumb, "vecs-cli", "intercepting"}},
		{name: "unknown certificate", url: u, answer: Answer{Secret: vsPassword},
			want: []string{thumb, "vcenter.thumbprint", "--accept-new-host-keys"}},
		{name: "unreachable", url: closed, thumbLine: pin, answer: Answer{Secret: vsPassword},
			want: []string{l.Addr().String(), "connection refused", "nc -vz"}},
		{name: "login refused", url: u, thumbLine: pin, answer: Answer{Secret: "Wrong-never-shown"},
			want: []string{"refused the login of " + vsUser, "vcenter.user"}},
		{name: "no password, no terminal", url: u, thumbLine: pin, answer: Answer{Choice: "cancel", NoTerminal: true},
			want: []string{vsphere.DefaultPasswordEnv, "no terminal"}},
		{name: "missing VM", url: u, thumbLine: pin, vm: "redis-dpu-vm", answer: Answer{Secret: vsPassword},
			want: []string{`no VM named "redis-dpu-vm"`, "DC0_H0_VM0", "vm:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(vsphere.DefaultPasswordEnv, "")
			rec := &recorder{}
			rec.onPrompt = func(p Prompt) {
				switch p.Type {
				case PromptSecret:
					p.Reply(tc.answer)
				default:
					p.Reply(Answer{Choice: "refuse"}) // headless: no one to ask
				}
			}
			lab := vsCheckLab
			e, _ := vsEngineLab(t, lab, tc.url, tc.thumbLine, rec)
			if tc.vm != "" {
				ih := e.opts.Inventory.Hosts[1]
				ih.VM = tc.vm
				e.opts.Inventory.Hosts[1] = ih
			}
			if st := e.RunStep(testCtx(t, time.Minute), 0); st != results.Failed {
				t.Fatalf("status %v, want failed", st)
			}
			e.Cleanup(testCtx(t, time.Minute))
			f := rec.finished()["uptv2"]
			msg := f.Err + "\nhint: " + f.Hint
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("lacks %q:\n%s", w, msg)
				}
			}
			for _, n := range []string{"rehearse", "the lab's hint", "ssh-agent", "dial tcp", "Wrong-never-shown", vsPassword} {
				if strings.Contains(msg, n) {
					t.Errorf("says %q:\n%s", n, msg)
				}
			}
			if testing.Verbose() {
				t.Logf("%s", msg)
			}
		})
	}
}

// TestVSphereChecksAreNotesInARehearsal: under --rehearse a vSphere check
// still asks vCenter (govmomi's simulator here); what fails is said as a
// REHEARSAL note and skips the step instead of failing the run, and what
// passes is done.
func TestVSphereChecksAreNotesInARehearsal(t *testing.T) {
	for _, active := range []bool{true, false} {
		u, thumb, m := vsSimModel(t)
		uptv2VM(t, m, "DC0_H0_VM0", active)
		rec := &recorder{}
		var secrets, keys int
		rec.onPrompt = answerVSphere(vsPassword, "save", &secrets, &keys)
		e, _ := vsEngineLab(t, vsCheckLab, u, "  thumbprint: "+thumb+"\n", rec)
		e.opts.Rehearse = true
		st := e.RunStep(testCtx(t, time.Minute), 0)
		e.Cleanup(testCtx(t, time.Minute))
		out := strings.Join(rec.output(), "\n")
		switch {
		case active && st != results.Done:
			t.Errorf("UPTv2 active, rehearsal: %v, want done\n%s", st, out)
		case !active && st != results.Skipped:
			t.Errorf("UPTv2 inactive, rehearsal: %v, want skipped (a note)\n%s", st, out)
		case !active && (!strings.Contains(out, "REHEARSAL note: ") || !strings.Contains(out, "vmNptInsufficientMemoryReservation")):
			t.Errorf("the failed check is not said as a note with vCenter's reason:\n%s", out)
		}
		if secrets != 1 {
			t.Errorf("active=%v: vCenter was asked %d times for a password, want 1 (the check ran)", active, secrets)
		}
	}
	// vCenter unreachable: a note saying so, the step skipped.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	rec := &recorder{}
	rec.onPrompt = answerVSphere(vsPassword, "refuse", new(int), new(int))
	e, _ := vsEngineLab(t, vsCheckLab, "https://"+l.Addr().String()+"/sdk", "", rec)
	e.opts.Rehearse = true
	if st := e.RunStep(testCtx(t, time.Minute), 0); st != results.Skipped {
		t.Errorf("unreachable vCenter, rehearsal: %v, want skipped", st)
	}
	if out := strings.Join(rec.output(), "\n"); !strings.Contains(out, "REHEARSAL note, not a failure: vSphere check uptv2: ") || !strings.Contains(out, "cannot be reached") {
		t.Errorf("no note of the unreachable vCenter:\n%s", out)
	}
}
