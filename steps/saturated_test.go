//go:build linux

package steps

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/results"
)

// saturatedEnv turns on TestSaturatedMachine, which loads every core of
// the machine eight times over for minutes: plain `go test ./...` does not
// pay for it; .ci/run sets it.
const saturatedEnv = "DPULAB_SATURATED"

// TestSaturatedMachine is issue 30's "correct on a saturated machine": with
// the CPU oversubscribed eight times (8 busy processes per core, started
// and stopped here), (a) the quickstart runs headless as `dpulab run
// quickstart --yes` would, as root (its offload step makes namespaces),
// and (b) a 2 × 30-instance deploy on two hosts reached through a real
// OpenSSH sshd with its default MaxSessions (10), then its stop. Both must
// finish, and nothing of theirs may be left: no server, bench or sampler
// process, no namespace, no working directory. The figures (wall time of
// each part, load average seen, instances started and stopped) are logged.
func TestSaturatedMachine(t *testing.T) {
	if os.Getenv(saturatedEnv) != "1" {
		t.Skip("loads the CPU eight times over for minutes: set " + saturatedEnv + "=1 to run it (.ci/run does)")
	}
	testpeer.RequireNetns(t, "run it as root: the quickstart's offload step makes network namespaces")
	yes := testpeer.Require(t, "yes")
	// OpenSSH's default MaxSessions: no config line.
	sshd := testpeer.StartSSHD(t)
	bin := dpulabBinary(t)

	busy := startBusy(t, yes, 8*runtime.NumCPU())
	t.Logf("load: %d busy processes on %d cores; load average %s at the start", busy.n, runtime.NumCPU(), loadavg())

	t.Run("quickstart", func(t *testing.T) { saturatedQuickstart(t, bin, busy) })
	t.Run("deploy 2x30 over sshd", func(t *testing.T) { saturatedDeploy(t, bin, sshd, busy) })

	busy.stop()
	// Nothing of ours runs any more: no process carries the binary's path
	// (servers, benches and samplers started here run from it or from a
	// working directory checked by each part).
	if left := procsCarrying(t, bin); len(left) > 0 {
		t.Errorf("%d processes of dpulab left, e.g. %s", len(left), left[0])
	}
}

// saturatedQuickstart runs `dpulab run quickstart --yes` under load, with
// shorter timed runs, two instances and a 200-rule firewall instead of
// the defaults (every step is still there) so that the part takes minutes:
// under this load the default quickstart took 7-11 minutes.
func saturatedQuickstart(t *testing.T, bin string, busy *busyLoad) {
	port := freePorts(t, 4)
	ctx := testCtx(t, 20*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "run", "quickstart", "--yes",
		"--set", "port="+strconv.Itoa(port), "--set", "duration=2s", "--set", "warmup=0s", "--set", "runs=2",
		"--set", "instances=2", "--set", "firewall_rules=200")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(), "NO_COLOR=1")
	out := &testpeer.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// An interrupted test interrupts the run as a person would (it then
	// cleans up), and never waits for it forever.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Minute

	mark := busy.mark()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	peak, mean := busy.since(mark)
	text := out.String()
	started := strings.Count(text, "started server:")
	stopped := strings.Count(text, "stopped server:")
	t.Logf("quickstart: %s wall, exit %v; load average (1 min) seen: peak %.1f, mean %.1f; %d server starts, %d stops", wall.Round(time.Second), exitOf(err), peak, mean, started, stopped)
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, " done in ") || strings.Contains(l, "FAILED") {
			t.Logf("quickstart %s", strings.TrimSpace(l))
		}
	}
	if err != nil {
		t.Fatalf("dpulab run quickstart --yes under load: %v\n%s", err, lastN(text, 60))
	}
	if !strings.Contains(text, "results (complete)") {
		t.Errorf("the quickstart's results are not complete:\n%s", lastN(text, 40))
	}
	if started == 0 || started != stopped {
		t.Errorf("%d server starts but %d stops", started, stopped)
	}
	wd := regexp.MustCompile(`/tmp/dpulab-quickstart-[0-9a-z]+-[0-9a-f]+`).FindString(text)
	if wd == "" {
		t.Fatalf("no working directory named in the output:\n%s", lastN(text, 40))
	}
	if left := procsCarrying(t, wd); len(left) > 0 {
		t.Errorf("%d processes of the quickstart left, e.g. %s", len(left), left[0])
	}
	if _, err := os.Stat(wd); !os.IsNotExist(err) {
		t.Errorf("the quickstart left %s (stat: %v)", wd, err)
	}
	// The namespaces its offload step made are gone.
	made := map[string]bool{}
	for _, ns := range regexp.MustCompile(`\bdpulab-[0-9a-z]+-(?:srv|cli)\b`).FindAllString(text, -1) {
		made[ns] = true
	}
	if len(made) == 0 {
		t.Errorf("the offload step made no namespace (did it run as root?):\n%s", lastN(text, 40))
	}
	for _, ns := range netnsList(t) {
		if made[ns] {
			t.Errorf("namespace %s of the quickstart left", ns)
		}
	}
}

