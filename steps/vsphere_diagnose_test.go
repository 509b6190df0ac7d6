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
