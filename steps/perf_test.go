//go:build perf

package steps

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner"
)

// perfHosts is how many server hosts the deploy perf test uses, the
// issue's three.
const perfHosts = 3

// TestPerfDeployManyInstances prints how long the engine takes to deploy N
// instances of the bundled server (N = 10, 40, 80) on each of three lab
// hosts, every host a real sshd on this machine (OpenSSH's default
// MaxSessions 10), beside two yardsticks run the same way at the same
// moment of the test: the same count of Debian's redis-server, and of
// `dpulab server`, each started by a plain shell loop over one ssh session
// per host (OpenSSH's client) that then waits until every one answers
// redis-cli PING. It asserts that every deploy worked, never how fast: the
// machine is shared.
//
// One port range cannot serve three hosts that are one machine, so each
// host is a deploy plan (group) of its own and the three plans are
// deployed at once, as one plan over three hosts deploys its hosts at once
// (deploy's per-host goroutines). The goal: 80 instances on 3
// hosts in under 30 s. DPULAB_PERF_ENGINE_ONLY=1 skips the yardsticks
// (their columns then read "skipped"), for a quicker look at the engine
// alone.
func TestPerfDeployManyInstances(t *testing.T) {
	redisServer := testpeer.Require(t, "redis-server")
	redisCLI := testpeer.Require(t, "redis-cli")
	sshClient := testpeer.Require(t, "ssh")
	bin := dpulabBinary(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	counts := []int{10, 40, 80}
	maxN := counts[len(counts)-1]

	sshds := make([]*testpeer.SSHD, perfHosts)
	var inv, roles, steps strings.Builder
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	fmt.Fprintf(&inv, "known_hosts: %s\nhosts:\n", knownHosts)
	var kh []byte
	ports := make([]int, perfHosts)
	for i := range sshds {
		sshds[i] = testpeer.StartSSHD(t)
		s := sshds[i]
		b, err := os.ReadFile(s.KnownHosts)
		if err != nil {
			t.Fatal(err)
		}
		kh = append(kh, b...)
		fmt.Fprintf(&inv, "  - name: host%d\n    address: 127.0.0.1\n    port: %d\n    user: %s\n    identity: %s\n    roles: [s%d]\n",
			i, s.Port, u.Username, s.UserKey, i)
		fmt.Fprintf(&roles, "  s%d: server host %d\n", i, i)
		ports[i] = freePorts(t, maxN)
		fmt.Fprintf(&steps, "  - id: deploy-%d\n    title: Host %d\n    kind: deploy\n    on: [s%d]\n    group: g%d\n    instances: \"{{.vars.n}}\"\n    port: \"%d\"\n", i, i, i, i, ports[i])
	}
	if err := os.WriteFile(knownHosts, kh, 0o600); err != nil {
		t.Fatal(err)
	}
	invPath := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(invPath, []byte(inv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := runner.LoadInventory(invPath)
	if err != nil {
		t.Fatalf("inventory: %v\n%s", err, inv.String())
	}
	lab := loadLab(t, fmt.Sprintf(`
id: perfdeploy
title: Deploy at scale
summary: many instances on three hosts
duration: 5m
roles:
%svariables:
  n: {type: int, default: 1, min: 1, max: 512, description: Instances per host.}
steps:
%s`, roles.String(), steps.String()))
	rec := &recorder{}
	e := newEngine(t, lab, Options{Binary: bin, Inventory: in, Yes: true}, rec)
	ctx := testCtx(t, 15*time.Minute)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := e.Cleanup(cctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if left := procsCarrying(t, e.workdir()); len(left) > 0 {
			t.Errorf("%d processes left after cleanup, e.g. %s", len(left), left[0])
		}
	})

	// deployAll deploys n instances on every host at once and returns the
	// wall time until the last one answered PING.
	deployAll := func(n int) time.Duration {
		t.Helper()
		vars := e.Vars()
		vars["n"] = strconv.Itoa(n)
		plans := make([]deployPlan, perfHosts)
		for i := range plans {
			st, err := e.deployStepFor(fmt.Sprintf("g%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if plans[i], err = e.planDeploy(st, vars, nil); err != nil {
				t.Fatal(err)
			}
			// The previous count's servers go first, outside the time.
			if err := e.stopGroup(ctx, plans[i].Group); err != nil {
				t.Fatalf("stop %s: %v", plans[i].Group, err)
			}
		}
		errs := make([]error, perfHosts)
		var wg sync.WaitGroup
		start := time.Now()
		for i, p := range plans {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = e.deploy(ctx, p.Step, p)
			}()
		}
		wg.Wait()
		took := time.Since(start)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("deploy %d instances on host%d: %v", n, i, err)
			}
		}
		e.mu.Lock()
		got := 0
		for _, p := range e.state.Procs {
			if strings.HasPrefix(p.Name, "server:g") {
				got++
			}
		}
		e.mu.Unlock()
		if got != n*perfHosts {
			t.Fatalf("%d server processes recorded after deploying %d on %d hosts", got, n, perfHosts)
		}
		return took
	}

	// The first deploy uploads dpulab and opens the connections: timed
	// apart, with one instance per host.
	first := deployAll(1)
	t.Logf("first deploy (connect, upload dpulab %s, 1 instance per host): %s", sizeOf(bin), first.Round(time.Millisecond))

	loopDir := t.TempDir()
	// yard runs a yardstick; a failed one (a server not up within two
	// minutes) is said and left out of the table, not fatal.
	yard := func(name string, n int, startCmd func(port int, dir string) string) time.Duration {
		t.Helper()
		errs := make([]error, perfHosts)
		var wg sync.WaitGroup
		start := time.Now()
		for i, s := range sshds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dir := filepath.Join(loopDir, fmt.Sprintf("%s-%d-%d", name, n, i))
				base := ports[i] // the engine's servers are stopped: their ports are free
				var sb strings.Builder
				fmt.Fprintf(&sb, "set -e\nmkdir -p %s\n", runner.Quote(dir))
				fmt.Fprintf(&sb, "for p in $(seq %d %d); do\n  mkdir -p %s/$p\n  %s\ndone\n", base, base+n-1, runner.Quote(dir), startCmd(0, runner.Quote(dir)+"/$p"))
				fmt.Fprintf(&sb, "for p in $(seq %d %d); do\n  i=0; until [ \"$(%s -p $p ping 2>/dev/null)\" = PONG ]; do i=$((i+1)); [ $i -lt 2400 ] || { echo \"port $p not up\" >&2; exit 1; }; sleep 0.05; done\ndone\n", base, base+n-1, runner.Quote(redisCLI))
				errs[i] = sshScript(ctx, sshClient, u.Username, s, sb.String())
			}()
		}
		wg.Wait()
		took := time.Since(start)
		// Stop them (outside the time), whatever happened.
		for i, s := range sshds {
			dir := filepath.Join(loopDir, fmt.Sprintf("%s-%d-%d", name, n, i))
			stop := fmt.Sprintf("for f in %s/*/pid; do [ -s \"$f\" ] && kill \"$(cat \"$f\")\" 2>/dev/null || true; done; sleep 0.5; for f in %s/*/pid; do [ -s \"$f\" ] && kill -9 \"$(cat \"$f\")\" 2>/dev/null || true; done; true", runner.Quote(dir), runner.Quote(dir))
			if err := sshScript(ctx, sshClient, u.Username, s, stop); err != nil {
				t.Errorf("stop the %s yardstick on host%d: %v", name, i, err)
			}
		}
		for i, err := range errs {
			if err != nil {
				t.Logf("%s yardstick, %d on host%d failed: %v", name, n, i, err)
				return 0
			}
		}
		return took
	}
	redisLoop := func(n int) time.Duration {
		return yard("redis", n, func(_ int, dir string) string {
			return runner.Quote(redisServer) + ` --port "$p" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no --dir ` + dir + ` --pidfile ` + dir + `/pid --logfile ` + dir + `/log`
		})
	}
	dpulabLoop := func(n int) time.Duration {
		return yard("dpulab", n, func(_ int, dir string) string {
			return "(" + runner.Quote(bin) + ` server --port "$p" --bind 127.0.0.1 --pidfile ` + dir + `/pid >` + dir + `/log 2>&1 </dev/null &)`
		})
	}

	type row struct {
		n                   int
		engine, redis, dpul time.Duration
	}
	var rows []row
	yardsticks := os.Getenv("DPULAB_PERF_ENGINE_ONLY") == ""
	for _, n := range counts {
		r := row{n: n}
		if yardsticks {
			r.redis = redisLoop(n)
			r.dpul = dpulabLoop(n)
		}
		r.engine = deployAll(n)
		rows = append(rows, r)
		t.Logf("N=%d per host (%d in all): engine %s, shell loop redis-server %s, shell loop dpulab server %s", n, n*perfHosts,
			r.engine.Round(time.Millisecond), r.redis.Round(time.Millisecond), r.dpul.Round(time.Millisecond))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "deploy on %d sshd hosts on this machine (%d cores), all hosts at once; wall time until every instance answers PING\n", perfHosts, runtime.NumCPU())
	fmt.Fprintf(&b, "%-6s %-8s %-10s %-18s %-18s %-14s %-14s\n", "N/host", "total", "engine", "loop redis-server", "loop dpulab server", "engine/redis", "engine/dpulab")
	cell := func(d time.Duration) string {
		if d == 0 && !yardsticks {
			return "skipped"
		}
		if d == 0 {
			return "failed"
		}
		return d.Round(time.Millisecond).String()
	}
	ratio := func(a, b time.Duration) string {
		if b == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2fx", a.Seconds()/b.Seconds())
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%-6d %-8d %-10s %-18s %-18s %-14s %-14s\n", r.n, r.n*perfHosts, cell(r.engine), cell(r.redis), cell(r.dpul), ratio(r.engine, r.redis), ratio(r.engine, r.dpul))
	}
	last := rows[len(rows)-1]
	verdict := "met"
	if last.engine >= 30*time.Second {
		verdict = "NOT met"
	}
	fmt.Fprintf(&b, "goal (issue 17): %d instances on %d hosts in under 30 s: %s (%s)\n", last.n, perfHosts, verdict, last.engine.Round(time.Millisecond))
	t.Log("\n" + b.String())
}

// sshScript runs script through OpenSSH's client on sshd s, as a person's
// shell loop would: one connection, one session, the script on stdin.
func sshScript(ctx context.Context, client, userName string, s *testpeer.SSHD, script string) error {
	cmd := exec.CommandContext(ctx, client, "-F", "/dev/null", "-p", strconv.Itoa(s.Port), "-i", s.UserKey,
		"-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile="+s.KnownHosts, "-o", "GlobalKnownHostsFile=/dev/null",
		userName+"@127.0.0.1", "sh -s")
	cmd.Stdin = strings.NewReader(script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

func sizeOf(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MB", float64(fi.Size())/1e6)
}
