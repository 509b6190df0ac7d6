package samplewire

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// A line written before NoBytes existed, or by a host with hardware ports,
// has both byte rates and decodes with NoBytes false; a line with neither
// decodes with NoBytes true.
func TestRDMARateJSON(t *testing.T) {
	var r RDMARate
	if err := json.Unmarshal([]byte(`{"rx_bytes_per_sec":0,"tx_bytes_per_sec":8,"rx_packets_per_sec":1,"tx_packets_per_sec":2}`), &r); err != nil || r.NoBytes || r.TxBytesPerSec != 8 || r.TxPacketsPerSec != 2 {
		t.Fatalf("%+v %v", r, err)
	}
	if err := json.Unmarshal([]byte(`{"rx_packets_per_sec":1,"tx_packets_per_sec":2,"errors":{"send_err":0}}`), &r); err != nil || !r.NoBytes || r.RxPacketsPerSec != 1 || r.Errors["send_err"] != 0 || len(r.Errors) != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	b, _ := json.Marshal(RDMARate{RxBytesPerSec: 0, TxBytesPerSec: 0, RxPacketsPerSec: 3})
	if string(b) != `{"rx_bytes_per_sec":0,"tx_bytes_per_sec":0,"rx_packets_per_sec":3,"tx_packets_per_sec":0}` {
		t.Fatalf("a port with bytes keeps its zeros: %s", b)
	}
	b, _ = json.Marshal(RDMARate{RxBytesPerSec: 7, NoBytes: true, RxPacketsPerSec: 3})
	if string(b) != `{"rx_packets_per_sec":3,"tx_packets_per_sec":0}` {
		t.Fatalf("NoBytes: %s", b)
	}
}

// TestDecoder: blank lines are skipped, each line is one Sample, a line
// without a time is refused as not a sample line and a malformed one is
// an error naming its line number; the end is io.EOF.
func TestDecoder(t *testing.T) {
	in := `{"t":"2026-01-02T03:04:05Z","host":"a","cpu":{"user":10,"network":2},"net":{"eth0":{"rx_bytes_per_sec":1,"tx_bytes_per_sec":2}},"power_watts":null}

{"t":"2026-01-02T03:04:06Z","host":"a","cpu":{},"net":{},"power_watts":55.5,"rdma":{"rxe0/1":{"rx_packets_per_sec":4,"tx_packets_per_sec":5}}}
{"host":"b"}
{"t":
`
	d := NewDecoder(strings.NewReader(in))
	s, err := d.Next()
	if err != nil || s.Host != "a" || s.CPU.User != 10 || s.CPU.Network != 2 || s.Net["eth0"].TxBytesPerSec != 2 || s.PowerWatts != nil {
		t.Fatalf("first line: %+v, %v", s, err)
	}
	s, err = d.Next()
	if err != nil || s.PowerWatts == nil || *s.PowerWatts != 55.5 || !s.RDMA["rxe0/1"].NoBytes || s.RDMA["rxe0/1"].TxPacketsPerSec != 5 {
		t.Fatalf("second line (after a blank one): %+v, %v", s, err)
	}
	if _, err = d.Next(); err == nil || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "not a dpulab sample line") {
		t.Fatalf("a line without a time: %v", err)
	}
	if _, err = d.Next(); err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Fatalf("a malformed line: %v", err)
	}
	if _, err = d.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("the end: %v, want io.EOF", err)
	}
}
