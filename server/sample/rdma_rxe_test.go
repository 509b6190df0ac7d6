package sample

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyTree copies the files under src into dst, keeping their paths.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testdata/rxe/t0 and t1 are two readings, 2 s apart, of two Soft-RoCE
// ports laid out as rdma_rxe lays them out (Debian's 6.1 kernel): no
// ports/1/counters directory, and ports/1/hw_counters with rxe's 15
// counters and "lifespan". rxe0 sent 2,000 packets and received 5,000, with
// trouble; rxe1 is its clean mirror. Beside them, an mlx5 port goes on as
// before.
func TestSamplerReadsSoftRoCEPortCounters(t *testing.T) {
	root := t.TempDir()
	fixtureRoot(t, root, "testdata/t0", nil)
	copyTree(t, "testdata/rxe/t0", root)
	ibPort(t, root, "mlx5_0", "1", traffic(1000, 2000, 10, 20), map[string]uint64{"out_of_sequence": 10, "packet_seq_err": 0})

	clock := time.Date(2026, 12, 3, 19, 0, 0, 0, time.UTC)
	s := &Sampler{Host: "guest", Root: root, now: func() time.Time { return clock }}
	if _, ok, err := s.Next(); err != nil || ok {
		t.Fatalf("first call primes: ok=%v err=%v", ok, err)
	}
	fixtureRoot(t, root, "testdata/t1", nil)
	copyTree(t, "testdata/rxe/t1", root)
	ibPort(t, root, "mlx5_0", "1", traffic(1000+250_000_000, 2000+125_000_000, 10+1_000_000, 20+600_000), map[string]uint64{"out_of_sequence": 30, "packet_seq_err": 4})
	clock = clock.Add(2 * time.Second)

	smp, ok, err := s.Next()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if len(smp.RDMA) != 3 {
		t.Fatalf("ports %v, want rxe0/1, rxe1/1 and mlx5_0/1", smp.RDMA)
	}
	rxe0 := smp.RDMA["rxe0/1"]
	if !rxe0.NoBytes || rxe0.RxBytesPerSec != 0 || rxe0.TxBytesPerSec != 0 {
		t.Fatalf("rxe0/1 %+v: rxe counts no bytes, so the byte rates must be marked absent", rxe0)
	}
	if rxe0.TxPacketsPerSec != 1000 || rxe0.RxPacketsPerSec != 2500 {
		t.Fatalf("rxe0/1 packets %+v, want tx 1000/s (sent_pkts), rx 2500/s (rcvd_pkts)", rxe0)
	}
	wantErrs := map[string]float64{
		"out_of_seq_request": 3, "duplicate_request": 1, "rcvd_seq_err": 5, "completer_retry_err": 10,
		"retry_exceeded_err": 0, "rcvd_rnr_err": 2, "send_rnr_err": 4, "retry_rnr_exceeded_err": 1, "send_err": 0,
	}
	if len(rxe0.Errors) != len(wantErrs) {
		t.Fatalf("rxe0/1 errors %v, want exactly RXEErrorCounters %v (not ack_deferred, rdma_sends, rdma_recvs, link_downed, lifespan)", rxe0.Errors, wantErrs)
	}
	for k, v := range wantErrs {
		if g, ok := rxe0.Errors[k]; !ok || g != v {
			t.Fatalf("rxe0/1 errors[%s] = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if len(wantErrs) != len(RXEErrorCounters) {
		t.Fatalf("the test covers %d rxe counters, RXEErrorCounters has %d", len(wantErrs), len(RXEErrorCounters))
	}
	rxe1 := smp.RDMA["rxe1/1"]
	if !rxe1.NoBytes || rxe1.TxPacketsPerSec != 2500 || rxe1.RxPacketsPerSec != 1000 || rxe1.Errors["out_of_seq_request"] != 0 || len(rxe1.Errors) != len(RXEErrorCounters) {
		t.Fatalf("rxe1/1 %+v", rxe1)
	}

	mlx := smp.RDMA["mlx5_0/1"]
	if mlx.NoBytes || mlx.TxBytesPerSec != 500_000_000 || mlx.RxBytesPerSec != 250_000_000 || mlx.TxPacketsPerSec != 500_000 || mlx.RxPacketsPerSec != 300_000 {
		t.Fatalf("mlx5_0/1 %+v: a port with counters/ must read as before", mlx)
	}
	if len(mlx.Errors) != 2 || mlx.Errors["out_of_sequence"] != 10 || mlx.Errors["packet_seq_err"] != 2 {
		t.Fatalf("mlx5_0/1 errors %v", mlx.Errors)
	}

	// On the wire, rxe's byte rates are absent, never 0; mlx5's are there.
	b, err := json.Marshal(smp)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		RDMA map[string]map[string]json.RawMessage `json:"rdma"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rx_bytes_per_sec", "tx_bytes_per_sec"} {
		if _, ok := raw.RDMA["rxe0/1"][k]; ok {
			t.Fatalf("rxe0/1 json has %s: %s", k, b)
		}
		if _, ok := raw.RDMA["mlx5_0/1"][k]; !ok {
			t.Fatalf("mlx5_0/1 json lacks %s: %s", k, b)
		}
	}
	if !strings.Contains(string(b), `"rxe0/1":{"rx_packets_per_sec":2500,"tx_packets_per_sec":1000,"errors":{`) {
		t.Fatalf("json %s", b)
	}
	if !strings.Contains(string(b), `"mlx5_0/1":{"rx_bytes_per_sec":250000000,"tx_bytes_per_sec":500000000,"rx_packets_per_sec":300000,"tx_packets_per_sec":500000,"errors":{`) {
		t.Fatalf("mlx5 json changed: %s", b)
	}
	back, err := NewDecoder(bytes.NewReader(append(b, '\n'))).Next()
	if err != nil {
		t.Fatal(err)
	}
	if r := back.RDMA["rxe0/1"]; !r.NoBytes || r.RxPacketsPerSec != 2500 || r.Errors["rcvd_seq_err"] != 5 {
		t.Fatalf("decoded rxe0/1 %+v from %s", r, b)
	}
	if r := back.RDMA["mlx5_0/1"]; r.NoBytes || r.TxBytesPerSec != 500_000_000 {
		t.Fatalf("decoded mlx5_0/1 %+v from %s", r, b)
	}
}

// A port with both sets (a hardware port whose driver also has sent_pkts,
// say) is read from counters/, with bytes; one whose counters/ is partial
// falls back to hw_counters when rxe's two packet counters are there.
func TestRDMAPortPrefersPMACounters(t *testing.T) {
	root := t.TempDir()
	ibPort(t, root, "both0", "1", traffic(10, 20, 1, 2), map[string]uint64{"sent_pkts": 99, "rcvd_pkts": 99, "out_of_sequence": 1, "out_of_seq_request": 5})
	ibPort(t, root, "part0", "1", map[string]uint64{"port_xmit_data": 1}, map[string]uint64{"sent_pkts": 3, "rcvd_pkts": 4})
	s := &Sampler{Root: root}
	got := s.readRDMA()
	want := map[string]rdmaCounters{
		"both0/1": {xmitData: 10, rcvData: 20, xmitPkts: 1, rcvPkts: 2, errs: map[string]uint64{"out_of_sequence": 1}},
		"part0/1": {xmitPkts: 3, rcvPkts: 4, noBytes: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for k, w := range want {
		g := got[k]
		if g.xmitData != w.xmitData || g.rcvData != w.rcvData || g.xmitPkts != w.xmitPkts || g.rcvPkts != w.rcvPkts || g.noBytes != w.noBytes || len(g.errs) != len(w.errs) {
			t.Fatalf("%s = %+v, want %+v", k, g, w)
		}
		for n, v := range w.errs {
			if g.errs[n] != v {
				t.Fatalf("%s errs %v, want %v", k, g.errs, w.errs)
			}
		}
	}
	// A port that changed kind between two readings has no interval.
	prev := map[string]rdmaCounters{"d/1": {xmitPkts: 1, rcvPkts: 1, noBytes: true}}
	cur := map[string]rdmaCounters{"d/1": {xmitData: 5, rcvData: 5, xmitPkts: 9, rcvPkts: 9}}
	if r := rdmaRates(prev, cur, 1); r != nil {
		t.Fatalf("rates across a change of counters: %+v", r)
	}
}
