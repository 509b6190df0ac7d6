package sample

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The line is the one `rdma statistic show` printed for rxe0 in a Debian
// 6.1 guest (issue 28), in the kernel's counter order; the counters the
// issue elides ("...") are filled with values chosen for the test, the
// same as testdata/rxe/t0 holds.
const rxeStatistic = `link rxe0/1 sent_pkts 3081 rcvd_pkts 7455 duplicate_request 1 out_of_seq_request 0 rcvd_rnr_err 0 send_rnr_err 0 rcvd_seq_err 0 ack_deferred 12 retry_exceeded_err 0 retry_rnr_exceeded_err 0 completer_retry_err 0 send_err 0 link_downed 0 rdma_sends 44 rdma_recvs 1547
link rxe1/1 sent_pkts 7455 rcvd_pkts 3081 duplicate_request 0 out_of_seq_request 0 rcvd_rnr_err 0 send_rnr_err 0 rcvd_seq_err 0 ack_deferred 0 retry_exceeded_err 0 retry_rnr_exceeded_err 0 completer_retry_err 0 send_err 0 link_downed 0 rdma_sends 1547 rdma_recvs 44
`

func TestParseRDMAStatistic(t *testing.T) {
	got, err := ParseRDMAStatistic([]byte(rxeStatistic))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got["rxe0/1"]) != 15 || len(got["rxe1/1"]) != 15 {
		t.Fatalf("%v", got)
	}
	r := got["rxe0/1"]
	if r["sent_pkts"] != 3081 || r["rcvd_pkts"] != 7455 || r["duplicate_request"] != 1 || r["rdma_sends"] != 44 || r["rdma_recvs"] != 1547 {
		t.Fatalf("rxe0/1 %v", r)
	}

	// Pretty-printed output wraps a port over several lines.
	wrapped, err := ParseRDMAStatistic([]byte("link rxe0/1 sent_pkts 3081\n    rcvd_pkts 7455\n\nlink mlx5_0/1 out_of_sequence 2\n"))
	if err != nil || !reflect.DeepEqual(wrapped, map[string]map[string]uint64{"rxe0/1": {"sent_pkts": 3081, "rcvd_pkts": 7455}, "mlx5_0/1": {"out_of_sequence": 2}}) {
		t.Fatalf("%v %v", wrapped, err)
	}
	// `rdma -j statistic show`.
	js, err := ParseRDMAStatistic([]byte(`[{"ifname":"rxe0","port":1,"sent_pkts":3081,"rcvd_pkts":7455}]`))
	if err != nil || !reflect.DeepEqual(js, map[string]map[string]uint64{"rxe0/1": {"sent_pkts": 3081, "rcvd_pkts": 7455}}) {
		t.Fatalf("%v %v", js, err)
	}
	if e, err := ParseRDMAStatistic(nil); err != nil || len(e) != 0 {
		t.Fatalf("empty output: %v %v", e, err)
	}
	for _, bad := range []string{
		"link rxe0/1 sent_pkts",             // a name without a value
		"link rxe0/1 sent_pkts lots",        // not a count
		"sent_pkts 1",                       // no link before
		"link rxe0 sent_pkts 1",             // not DEV/PORT
		`[{"ifname":"rxe0","sent_pkts":1}]`, // no port
	} {
		if _, err := ParseRDMAStatistic([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// What the sampler reads is what `rdma statistic show` prints: the
// counters of the rxe fixture equal the parsed line, "lifespan" (the
// kernel's cache period, not a counter) left out.
func TestReadRDMAPortCountersMatchesRDMAStatistic(t *testing.T) {
	got, err := ReadRDMAPortCounters("testdata/rxe/t0")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseRDMAStatistic([]byte(rxeStatistic))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sysfs %v\nrdma statistic %v", got, want)
	}

	// A hardware port: hw_counters and counters/ together.
	root := t.TempDir()
	ibPort(t, root, "mlx5_0", "1", traffic(100, 200, 3, 4), map[string]uint64{"out_of_sequence": 7, "lifespan": 10})
	got, err = ReadRDMAPortCounters(root)
	if err != nil {
		t.Fatal(err)
	}
	w := map[string]map[string]uint64{"mlx5_0/1": {"port_xmit_data": 100, "port_rcv_data": 200, "port_xmit_packets": 3, "port_rcv_packets": 4, "out_of_sequence": 7}}
	if !reflect.DeepEqual(got, w) {
		t.Fatalf("%v, want %v", got, w)
	}

	// No RDMA at all: empty, no error.
	if got, err := ReadRDMAPortCounters(t.TempDir()); err != nil || len(got) != 0 {
		t.Fatalf("%v %v", got, err)
	}
	// An hw_counters file that is not a count is an error, not a
	// silently missing counter.
	bad := t.TempDir()
	ibPort(t, bad, "rxe0", "1", nil, map[string]uint64{"sent_pkts": 1})
	if err := os.WriteFile(filepath.Join(bad, "sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRDMAPortCounters(bad); err == nil || !strings.Contains(err.Error(), "rcvd_pkts") {
		t.Fatalf("err %v", err)
	}
}
