package sample

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustOpen(t *testing.T, p string) io.Reader {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

func TestParseProcStat(t *testing.T) {
	got, err := ParseProcStat(mustOpen(t, "testdata/t0/proc/stat"))
	if err != nil {
		t.Fatal(err)
	}
	want := CPUTimes{User: 1000, Nice: 100, System: 500, Idle: 8000, IOWait: 50, IRQ: 20, SoftIRQ: 80, Steal: 10}
	if got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for name, in := range map[string]string{
		"no cpu line": "cpu0 1 2 3 4\nintr 5\n",
		"garbage":     "cpu  1 x 3 4 5\n",
		"short":       "cpu  1 2\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseProcStat(strings.NewReader(in)); err == nil {
				t.Fatal("no error")
			}
		})
	}
	// Old kernels have fewer columns (no steal): missing ones are zero.
	old, err := ParseProcStat(strings.NewReader("cpu  1 2 3 4 5 6 7\n"))
	if err != nil || old.SoftIRQ != 7 || old.Steal != 0 {
		t.Fatalf("%+v %v", old, err)
	}
}

func TestCPUShare(t *testing.T) {
	a, _ := ParseProcStat(mustOpen(t, "testdata/t0/proc/stat"))
	b, _ := ParseProcStat(mustOpen(t, "testdata/t1/proc/stat"))
	got := CPUShare(a, b)
	// Deltas: user 300, system 200, idle 600, iowait 100, irq 50,
	// softirq 150, steal 40; total 1440 ticks.
	want := CPU{User: 20.83, System: 13.89, SoftIRQ: 10.42, IRQ: 3.47, IOWait: 6.94, Steal: 2.78, Idle: 41.67, Network: 13.89}
	if got != want {
		t.Fatalf("%+v\nwant %+v", got, want)
	}
	if z := CPUShare(a, a); z != (CPU{}) {
		t.Fatalf("no time passed: %+v", z)
	}
}

