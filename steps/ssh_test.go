//go:build unix

package steps

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner"
)

// sshdInventory is an inventory of one host, "labhost", reached through
// sshd as the current user; extra is the rest of its entry (roles, labels).
func sshdInventory(t testing.TB, sshd *testpeer.SSHD, extra string) *runner.Inventory {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	invPath := filepath.Join(t.TempDir(), "hosts.yaml")
	inv := fmt.Sprintf("known_hosts: %s\nhosts:\n  - name: labhost\n    address: 127.0.0.1\n    port: %d\n    user: %s\n    identity: %s\n    %s\n",
		sshd.KnownHosts, sshd.Port, u.Username, sshd.UserKey, extra)
	if err := os.WriteFile(invPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestQuickstartOverSSH runs the quickstart lab on a "lab host" reached
// over real OpenSSH (on 127.0.0.1): the dpulab agent, built from this
// checkout for the host's uname, is uploaded over SFTP (never the
// controller), the servers are started detached there, PING goes through
// `dpulab-agent bench` on the host, the sampler streams back over the
// session, and results record the agent's version and sha256.
func TestQuickstartOverSSH(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts sshd and runs the quickstart lab over it")
	}
	sshd := testpeer.StartSSHD(t)
	in := sshdInventory(t, sshd, "roles: [local]\n    labels: {nic: loopback}")
	vars := quickVars(t)
	vars["runs"] = "1"
	// Three measured seconds: a bench second gets the server's CPU from a
	// sample the sampler took after the run began, and with one second
	// the sampler's tick can land after it (seen under -race on a loaded
	// machine: no CPU at all for a one-second run).
	vars["duration"] = "3s"
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	agents := &runner.AgentFinder{CacheDir: t.TempDir()}
	e := newEngine(t, quickstart(t), Options{Agents: agents, Inventory: in, Vars: vars, ResultsDir: resDir, Yes: true}, rec)
	if err := e.Run(testCtx(t, 3*time.Minute)); err != nil {
		t.Fatalf("quickstart over SSH: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	out := strings.Join(rec.output(), "\n")
	if os.Getenv("DEBUG_SSH") != "" {
		for _, ev := range rec.events() {
			switch ev := ev.(type) {
			case Output:
				t.Logf("%s %s: %s", ev.Line.Time.Format("15:04:05.000"), ev.Step, ev.Line.Text)
			case StepFinished:
				t.Logf("finished %s %v %s", ev.Step, ev.Duration, ev.Err)
			case Sample:
				t.Logf("sample %s %s cpu=%v", ev.Step, ev.Variant, ev.Point.ServerCPU)
			}
		}
	}
	if !strings.Contains(out, "dpulab agent is at "+e.workdir()+"/dpulab-agent: dpulab agent ") {
		t.Errorf("the dpulab agent was not uploaded to the host's working directory:\n%s", out)
	}
	if !strings.Contains(out, "building the dpulab agent for "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("building the agent from source was not said:\n%s", out)
	}
	// The "lab host" is this machine: cleanup removed the working
	// directory (and the uploaded dpulab in it) over SSH.
	if _, err := os.Stat(e.workdir()); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s on the host (stat: %v)", e.workdir(), err)
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hosts) != 1 || r.Hosts[0].Name != "labhost" || r.Hosts[0].Labels["nic"] != "loopback" {
		t.Errorf("hosts in results = %+v", r.Hosts)
	} else if h := r.Hosts[0]; !strings.HasPrefix(h.Agent, "dpulab agent ") || !strings.Contains(h.Agent, runtime.GOOS+"/"+runtime.GOARCH) || len(h.AgentSHA256) != 64 {
		t.Errorf("results do not record the agent: agent %q sha256 %q", h.Agent, h.AgentSHA256)
	}
	for _, b := range r.Benches {
		for _, v := range b.Variants {
			if len(v.Points) == 0 || v.Points[0].Stats.OpsPerSec.Mean <= 0 || v.Hosts[0] != "labhost" {
				t.Errorf("%s/%s: %+v", b.Step, v.Label, v.Points)
				continue
			}
			if v.Points[0].Stats.ServerCPU == nil {
				t.Errorf("%s/%s: no server CPU from the sampler over SSH", b.Step, v.Label)
			}
		}
	}
	st, _ := LoadState(e.StatePath())
	if st == nil || len(st.Procs) != 0 {
		t.Errorf("processes left after cleanup: %+v", st)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+vars["port"], time.Second); err == nil {
		c.Close()
		t.Errorf("a server still listens after cleanup")
	}
}
