package sample

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ibPort writes one port's counters under root the way the kernel lays
// them out: traffic in ports/N/counters, the driver's extras in
// ports/N/hw_counters (only those given).
func ibPort(t *testing.T, root, dev, port string, traffic, hw map[string]uint64) {
	t.Helper()
	base := filepath.Join(root, "sys/class/infiniband", dev, "ports", port)
	for sub, m := range map[string]map[string]uint64{"counters": traffic, "hw_counters": hw} {
		if m == nil {
			continue
		}
		d := filepath.Join(base, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range m {
			if err := os.WriteFile(filepath.Join(d, name), []byte(strconv.FormatUint(v, 10)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func traffic(xmitWords, rcvWords, xmitPkts, rcvPkts uint64) map[string]uint64 {
	return map[string]uint64{"port_xmit_data": xmitWords, "port_rcv_data": rcvWords, "port_xmit_packets": xmitPkts, "port_rcv_packets": rcvPkts}
}

func TestSamplerReadsInfiniBandPortCounters(t *testing.T) {
	root := t.TempDir()
	fixtureRoot(t, root, "testdata/t0", nil)
	hw0 := map[string]uint64{"out_of_sequence": 10, "packet_seq_err": 0, "local_ack_timeout_err": 3, "rnr_nak_retry_err": 0, "rx_write_requests": 99}
	ibPort(t, root, "mlx5_0", "1", traffic(1000, 2000, 10, 20), hw0)
	// A ConnectX-3 port: traffic counters, no hw_counters directory.
	ibPort(t, root, "mlx4_0", "2", traffic(0, 0, 0, 0), nil)
	// A port whose driver has no port_rcv_packets: left out, since a
	// partial port would under-report.
	ibPort(t, root, "rxe0", "1", map[string]uint64{"port_xmit_data": 1, "port_rcv_data": 1, "port_xmit_packets": 1}, nil)
	// A 32-bit counter stuck at its ceiling: the interval cannot be told.
	ibPort(t, root, "qib0", "1", traffic(1<<32-1, 5, 1, 1), nil)

	clock := time.Date(2026, 12, 3, 19, 0, 0, 0, time.UTC)
	s := &Sampler{Host: "srv", Root: root, now: func() time.Time { return clock }}
	if _, ok, err := s.Next(); err != nil || ok {
		t.Fatalf("first call primes: ok=%v err=%v", ok, err)
	}

	fixtureRoot(t, root, "testdata/t1", nil)
	// 2 s later: 250M words (1 GB) sent, 125M words received, and some
	// trouble on the mlx5 port.
	hw1 := map[string]uint64{"out_of_sequence": 30, "packet_seq_err": 4, "local_ack_timeout_err": 3, "rnr_nak_retry_err": 0, "rx_write_requests": 1000}
	ibPort(t, root, "mlx5_0", "1", traffic(1000+250_000_000, 2000+125_000_000, 10+1_000_000, 20+600_000), hw1)
	ibPort(t, root, "mlx4_0", "2", traffic(2, 4, 1, 1), nil)
	ibPort(t, root, "rxe0", "1", map[string]uint64{"port_xmit_data": 9, "port_rcv_data": 9, "port_xmit_packets": 9}, nil)
	ibPort(t, root, "qib0", "1", traffic(1<<32-1, 5, 1, 1), nil)
	// A port that appeared during the interval has no starting reading.
	ibPort(t, root, "mlx5_1", "1", traffic(5, 5, 5, 5), nil)
	clock = clock.Add(2 * time.Second)

	smp, ok, err := s.Next()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if len(smp.RDMA) != 2 {
		t.Fatalf("ports %v, want mlx5_0/1 and mlx4_0/2 only", smp.RDMA)
	}
	got := smp.RDMA["mlx5_0/1"]
	want := RDMARate{
		TxBytesPerSec: 500_000_000, RxBytesPerSec: 250_000_000, // words × 4 / 2 s
		TxPacketsPerSec: 500_000, RxPacketsPerSec: 300_000,
		Errors: map[string]float64{"out_of_sequence": 10, "packet_seq_err": 2, "local_ack_timeout_err": 0, "rnr_nak_retry_err": 0},
	}
	if got.TxBytesPerSec != want.TxBytesPerSec || got.RxBytesPerSec != want.RxBytesPerSec ||
		got.TxPacketsPerSec != want.TxPacketsPerSec || got.RxPacketsPerSec != want.RxPacketsPerSec {
		t.Fatalf("mlx5_0/1 %+v\nwant %+v", got, want)
	}
	if len(got.Errors) != len(want.Errors) {
		t.Fatalf("errors %v, want exactly %v (a counter not in RDMAErrorCounters is not read)", got.Errors, want.Errors)
	}
	for k, v := range want.Errors {
		if g, ok := got.Errors[k]; !ok || g != v {
			t.Fatalf("errors[%s] = %v (present %v), want %v", k, g, ok, v)
		}
	}
	cx3 := smp.RDMA["mlx4_0/2"]
	if cx3.TxBytesPerSec != 4 || cx3.RxBytesPerSec != 8 || cx3.Errors != nil {
		t.Fatalf("mlx4_0/2 %+v: no hw_counters must mean no Errors, not zeros", cx3)
	}

	// The line the engine reads back carries the ports and their errors.
	b, err := json.Marshal(smp)
	if err != nil {
		t.Fatal(err)
	}
	back, err := NewDecoder(bytes.NewReader(append(b, '\n'))).Next()
	if err != nil {
		t.Fatal(err)
	}
	if back.RDMA["mlx5_0/1"].Errors["out_of_sequence"] != 10 || back.RDMA["mlx5_0/1"].TxBytesPerSec != 500_000_000 {
		t.Fatalf("decoded %+v from %s", back.RDMA, b)
	}
	if !strings.Contains(string(b), `"rdma":{"mlx4_0/2":`) {
		t.Fatalf("json %s", b)
	}
}

func TestSamplerWithoutInfiniBandHasNoRDMA(t *testing.T) {
	for name, setup := range map[string]func(root string){
		"no /sys/class/infiniband": func(string) {},
		"class without ports": func(root string) {
			os.MkdirAll(filepath.Join(root, "sys/class/infiniband/mlx5_0"), 0o755)
		},
		"ports without counters": func(root string) {
			os.MkdirAll(filepath.Join(root, "sys/class/infiniband/rxe0/ports/1/hw_counters"), 0o755)
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			fixtureRoot(t, root, "testdata/t0", nil)
			setup(root)
			s := &Sampler{Host: "h", Root: root}
			s.Next()
			fixtureRoot(t, root, "testdata/t1", nil)
			smp, ok, err := s.Next()
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			if smp.RDMA != nil {
				t.Fatalf("RDMA %v, want nil", smp.RDMA)
			}
			b, _ := json.Marshal(smp)
			if strings.Contains(string(b), `"rdma"`) {
				t.Fatalf("json %s has rdma", b)
			}
			back, err := DecodeLine(b, 1)
			if err != nil || back.RDMA != nil {
				t.Fatalf("decoded %v, %v", back.RDMA, err)
			}
		})
	}
}

// A counter reset (driver reloaded, counters cleared with perfquery -R)
// counts as nothing happened, never as a huge jump.
func TestRDMACounterResetIsZero(t *testing.T) {
	prev := map[string]rdmaCounters{"d/1": {xmitData: 1000, rcvData: 1000, xmitPkts: 10, rcvPkts: 10, errs: map[string]uint64{"out_of_sequence": 7}}}
	cur := map[string]rdmaCounters{"d/1": {xmitData: 4, rcvData: 2000, xmitPkts: 1, rcvPkts: 20, errs: map[string]uint64{"out_of_sequence": 0}}}
	r := rdmaRates(prev, cur, 1)["d/1"]
	if r.TxBytesPerSec != 0 || r.RxBytesPerSec != 4000 || r.TxPacketsPerSec != 0 || r.Errors["out_of_sequence"] != 0 {
		t.Fatalf("%+v", r)
	}
	if rdmaRates(prev, cur, 0) != nil {
		t.Fatal("rates over no time")
	}
}
