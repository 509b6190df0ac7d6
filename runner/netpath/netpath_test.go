package netpath

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/runner"
)

// fakeTarget answers commands with a function: fault injection for what
// this machine cannot be (not root, no nft, another OS).
type fakeTarget struct {
	os     string
	answer func(cmd string) (stdout string, code int)
	cmds   []string
}

func (f *fakeTarget) Name() string { return "fake" }
func (f *fakeTarget) Run(_ context.Context, c runner.Command) (runner.Result, error) {
	f.cmds = append(f.cmds, c.Cmd)
	out, code := f.answer(c.Cmd)
	if c.Output != nil {
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			c.Output(runner.Line{Host: "fake", Text: line, Time: time.Now()})
		}
	}
	return runner.Result{ExitCode: code}, nil
}
func (f *fakeTarget) Start(context.Context, runner.ProcSpec) (runner.Proc, error) {
	return runner.Proc{}, errors.ErrUnsupported
}
func (f *fakeTarget) Stop(context.Context, runner.Proc, time.Duration) error {
	return errors.ErrUnsupported
}
func (f *fakeTarget) Upload(context.Context, string, string, fs.FileMode) error {
	return errors.ErrUnsupported
}
func (f *fakeTarget) ReadFile(context.Context, string) ([]byte, error) {
	return nil, errors.ErrUnsupported
}
func (f *fakeTarget) Platform(context.Context) (runner.Platform, error) {
	return runner.Platform{OS: f.os, Arch: "amd64"}, nil
}
func (f *fakeTarget) Close() error { return nil }

