package netpath

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testpeer.RemoveBuilds()
	os.Exit(code)
}

// dpulabBin is the dpulab binary the tests run: DPULAB_TEST_BIN when set
// (a perf run on a shared tree, built from a known commit), else a build
// of this tree.
func dpulabBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("DPULAB_TEST_BIN"); b != "" {
		return b
	}
	return testpeer.Agent(t)
}

// requireKernel skips (or, with DPULAB_REQUIRE_PEERS=1, fails) a test that
// makes real namespaces when this machine cannot: not root, or no ip/nft.
func requireKernel(t *testing.T) *runner.Local {
	t.Helper()
	testpeer.RequireNetns(t, "run these tests as root (sudo go test ./runner/netpath/)")
	return runner.NewLocal()
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// shOK runs cmd locally and fails the test unless it exits 0.
func shOK(t *testing.T, ctx context.Context, l runner.Target, cmd string) string {
	t.Helper()
	r, err := sh(ctx, l, false, cmd, nil)
	if err != nil || r.code != 0 {
		t.Fatalf("%s: err %v, exit %d: %s", cmd, err, r.code, said(r))
	}
	return r.stdout
}

// assertGone checks, the way a person would, that nothing named with
// prefix is left: `ip netns list`, `ip -br link`, `nft list tables`.
func assertGone(t *testing.T, ctx context.Context, l runner.Target, prefix string) {
	t.Helper()
	for _, cmd := range []string{"ip netns list", "ip -br link", "nft list tables"} {
		out := shOK(t, ctx, l, cmd)
		for _, line := range strings.Split(out, "\n") {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, prefix) {
					t.Errorf("after cleanup `%s` still shows %s:\n%s", cmd, f, out)
				}
			}
		}
	}
}

// alive reports whether pid is a running process (a zombie, killed and
// not yet reaped by its parent, is not).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name's closing parenthesis.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

// server is the bundled server running in a path's server namespace.
type server struct {
	proc runner.Proc
	addr string
	port string
}

func startServer(t *testing.T, ctx context.Context, l *runner.Local, p *Path) server {
	t.Helper()
	return startServerPinned(t, ctx, l, p, "")
}

// pinned prefixes argv with taskset for cpu, unless cpu is empty.
func pinned(cpu string, argv ...string) []string {
	if cpu == "" {
		return argv
	}
	return append([]string{"taskset", "-c", cpu}, argv...)
}

