//go:build unix

package steps

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/results"
)

const redisServerLab = `
id: realredis
title: Real Redis
summary: the distribution's redis-server against the bundled server
duration: 1m
roles:
  local: this machine
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
    instances: "2"
    port: "%d"
    config: assets/redis.conf.tmpl
    server: redis-server
  - id: compare
    title: Redis and ours
    kind: compare
    target: g
    clients: 1
    pipeline: 4
    key_maximum: 100
    duration: 1s
    runs: 1
    variants:
      - label: redis-server
      - label: bundled
        deploy:
          server: bundled
  - id: cleanup
    title: Cleanup
    kind: cleanup
    run: "true"
`

// TestDeployRedisServer deploys two instances of Debian's redis-server on
// this machine with the lab's config template, benches them beside the
// bundled server, and cleans up: the results say which server ran and its
// version (as redis-server --version says it), and no redis-server of the
// run is left.
func TestDeployRedisServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dpulab and runs redis-server")
	}
	redis := testpeer.Require(t, "redis-server")
	out, err := exec.Command(redis, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`v=([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("redis-server --version: %q", out)
	}
	want := "redis-server " + string(m[1])
	bin := dpulabBinary(t)
	port := freePorts(t, 2)
	lab := loadLab(t, fmt.Sprintf(redisServerLab, port))
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	e := newEngine(t, lab, Options{Binary: bin, ResultsDir: resDir}, rec)
	if err := e.Run(testCtx(t, 3*time.Minute)); err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	// The deploy step's commands start redis-server with the instance's
	// rendered config.
	var pids []int
	startedRE := regexp.MustCompile(`^started server:g:\d+ \(pid (\d+)\)`)
	for _, l := range rec.output() {
		if m := startedRE.FindStringSubmatch(l); m != nil {
			pid, _ := strconv.Atoi(m[1])
			pids = append(pids, pid)
		}
	}
	// deploy: 2 redis-server; bundled: 2 of ours.
	if len(pids) != 4 {
		t.Errorf("%d server starts, want 4:\n%s", len(pids), strings.Join(rec.output(), "\n"))
	}
	if said := "group g runs " + want + " (INFO server)"; !containsLine(rec.output(), said) {
		t.Errorf("the deploy did not say %q:\n%s", said, strings.Join(rec.output(), "\n"))
	}
	var planned []string
	for _, ev := range rec.events() {
		if s, ok := ev.(StepStarted); ok && s.Step == "deploy" {
			for _, c := range s.Commands {
				planned = append(planned, c.Cmd)
			}
		}
	}
	conf := e.workdir() + "/g-" + strconv.Itoa(port) + "/redis.conf"
	if wantCmd := "exec redis-server " + conf + " --port " + strconv.Itoa(port); !containsLine(planned, wantCmd) {
		t.Errorf("deploy's commands lack %q:\n%s", wantCmd, strings.Join(planned, "\n"))
	}

	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Benches) != 1 || len(r.Benches[0].Variants) != 2 {
		t.Fatalf("benches = %+v", r.Benches)
	}
	vs := r.Benches[0].Variants
	if got := vs[0].Settings["server"]; got != want {
		t.Errorf("variant %s: settings[server] = %q, want %q (settings %v)", vs[0].Label, got, want, vs[0].Settings)
	}
	if got, ok := vs[1].Settings["server"]; ok {
		t.Errorf("variant %s ran the bundled server, but its settings say server=%q", vs[1].Label, got)
	}
	for _, v := range vs {
		if len(v.Points) != 1 || v.Points[0].Stats.OpsPerSec.Mean <= 0 {
			t.Errorf("variant %s: no TPS measured: %+v", v.Label, v.Points)
		}
	}
	md, err := os.ReadFile(filepath.Join(resDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "server="+want) {
		t.Errorf("report.md does not say server=%s:\n%s", want, md)
	}

	// Cleanup left nothing: no recorded process, no process group, nothing
	// answering on the ports, no redis-server titled with them.
	st, _ := LoadState(e.StatePath())
	if st != nil && len(st.Procs) != 0 {
		t.Errorf("processes still recorded after cleanup: %+v", st.Procs)
	}
	for _, pid := range pids {
		// A zombie (state Z) has ended; its parent reaps it later.
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); err == nil && len(f) > 0 && f[0] != "Z" {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			t.Errorf("pid %d still runs after cleanup (state %s): %q", pid, f[0], cmdline)
		}
	}
	if left := procsCarrying(t, e.workdir()); len(left) > 0 {
		t.Errorf("%d processes left after cleanup, e.g. %s", len(left), left[0])
	}
	for k := 0; k < 2; k++ {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port+k))
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after cleanup", addr)
		}
		if left := procsCarrying(t, "redis-server 127.0.0.1:"+strconv.Itoa(port+k)); len(left) > 0 {
			t.Errorf("redis-server left on port %d: %s", port+k, left[0])
		}
	}
}

func containsLine(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

const valkeyLab = `
id: valkey
title: Valkey
summary: valkey-server where it may be missing
duration: 1m
roles:
  web: web servers
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    on: [web]
    group: g
    instances: "1"
    port: "7000"
    server: valkey-server
`

// valkeyFake is a host without valkey-server (until something runs the
// install command) whose package manager is pm.
func valkeyFake(pm string) *fakeTarget {
	f := serverFake("a")
	base := f.handle
	installed := false
	f.handle = func(cmd string) ([]string, int) {
		switch {
		case cmd == deploy.DetectPMCmd:
			return []string{pm}, 0
		case strings.Contains(cmd, " install -y "):
			installed = true
			return []string{"installed"}, 0
		case cmd == "command -v valkey-server":
			if installed {
				return []string{"/usr/bin/valkey-server"}, 0
			}
			return nil, 1
		case cmd == "valkey-server --version":
			return []string{"Valkey server v=8.1.1 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=0"}, 0
		}
		// The server's start and PING: as for the bundled server.
		return base(cmd)
	}
	return f
}

// TestValkeyMissingIsInstalledOnlyAfterYes: the plan (and so the dry run)
// shows the install command, with sudo, and that it asks first; a run on a
// host without valkey asks with the command for that host's package
// manager, and installs nothing on "no". Nothing is really installed: the
// host is a fake.
func TestValkeyMissingIsInstalledOnlyAfterYes(t *testing.T) {
	t.Run("plan", func(t *testing.T) {
		e := fakeLab(t, valkeyLab, map[string]*fakeTarget{"a": valkeyFake("apt-get")}, &recorder{})
		cmds, err := e.Plan(0)
		if err != nil {
			t.Fatal(err)
		}
		if len(cmds) != 2 || !cmds[0].Sudo {
			t.Fatalf("plan = %+v, want the install (with sudo) and one start", cmds)
		}
		for _, want := range []string{"command -v valkey-server", "apt-get install -y valkey-server", "dnf install -y valkey", "only after a confirmation"} {
			if !strings.Contains(cmds[0].Cmd, want) {
				t.Errorf("install command %q lacks %q", cmds[0].Cmd, want)
			}
		}
		if !strings.Contains(cmds[1].Cmd, "exec valkey-server ") {
			t.Errorf("start command %q", cmds[1].Cmd)
		}
	})
	for _, tc := range []struct {
		pm, answer, cmd string
	}{
		{"apt-get", "no", "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y valkey-server"},
		{"dnf", "no", "sudo dnf install -y valkey"},
		{"apt-get", "yes", "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y valkey-server"},
	} {
		t.Run(tc.pm+"-"+tc.answer, func(t *testing.T) {
			f := valkeyFake(tc.pm)
			var asked []string
			rec := &recorder{onPrompt: func(p Prompt) {
				asked = append(asked, p.Message)
				p.Reply(Answer{Choice: tc.answer})
			}}
			e := fakeLab(t, valkeyLab, map[string]*fakeTarget{"a": f}, rec)
			e.opts.Yes = false
			st := e.RunStep(testCtx(t, 30*time.Second), 0)
			if len(asked) != 1 || !strings.Contains(asked[0], tc.cmd) {
				t.Fatalf("asked %q, want one question naming %q", asked, tc.cmd)
			}
			ran := containsLine(f.commands(), " install -y ")
			if tc.answer == "no" {
				if st != results.Failed || ran {
					t.Errorf("answered no: step %v, install ran: %v", st, ran)
				}
				if msg := rec.finished()["deploy"].Err; !strings.Contains(msg, "not confirmed") {
					t.Errorf("error %q does not say it was not confirmed", msg)
				}
				if len(f.started) != 0 {
					t.Errorf("%d servers started without valkey-server", len(f.started))
				}
				return
			}
			if st != results.Done || !ran || len(f.started) != 1 {
				t.Errorf("answered yes: step %v (%s), install ran: %v, %d started", st, rec.finished()["deploy"].Err, ran, len(f.started))
			}
		})
	}
}

// TestServerRefusals: a valkey that does not say it was built with RDMA
// is refused at deploy (what the file or a variant's override asks of a
// server is refused before, by steps/kinds/deploy's TestServerRefusals).
func TestServerRefusals(t *testing.T) {
	// A valkey that does not say RDMA is refused at deploy.
	f := valkeyFake("apt-get")
	f.handle("x install -y x") // installed
	e := fakeLab(t, strings.Replace(valkeyLab, "server: valkey-server", "server: valkey-server\n    settings:\n      rdma-port: \"7000\"", 1), map[string]*fakeTarget{"a": f}, &recorder{})
	if s := e.RunStep(testCtx(t, 30*time.Second), 0); s != results.Failed || len(f.started) != 0 {
		t.Errorf("valkey without RDMA serving rdma-port: step %v, %d started", s, len(f.started))
	}
}

// TestDryRunShowsServerCommands: a dry run of a redis-server deploy shows,
// for this machine, the look-up and the install that would ask first, and
// the start of each instance, and does nothing.
func TestDryRunShowsServerCommands(t *testing.T) {
	lab := loadLab(t, fmt.Sprintf(redisServerLab, 7000))
	rec := &recorder{}
	e := newEngine(t, lab, Options{DryRun: true}, rec)
	if err := e.Run(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	var cmds []string
	for _, ev := range rec.events() {
		if s, ok := ev.(StepStarted); ok && s.Step == "deploy" {
			for _, c := range s.Commands {
				sudo := ""
				if c.Sudo {
					sudo = "sudo "
				}
				cmds = append(cmds, c.Host+": "+sudo+c.Cmd)
			}
		}
	}
	conf := func(port int) string { return fmt.Sprintf("%s/g-%d/redis.conf", e.workdir(), port) }
	want := []string{
		"local: sudo command -v redis-server >/dev/null 2>&1 || if command -v apt-get >/dev/null 2>&1; then DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; else dnf install -y redis; fi # only after a confirmation: install redis-server?",
		"local: exec redis-server " + conf(7000) + " --port 7000",
		"local: exec redis-server " + conf(7001) + " --port 7001",
	}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("dry run shows:\n%s\nwant:\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
	}
	if containsLine(rec.output(), "started ") {
		t.Errorf("the dry run started something:\n%s", strings.Join(rec.output(), "\n"))
	}
}