// saturatedDeploy deploys two groups of 30 instances, one per host, both
// hosts 127.0.0.1 through one sshd with its default MaxSessions, then
// cleans up, as `dpulab run` does (Run, with its default cleanup limit).
func saturatedDeploy(t *testing.T, bin string, sshd *testpeer.SSHD, busy *busyLoad) {
	const perHost = 30
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	var inv strings.Builder
	fmt.Fprintf(&inv, "known_hosts: %s\nhosts:\n", sshd.KnownHosts)
	for _, h := range []string{"a", "b"} {
		fmt.Fprintf(&inv, "  - name: host-%s\n    address: 127.0.0.1\n    port: %d\n    user: %s\n    identity: %s\n    roles: [%s]\n", h, sshd.Port, u.Username, sshd.UserKey, h)
	}
	invPath := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(invPath, []byte(inv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	port := freePorts(t, 2*perHost)
	lab := loadLab(t, fmt.Sprintf(`
id: saturated
title: Saturated
summary: two hosts, thirty servers each, on a saturated machine
duration: 5m
roles:
  a: the first lab host
  b: the second lab host
steps:
  - id: deploy-a
    title: Group a
    kind: deploy
    on: [a]
    group: a
    instances: "%d"
    port: "%d"
  - id: deploy-b
    title: Group b
    kind: deploy
    on: [b]
    group: b
    instances: "%d"
    port: "%d"
`, perHost, port, perHost, port+perHost))
	rec := &recorder{}
	var mu sync.Mutex
	var deployed time.Time
	var running int
	e := newEngine(t, lab, Options{Binary: bin, Inventory: in, Yes: true}, nil)
	e.opts.Emit = func(ev Event) {
		rec.emit(ev)
		if f, ok := ev.(StepFinished); ok && f.Step == "deploy-b" {
			mu.Lock()
			deployed = time.Now()
			// What runs at the end of the deploys, counted by their
			// command lines.
			running = countServers(t, e.workdir())
			mu.Unlock()
		}
	}
	mark := busy.mark()
	start := time.Now()
	err = e.Run(testCtx(t, 20*time.Minute))
	end := time.Now()
	mu.Lock()
	deployWall, stopWall, up := deployed.Sub(start), end.Sub(deployed), running
	mu.Unlock()
	peak, mean := busy.since(mark)
	text := strings.Join(rec.output(), "\n")
	started := strings.Count(text, "started server:")
	stopped := strings.Count(text, "stopped server:")
	if deployed.IsZero() {
		deployWall, stopWall = end.Sub(start), 0
	}
	t.Logf("deploy 2x%d over sshd (default MaxSessions): deploy %s wall, stop and cleanup %s wall; load average (1 min) seen: peak %.1f, mean %.1f; %d instances started, %d running after the deploys, %d stopped",
		perHost, deployWall.Round(time.Second), stopWall.Round(time.Second), peak, mean, started, up, stopped)
	if err != nil {
		t.Errorf("2 × %d instances under load: %v\n%s", perHost, err, lastN(text, 40))
	}
	for _, bad := range []string{"deadline exceeded", "open failed", "may still run"} {
		if strings.Contains(text, bad) {
			t.Errorf("the output says %q:\n%s", bad, lastN(text, 40))
		}
	}
	if started != 2*perHost || up != 2*perHost || stopped != 2*perHost {
		t.Errorf("%d started, %d running after the deploys, %d stopped: want %d each", started, up, stopped, 2*perHost)
	}
	if left := procsCarrying(t, e.workdir()); len(left) > 0 {
		t.Errorf("%d processes left after the stop, e.g. %s", len(left), left[0])
	}
	st, _ := LoadState(e.StatePath())
	if st == nil || len(st.Procs) != 0 || st.Status != results.RunComplete {
		t.Errorf("saved progress after the run: %+v", st)
	}
	if _, err := os.Stat(e.workdir()); !os.IsNotExist(err) {
		t.Errorf("the run left %s (stat: %v)", e.workdir(), err)
	}
}

// countServers counts the server processes started from workdir.
func countServers(t testing.TB, workdir string) int {
	n := 0
	for _, p := range procsCarrying(t, workdir) {
		// The leader shell names the log too: count the servers
		// themselves, "DPULAB server --config ...".
		if strings.Contains(p, "/dpulab server ") && !strings.Contains(p, "dpulab-start") && !strings.Contains(p, "sh -c") {
			n++
		}
	}
	return n
}

// busyLoad is the test's CPU load: busy processes it started and stops on
// every exit path (t.Cleanup; and SIGKILL from the kernel should the test
// binary die, Pdeathsig), and a sampler of the load average.
type busyLoad struct {
	n    int
	mu   sync.Mutex
	cmds []*exec.Cmd
	// loads are the 1-minute load averages sampled every 2 s.
	loads []float64
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once
}

func startBusy(t *testing.T, yes string, n int) *busyLoad {
	b := &busyLoad{n: n, quit: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(b.stop)
	for i := 0; i < n; i++ {
		c := exec.Command(yes) // output to /dev/null: pure CPU
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			t.Fatalf("start busy process %d: %v", i, err)
		}
		b.mu.Lock()
		b.cmds = append(b.cmds, c)
		b.mu.Unlock()
	}
	go func() {
		defer close(b.done)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			if l, err := strconv.ParseFloat(strings.Fields(loadavg() + " x")[0], 64); err == nil {
				b.mu.Lock()
				b.loads = append(b.loads, l)
				b.mu.Unlock()
			}
			select {
			case <-b.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return b
}

// stop ends the busy processes and the sampler (once).
func (b *busyLoad) stop() {
	b.once.Do(func() {
		close(b.quit)
		<-b.done
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
}

// mark is where a part's samples start; since gives their peak and mean.
func (b *busyLoad) mark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.loads)
}

func (b *busyLoad) since(mark int) (peak, mean float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ls := b.loads[min(mark, len(b.loads)):]
	if len(ls) == 0 {
		return 0, 0
	}
	sum := 0.0
	for _, l := range ls {
		sum += l
	}
	return slices.Max(ls), sum / float64(len(ls))
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// netnsList lists this machine's named network namespaces.
func netnsList(t testing.TB) []string {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatalf("ip netns list: %v", err)
	}
	var ns []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			ns = append(ns, f[0])
		}
	}
	return ns
}

func exitOf(err error) string {
	if err == nil {
		return "0"
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return strconv.Itoa(ee.ExitCode())
	}
	return err.Error()
}

func lastN(s string, n int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