// startServerPinned is startServer with the server on cpu ("" = anywhere).
func startServerPinned(t *testing.T, ctx context.Context, l *runner.Local, p *Path, cpu string) server {
	t.Helper()
	bin := dpulabBin(t)
	s := server{addr: p.ServerAddr.String(), port: "6399"}
	dir := t.TempDir()
	// The client comes from another address than loopback: protected
	// mode off, as a lab deploying into the path must do (the address
	// exists only in the namespaces the path made).
	conf := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(conf, []byte("protected-mode no\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	proc, err := l.Start(ctx, runner.ProcSpec{
		Name:    "server",
		Cmd:     p.ServerExec() + " " + runner.QuoteAll(pinned(cpu, bin, "server", "--config", conf, "--bind", s.addr, "--port", s.port)...),
		LogFile: filepath.Join(dir, "server.log"),
	})
	if err != nil {
		t.Fatalf("start server in %s: %v", p.ServerNS, err)
	}
	s.proc = proc
	t.Cleanup(func() { _ = l.Stop(context.Background(), proc, 2*time.Second) })
	// Ready when it answers PING from the client's namespace; a bounded
	// number of tries, not a timed assertion.
	ping := p.InClient(runner.QuoteAll(testpeer.Require(t, "redis-cli"), "-h", s.addr, "-p", s.port, "PING"))
	for i := 0; ; i++ {
		r, err := sh(ctx, l, false, ping, nil)
		if err == nil && strings.TrimSpace(r.stdout) == "PONG" {
			return s
		}
		if i == 200 || strings.TrimSpace(r.stdout) != "" {
			log, _ := os.ReadFile(proc.LogFile)
			t.Fatalf("server in %s never answered PING from %s (last: %v %s); its log:\n%s", p.ServerNS, p.ClientNS, err, said(r), log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// benchSummary is the part of `dpulab bench --json`'s summary line read here.
type benchSummary struct {
	OpsPerSec float64 `json:"ops_per_sec"`
	Ops       uint64  `json:"ops"`
	Errors    uint64  `json:"errors"`
	Latency   map[string]float64
}

// runBench runs `dpulab bench` in the client namespace with args.
func runBench(t *testing.T, ctx context.Context, l runner.Target, p *Path, s server, args ...string) benchSummary {
	t.Helper()
	return runBenchPinned(t, ctx, l, p, s, "", args...)
}

// runBenchPinned is runBench with the load generator on cpu ("" = anywhere).
func runBenchPinned(t *testing.T, ctx context.Context, l runner.Target, p *Path, s server, cpu string, args ...string) benchSummary {
	t.Helper()
	bin := dpulabBin(t)
	argv := pinned(cpu, append([]string{bin, "bench", "-s", s.addr, "-p", s.port, "--json"}, args...)...)
	r, err := sh(ctx, l, false, p.ClientExec()+" "+runner.QuoteAll(argv...), nil)
	if err != nil || r.code != 0 {
		t.Fatalf("bench over %s: err %v, exit %d: %s", p.Variant, err, r.code, said(r))
	}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Type string `json:"type"`
			benchSummary
			LatencyMS map[string]float64 `json:"latency_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Type == "summary" {
			line.benchSummary.Latency = line.LatencyMS
			return line.benchSummary
		}
	}
	t.Fatalf("bench over %s printed no summary:\n%s", p.Variant, r.stdout)
	return benchSummary{}
}

// TestVariantsCarryTraffic makes each path for real, drives the bundled
// server through it with the bundled load generator, and checks that the
// counters tell the paths apart: encapsulation only on the overlay, the
// firewall only where there is one; then that Teardown leaves nothing.
func TestVariantsCarryTraffic(t *testing.T) {
	l := requireKernel(t)
	testpeer.Require(t, "redis-cli")
	ctx := testCtx(t)
	for _, v := range Variants() {
		t.Run(string(v), func(t *testing.T) {
			p, err := Make(ctx, l, Config{Variant: v, FirewallRules: 100})
			if err != nil {
				t.Fatal(err)
			}
			prefix := RunPrefix(p.RunID)
			torn := false
			t.Cleanup(func() {
				if !torn {
					_ = p.Teardown(context.Background(), l)
				}
			})
			for _, name := range []string{p.ServerNS, p.ClientNS, p.ServerLink, p.ClientLink, p.ServerEncapDev, p.ClientEncapDev, p.FirewallTable} {
				if name != "" && !strings.HasPrefix(name, prefix) {
					t.Errorf("object %q is not named with %q", name, prefix)
				}
			}
			if !p.ServerAddr.IsValid() || !strings.HasPrefix(p.ServerAddr.String(), "198.1") {
				t.Errorf("server address %v is not from 198.18.0.0/15", p.ServerAddr)
			}
			// Nothing in the host's own namespace, even while the path
			// exists.
			if out := shOK(t, ctx, l, "ip -br link; nft list tables"); strings.Contains(out, prefix) {
				t.Errorf("the path put objects in the host's namespace:\n%s", out)
			}
			if v.Overlay() {
				if p.Encap == "" || (p.Encap == VXLAN) != (p.EncapNote != "") {
					t.Errorf("overlay path says encap %q, note %q: VXLAN must say why not Geneve", p.Encap, p.EncapNote)
				}
				t.Logf("overlay: %s (%s)", p.Encap, p.EncapNote)
			}

			srv := startServer(t, ctx, l, p)
			before, err := p.Counters(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			const clients = 10
			sum := runBench(t, ctx, l, p, srv, "-c", fmt.Sprint(clients), "--pipeline", "16", "-d", "256", "--ratio", "1:1", "--requests-total", "20000")
			if sum.Ops < 20000 || sum.Errors != 0 {
				t.Fatalf("bench over %s: %d ops, %d errors; want 20000 ops without errors", v, sum.Ops, sum.Errors)
			}
			after, err := p.Counters(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			d := after.Sub(before)
			t.Logf("%s: %+v encap %+v firewall %+v", p, d.Link, d.Encap, d.Firewall)
			// Half the 20,000 requests are SETs of 256-byte values:
			// at least that much reached the server. (Bytes, not
			// packets: segmentation offload makes packet counts vary.)
			const minBytes = 10000 * 256
			if d.Link.RxBytes < minBytes || d.Link.TxPackets == 0 {
				t.Errorf("the veth received %d bytes and sent %d packets; want at least %d bytes in and some out", d.Link.RxBytes, d.Link.TxPackets, minBytes)
			}
			wire := d.Link.RxPackets + d.Link.TxPackets
			switch {
			case v.Overlay() && d.Encap == nil:
				t.Errorf("overlay path has no encapsulation counters")
			case v.Overlay():
				if d.Encap.RxBytes < minBytes || d.Encap.TxPackets == 0 {
					t.Errorf("the %s device received %d bytes and sent %d packets; want at least %d bytes in and some out", p.Encap, d.Encap.RxBytes, d.Encap.TxPackets, minBytes)
				}
				// Every packet on the wire was a tunnelled one.
				if d.Link.RxPackets < d.Encap.RxPackets {
					t.Errorf("veth received %d packets, fewer than the tunnel's %d", d.Link.RxPackets, d.Encap.RxPackets)
				}
			case d.Encap != nil:
				t.Errorf("%s path has encapsulation counters %+v", v, d.Encap)
			}
			if v.HasFirewall() {
				if d.Firewall == nil {
					t.Fatalf("%s path has no firewall counters", v)
				}
				f := d.Firewall
				// Every packet through the vNIC walks the chain (ARP,
				// on the wire but not IP, does not): nearly all of
				// the wire's packets, nearly all of them established.
				if f.Walked < wire*9/10 || f.Established < f.Walked-4*clients {
					t.Errorf("firewall walked %d packets, %d of them established, of %d on the wire; want nearly all in both", f.Walked, f.Established, wire)
				}
				if f.New < clients || f.Dropped != 0 {
					t.Errorf("firewall let in %d new connections and dropped %d; want at least %d and none", f.New, f.Dropped, clients)
				}
			} else {
				if d.Firewall != nil {
					t.Errorf("direct path has firewall counters %+v", d.Firewall)
				}
				if out := shOK(t, ctx, l, p.ServerExec()+" nft list tables"); strings.TrimSpace(out) != "" {
					t.Errorf("direct path has nftables tables in its server namespace:\n%s", out)
				}
			}

			// Teardown with the server still running (it must be
			// stopped for the namespace to go) and on a cancelled
			// context, as after Ctrl-C.
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if err := p.Teardown(cancelled, l); err != nil {
				t.Fatal(err)
			}
			torn = true
			assertGone(t, ctx, l, prefix)
			if alive(srv.proc.PID) {
				t.Errorf("server pid %d still runs after Teardown", srv.proc.PID)
			}
			if err := p.Teardown(ctx, l); err != nil {
				t.Errorf("a second Teardown: %v; want nothing to do", err)
			}
		})
	}
}

// TestSweepRemovesLeftovers leaves behind what a killed run would (a path
// with its server still running, a link and a table in the host's own
// namespace), then sweeps that run's prefix: all of it goes, decoys whose
// names only look alike stay, and a second sweep finds nothing.
//
// It sweeps RunPrefix(id), not Prefix: on a shared machine SweepAll would
// remove other runs' paths too (rule: tests touch only what they made).
// SweepAll is Sweep with Prefix; the selection is TestMatchingPrefix's.
func TestSweepRemovesLeftovers(t *testing.T) {
	l := requireKernel(t)
	testpeer.Require(t, "redis-cli")
	ctx := testCtx(t)
	p, err := Make(ctx, l, Config{Variant: OverlayFirewall, FirewallRules: 50})
	if err != nil {
		t.Fatal(err)
	}
	prefix := RunPrefix(p.RunID)
	decoyNS := []string{Prefix + p.RunID + "z-keep", "x" + prefix + "keep"}
	leftLink, leftPeer := prefix+"la", prefix+"lb"
	leftTable := prefix + "t"
	t.Cleanup(func() {
		c := context.Background()
		_ = p.Teardown(c, l)
		for _, ns := range decoyNS {
			_, _ = sh(c, l, false, "ip netns del "+runner.Quote(ns), nil)
		}
		_, _ = sh(c, l, false, "ip link del "+runner.Quote(leftLink), nil)
		_, _ = sh(c, l, false, "nft delete table inet "+runner.Quote(leftTable), nil)
	})
	for _, ns := range decoyNS {
		shOK(t, ctx, l, "ip netns add "+runner.Quote(ns))
	}
	shOK(t, ctx, l, "ip link add "+runner.Quote(leftLink)+" type veth peer name "+runner.Quote(leftPeer))
	// A table with no chains: hooks nothing in the host's namespace.
	shOK(t, ctx, l, "nft add table inet "+runner.Quote(leftTable))
	srv := startServer(t, ctx, l, p)

	s, err := Sweep(ctx, l, false, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(s.Namespaces, ","), p.ClientNS+","+p.ServerNS; got != want {
		t.Errorf("swept namespaces %s; want %s", got, want)
	}
	if got, want := strings.Join(s.Links, ","), leftLink+","+leftPeer; got != want {
		t.Errorf("swept links %s; want %s", got, want)
	}
	if got, want := strings.Join(s.Tables, ","), "inet "+leftTable; got != want {
		t.Errorf("swept tables %s; want %s", got, want)
	}
	assertGone(t, ctx, l, prefix)
	if alive(srv.proc.PID) {
		t.Errorf("the server left running in the path (pid %d) survived the sweep", srv.proc.PID)
	}
	nss, err := listNamespaces(ctx, l, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range decoyNS {
		found := false
		for _, ns := range nss {
			found = found || ns == d
		}
		if !found {
			t.Errorf("the sweep of %s* removed namespace %s", prefix, d)
		}
	}
	again, err := Sweep(ctx, l, false, prefix)
	if err != nil || !again.Empty() {
		t.Errorf("a second sweep: %+v, %v; want nothing removed and no error", again, err)
	}
}

// TestProbeHere checks Probe on this machine: all three variants can be
// made, the encapsulation is named (with why when it is VXLAN), and the
// scratch namespace is gone.
func TestProbeHere(t *testing.T) {
	l := requireKernel(t)
	ctx := testCtx(t)
	r, err := Probe(ctx, l, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Variants() {
		if ok, why := r.Available(v); !ok {
			t.Errorf("%s unavailable here: %s", v, why)
		}
	}
	if r.Encap == "" || (r.Encap == VXLAN) != (r.EncapNote != "") {
		t.Errorf("probe says encap %q, note %q", r.Encap, r.EncapNote)
	}
	t.Logf("probe: %+v", r)
	if out := shOK(t, ctx, l, "ip netns list"); strings.Contains(out, "-probe") {
		// Only ours end in -probe; another test binary's probe may run
		// at this moment, so name them in the message.
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, Prefix) && strings.Contains(line, "-probe") {
				t.Logf("a probe namespace exists now (ours or a concurrent run's): %s", line)
			}
		}
	}
}

// TestRulesetLoads checks the generated ruleset with `nft -c` (parse and
// validate in the kernel, commit nothing) at the largest N allowed.
func TestRulesetLoads(t *testing.T) {
	l := requireKernel(t)
	ctx := testCtx(t)
	rs := ruleset("dpulab-check-fw", "dpulab-check-vs", underlayClient, underlayServer, MaxFirewallRules)
	r, err := sh(ctx, l, false, "nft -c -f -", []byte(rs))
	if err != nil || r.code != 0 {
		t.Fatalf("nft -c rejects the ruleset of %d rules: %v, %s", MaxFirewallRules, err, said(r))
	}
}