func TestParseNetDev(t *testing.T) {
	got, err := ParseNetDev(mustOpen(t, "testdata/t1/proc/net/dev"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["eth0"] != (NetCounters{3000000, 700000}) || got["enp3s0f0np0"] != (NetCounters{125000000, 250000000}) || got["lo"].RxBytes != 9000 {
		t.Fatalf("%+v", got)
	}
	if _, err := ParseNetDev(strings.NewReader("eth0: 1 2 3\n")); err == nil {
		t.Fatal("short line accepted")
	}
}

func TestCounterDelta(t *testing.T) {
	tests := []struct {
		name                string
		prev, cur, maxRange uint64
		want                uint64
	}{
		{"forward", 10, 25, 100, 15},
		{"wrap", 90, 5, 100, 15},
		{"backwards unknown range", 90, 5, 0, 0},
		{"prev above range", 200, 5, 100, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CounterDelta(tc.prev, tc.cur, tc.maxRange); got != tc.want {
				t.Fatalf("got %d want %d", got, tc.want)
			}
		})
	}
}

// fixtureRoot copies testdata/tN into a temp root and adds RAPL files (their
// names hold ':', which we keep out of the repository).
func fixtureRoot(t *testing.T, root, src string, rapl map[string][2]uint64) {
	t.Helper()
	for _, f := range []string{"proc/stat", "proc/net/dev"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(root, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for zone, v := range rapl {
		d := filepath.Join(root, "sys/class/powercap", zone)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "energy_uj"), []byte(jsonNum(v[0])+"\n"), 0o644)
		os.WriteFile(filepath.Join(d, "max_energy_range_uj"), []byte(jsonNum(v[1])+"\n"), 0o644)
	}
}

func jsonNum(v uint64) string { b, _ := json.Marshal(v); return string(b) }

const maxRange = 262143328850

func TestSamplerFromFixtures(t *testing.T) {
	root := t.TempDir()
	fixtureRoot(t, root, "testdata/t0", map[string][2]uint64{
		"intel-rapl:0":   {262143000000, maxRange}, // about to wrap
		"intel-rapl:0:0": {5, maxRange},            // subzone: part of package 0
		"intel-rapl:1":   {1000000, maxRange},
	})
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &Sampler{Host: "h1", Root: root, now: func() time.Time { return clock }}
	if _, ok, err := s.Next(); err != nil || ok {
		t.Fatalf("first call primes: ok=%v err=%v", ok, err)
	}
	fixtureRoot(t, root, "testdata/t1", map[string][2]uint64{
		"intel-rapl:0":   {171150, maxRange},
		"intel-rapl:0:0": {999999999, maxRange},
		"intel-rapl:1":   {101000000, maxRange},
	})
	clock = clock.Add(2 * time.Second)
	smp, ok, err := s.Next()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if smp.Host != "h1" || !smp.T.Equal(clock) || smp.CPU.Network != 13.89 {
		t.Fatalf("%+v", smp)
	}
	if _, ok := smp.Net["lo"]; ok || len(smp.Net) != 2 {
		t.Fatalf("net %+v (lo must be left out)", smp.Net)
	}
	if smp.Net["eth0"] != (NetRate{RxBytesPerSec: 1000000, TxBytesPerSec: 250000}) || smp.Net["enp3s0f0np0"] != (NetRate{RxBytesPerSec: 62500000, TxBytesPerSec: 125000000}) {
		t.Fatalf("net %+v", smp.Net)
	}
	// Package 0 wrapped: 328850 + 171150 = 0.5 J; package 1: 100 J;
	// 100.5 J over 2 s.
	if smp.PowerWatts == nil || *smp.PowerWatts != 50.25 {
		t.Fatalf("power %v", smp.PowerWatts)
	}

	// Only the asked interface.
	s2 := &Sampler{Host: "h1", Root: root, Ifaces: []string{"eth0"}}
	if err := s2.CheckIfaces(); err != nil {
		t.Fatal(err)
	}
	s3 := &Sampler{Root: root, Ifaces: []string{"ib0"}}
	if err := s3.CheckIfaces(); err == nil || !strings.Contains(err.Error(), `no interface "ib0"`) || !strings.Contains(err.Error(), "eth0") {
		t.Fatalf("err = %v", err)
	}
}

func TestSamplerWithoutRAPLReportsNull(t *testing.T) {
	root := t.TempDir()
	fixtureRoot(t, root, "testdata/t0", nil)
	s := &Sampler{Host: "h", Root: root}
	s.Next()
	fixtureRoot(t, root, "testdata/t1", nil)
	smp, _, err := s.Next()
	if err != nil || smp.PowerWatts != nil {
		t.Fatalf("power %v err %v", smp.PowerWatts, err)
	}
	b, _ := json.Marshal(smp)
	if !strings.Contains(string(b), `"power_watts":null`) {
		t.Fatalf("json %s", b)
	}
	// Unreadable energy counter (non-root on kernels >= 5.10): null too.
	fixtureRoot(t, root, "testdata/t0", map[string][2]uint64{"intel-rapl:0": {1, maxRange}})
	os.Chmod(filepath.Join(root, "sys/class/powercap/intel-rapl:0/energy_uj"), 0)
	s = &Sampler{Host: "h", Root: root}
	s.Next()
	smp, _, _ = s.Next()
	if os.Getuid() != 0 && smp.PowerWatts != nil {
		t.Fatalf("power %v from an unreadable counter", *smp.PowerWatts)
	}
}

func TestRunAndDecode(t *testing.T) {
	var buf bytes.Buffer
	s := &Sampler{Host: "this"}
	if err := s.Run(context.Background(), &buf, 20*time.Millisecond, 3); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(&buf)
	n := 0
	for {
		smp, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		sum := smp.CPU.User + smp.CPU.System + smp.CPU.SoftIRQ + smp.CPU.IRQ + smp.CPU.IOWait + smp.CPU.Steal + smp.CPU.Idle
		if smp.Host != "this" || (sum != 0 && (sum < 99.9 || sum > 100.1)) {
			t.Fatalf("%+v (sum %v)", smp, sum)
		}
	}
	if n != 3 {
		t.Fatalf("%d samples, want 3", n)
	}
	if _, err := NewDecoder(strings.NewReader("\n{\"host\":\"x\"}\n")).Next(); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewDecoder(strings.NewReader("not json\n")).Next(); err == nil {
		t.Fatal("garbage decoded")
	}
}