var _ runner.Target = (*fakeTarget)(nil)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // part of the error; "" = valid
	}{
		{"defaults", Config{Variant: Firewall}, ""},
		{"unknown variant", Config{Variant: "dpu"}, "use one of direct, firewall, overlay+firewall"},
		{"long id", Config{Variant: Direct, RunID: "abcdef"}, "1 to 5 characters"},
		{"id with a shell character", Config{Variant: Direct, RunID: "a;b"}, "only a-z and 0-9"},
		{"upper case id", Config{Variant: Direct, RunID: "AB"}, "only a-z and 0-9"},
		{"too many rules", Config{Variant: Firewall, FirewallRules: MaxFirewallRules + 1}, "out of range"},
		{"negative rules", Config{Variant: Firewall, FirewallRules: -1}, "out of range"},
		{"unknown encap", Config{Variant: OverlayFirewall, Encap: "gre"}, "unknown encapsulation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want == "":
				if c.FirewallRules != DefaultFirewallRules || validRunID(c.RunID) != nil {
					t.Errorf("defaults not filled: %+v", c)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Errorf("Validate: %v; want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestNames checks every object is named Prefix+id, fits Linux's 15-byte
// interface names with the longest id, and that only the variant's own
// objects exist.
func TestNames(t *testing.T) {
	for _, v := range Variants() {
		p := names(v, "abcde")
		for _, link := range []string{p.ServerLink, p.ClientLink, p.ServerEncapDev, p.ClientEncapDev} {
			if len(link) > 15 {
				t.Errorf("%s: link name %q is longer than 15 bytes", v, link)
			}
		}
		for _, n := range []string{p.ServerNS, p.ClientNS, p.ServerLink, p.ClientLink, p.ServerEncapDev, p.ClientEncapDev, p.FirewallTable} {
			if n != "" && !strings.HasPrefix(n, RunPrefix("abcde")) {
				t.Errorf("%s: %q is not named with the run's prefix", v, n)
			}
		}
		if (p.ServerEncapDev != "") != v.Overlay() || (p.FirewallTable != "") != v.HasFirewall() {
			t.Errorf("%s: encap dev %q, table %q", v, p.ServerEncapDev, p.FirewallTable)
		}
		for _, a := range []string{p.ServerAddr.String(), p.ClientAddr.String()} {
			if !strings.HasPrefix(a, "198.18.") && !strings.HasPrefix(a, "198.19.") {
				t.Errorf("%s: address %s is outside 198.18.0.0/15", v, a)
			}
		}
	}
}

// TestRulesetWalksBeforeAccepting checks the shape that makes the cost:
// the N non-matching rules come before the established-connection rule,
// none of them can match the path's addresses, and only the vNIC's
// traffic is sent through the chain.
func TestRulesetWalksBeforeAccepting(t *testing.T) {
	rs := ruleset("dpulab-x-fw", "dpulab-x-vs", underlayClient, underlayServer, 300)
	lines := strings.Split(rs, "\n")
	walk, established := -1, -1
	n := 0
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "ip saddr 198.19.") {
			n++
			walk = i
			for _, a := range []string{underlayClient.String(), underlayServer.String(), overlayClient.String(), overlayServer.String()} {
				if strings.Contains(l, " "+a+" ") {
					t.Errorf("walk rule %q names a path address", l)
				}
			}
		}
		if strings.HasPrefix(l, "ct state established,related") && established < 0 {
			established = i
		}
	}
	if n != 300 {
		t.Errorf("%d walk rules; want 300", n)
	}
	if established < walk {
		t.Errorf("the established rule (line %d) comes before the last walk rule (line %d): packets would skip the walk", established, walk)
	}
	for _, want := range []string{`iifname "dpulab-x-vs" counter name "walked_in" jump dfw`, `oifname "dpulab-x-vs" counter name "walked_out" jump dfw`, `counter name "dropped" drop`} {
		if !strings.Contains(rs, want) {
			t.Errorf("ruleset lacks %q", want)
		}
	}
}

func TestParsers(t *testing.T) {
	nss, err := parseNetnsList([]byte("\n"))
	if err != nil || nss != nil {
		t.Errorf("empty `ip -j netns list`: %v, %v; want none", nss, err)
	}
	nss, err = parseNetnsList([]byte(`[{"name":"dpulab-a-srv","id":1},{"name":"other"}]`))
	if err != nil || strings.Join(nss, ",") != "dpulab-a-srv,other" {
		t.Errorf("netns list: %v, %v", nss, err)
	}
	tables, err := parseTables([]byte(`{"nftables": [{"metainfo": {"version": "1.0.6"}}, {"table": {"family": "inet", "name": "dpulab-a-fw", "handle": 1}}]}`))
	if err != nil || len(tables) != 1 || tables[0] != (nftTable{"inet", "dpulab-a-fw"}) {
		t.Errorf("tables: %v, %v", tables, err)
	}
	links, err := parseLinks([]byte(`[{"ifname":"dpulab-a-vs","stats64":{"rx":{"bytes":10,"packets":2},"tx":{"bytes":30,"packets":4}}}]`))
	if err != nil || len(links) != 1 || links[0].stats() != (LinkStats{Device: "dpulab-a-vs", RxPackets: 2, TxPackets: 4, RxBytes: 10, TxBytes: 30}) {
		t.Errorf("links: %+v, %v", links, err)
	}
	ctr := func(name string, n int) string {
		return `{"counter": {"family": "inet", "name": "` + name + `", "table": "dpulab-a-fw", "packets": ` + strings.Repeat("1", n) + `, "bytes": 0}}`
	}
	doc := `{"nftables": [{"metainfo": {}}, ` + strings.Join([]string{ctr("walked_in", 2), ctr("walked_out", 1), ctr("established", 3), ctr("new", 1), ctr("dropped", 1)}, ", ") + `]}`
	fs, err := parseCounters([]byte(doc), "dpulab-a-fw", 7)
	if err != nil || fs != (FirewallStats{Table: "dpulab-a-fw", Rules: 7, Walked: 12, Established: 111, New: 1, Dropped: 1}) {
		t.Errorf("counters: %+v, %v", fs, err)
	}
	if _, err := parseCounters([]byte(`{"nftables": [`+ctr("new", 1)+`]}`), "dpulab-a-fw", 7); err == nil || !strings.Contains(err.Error(), "changed after dpulab made it") {
		t.Errorf("a table missing counters: %v; want an error", err)
	}
}

func TestCountersSub(t *testing.T) {
	before := Counters{Link: LinkStats{RxPackets: 1, TxBytes: 5}, Encap: &LinkStats{RxPackets: 2}, Firewall: &FirewallStats{Walked: 3, New: 1}}
	after := Counters{Link: LinkStats{RxPackets: 11, TxBytes: 15}, Encap: &LinkStats{RxPackets: 12}, Firewall: &FirewallStats{Walked: 33, New: 2}}
	d := after.Sub(before)
	if d.Link.RxPackets != 10 || d.Link.TxBytes != 10 || d.Encap.RxPackets != 10 || d.Firewall.Walked != 30 || d.Firewall.New != 1 {
		t.Errorf("Sub: %+v %+v %+v", d.Link, d.Encap, d.Firewall)
	}
	if before.Firewall.Walked != 3 {
		t.Error("Sub changed its argument")
	}
}

func TestSweepRefusesForeignPrefix(t *testing.T) {
	f := &fakeTarget{os: "linux", answer: func(string) (string, int) { return "", 0 }}
	for _, prefix := range []string{"", "eth", "dpulab"} {
		if _, err := Sweep(context.Background(), f, false, prefix); err == nil {
			t.Errorf("Sweep(%q) ran; want a refusal", prefix)
		}
	}
	if len(f.cmds) != 0 {
		t.Errorf("a refused sweep ran %q", f.cmds)
	}
}

// TestSweepSelects checks which names a sweep removes: only those with
// the prefix, in the namespaces list, the links and the tables alike.
func TestSweepSelects(t *testing.T) {
	f := &fakeTarget{os: "linux", answer: func(cmd string) (string, int) {
		switch {
		case cmd == "ip -j netns list":
			return `[{"name":"dpulab-a-srv"},{"name":"mine"},{"name":"xdpulab-a-srv"}]`, 0
		case cmd == "ip -j link show":
			return `[{"ifname":"lo"},{"ifname":"dpulab-a-la"},{"ifname":"dpulab-ab-la"}]`, 0
		case strings.HasSuffix(cmd, "nft -j list tables"):
			return `{"nftables":[{"table":{"family":"inet","name":"dpulab-a-t"}},{"table":{"family":"ip","name":"filter"}}]}`, 0
		}
		return "", 0
	}}
	s, err := Sweep(context.Background(), f, false, RunPrefix("a"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Namespaces, ",") != "dpulab-a-srv" || strings.Join(s.Links, ",") != "dpulab-a-la" || strings.Join(s.Tables, ",") != "inet dpulab-a-t" {
		t.Errorf("swept %+v", s)
	}
	for _, c := range f.cmds {
		for _, keep := range []string{"mine", "xdpulab", "dpulab-ab-la", "filter"} {
			if strings.Contains(c, keep) {
				t.Errorf("command %q touches %s", c, keep)
			}
		}
	}
}

// TestProbeSaysWhy checks Probe's reasons for what a trainee's machine
// may lack, in words that say what to do.
func TestProbeSaysWhy(t *testing.T) {
	scratchAnswers := func(lines string) func(string) (string, int) {
		return func(cmd string) (string, int) {
			switch {
			case cmd == "id -u":
				return "0", 0
			case cmd == "command -v ip":
				return "/usr/sbin/ip", 0
			case strings.Contains(cmd, "dpulab-probe"):
				return lines, 0
			}
			return "", 0
		}
	}
	for _, tc := range []struct {
		name    string
		target  *fakeTarget
		variant Variant
		want    string // in the reason; "" = available
	}{
		{"not linux", &fakeTarget{os: "darwin", answer: scratchAnswers("")}, Direct, "need Linux"},
		{"not root", &fakeTarget{os: "linux", answer: func(string) (string, int) { return "1000", 0 }}, Direct, "sudo dpulab"},
		{"no ip", &fakeTarget{os: "linux", answer: func(cmd string) (string, int) {
			if cmd == "id -u" {
				return "0", 0
			}
			return "", 127
		}}, Firewall, "install iproute2"},
		{"no nft: direct works", &fakeTarget{os: "linux", answer: scratchAnswers("netns ok\nveth ok\ngeneve ok\nvxlan ok\nnft missing\n")}, Direct, ""},
		{"no nft", &fakeTarget{os: "linux", answer: scratchAnswers("netns ok\nveth ok\ngeneve ok\nvxlan ok\nnft missing\n")}, Firewall, "apt-get install nftables"},
		{"no conntrack", &fakeTarget{os: "linux", answer: scratchAnswers("netns ok\nveth ok\ngeneve ok\nvxlan ok\nnft no Error: Could not process rule: No such file or directory\n")}, OverlayFirewall, "modprobe nf_tables nf_conntrack"},
		{"no vxlan", &fakeTarget{os: "linux", answer: scratchAnswers("netns ok\nveth ok\ngeneve no Error: Unknown device type.\nvxlan no Error: Unknown device type.\nnft ok\n")}, OverlayFirewall, "modprobe vxlan"},
		{"no vxlan: firewall works", &fakeTarget{os: "linux", answer: scratchAnswers("netns ok\nveth ok\ngeneve no Error: Unknown device type.\nvxlan no Error: Unknown device type.\nnft ok\n")}, Firewall, ""},
		{"no netns", &fakeTarget{os: "linux", answer: scratchAnswers("netns no mount --make-shared /run/netns failed: Operation not permitted\n")}, Direct, "network namespaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Probe(context.Background(), tc.target, false)
			if err != nil {
				t.Fatal(err)
			}
			ok, why := r.Available(tc.variant)
			if tc.want == "" {
				if !ok {
					t.Errorf("%s unavailable: %s", tc.variant, why)
				}
				return
			}
			if ok || !strings.Contains(why, tc.want) {
				t.Errorf("%s: available %v, reason %q; want unavailable saying %q", tc.variant, ok, why, tc.want)
			}
		})
	}
}

func TestProbeNamesVXLANStandIn(t *testing.T) {
	f := &fakeTarget{os: "linux", answer: func(cmd string) (string, int) {
		switch {
		case cmd == "id -u":
			return "0", 0
		case strings.Contains(cmd, "dpulab-probe"):
			return "netns ok\nveth ok\ngeneve no Error: Unknown device type.\nvxlan ok\nnft ok\n", 0
		}
		return "", 0
	}}
	r, err := Probe(context.Background(), f, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Encap != VXLAN || !strings.Contains(r.EncapNote, "no Geneve") || !strings.Contains(r.EncapNote, "Unknown device type") {
		t.Errorf("encap %q, note %q; want VXLAN, saying the kernel has no Geneve and what ip said", r.Encap, r.EncapNote)
	}
}
