package samplewire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// CPU is the share of CPU time, in percent of all CPUs' time over the
// interval, per kind. Nice time is counted in User; guest time is already
// part of user time in /proc/stat. Network is SoftIRQ + IRQ: on a host
// serving Redis over TCP that is mostly the network stack, the part a DPU
// takes off the host.
type CPU struct {
	User    float64 `json:"user"`
	System  float64 `json:"system"`
	SoftIRQ float64 `json:"softirq"`
	IRQ     float64 `json:"irq"`
	IOWait  float64 `json:"iowait"`
	Steal   float64 `json:"steal"`
	Idle    float64 `json:"idle"`
	Network float64 `json:"network"`
}

// NetRate is one interface's throughput over the interval.
type NetRate struct {
	RxBytesPerSec float64 `json:"rx_bytes_per_sec"`
	TxBytesPerSec float64 `json:"tx_bytes_per_sec"`
}

// Sample is one measurement interval on one host.
type Sample struct {
	// T is the end of the interval.
	T    time.Time `json:"t"`
	Host string    `json:"host"`
	CPU  CPU       `json:"cpu"`
	// Net is keyed by interface name.
	Net map[string]NetRate `json:"net"`
	// PowerWatts is the summed RAPL package power, nil when the host has
	// no readable RAPL counters.
	PowerWatts *float64 `json:"power_watts"`
	// RDMA is keyed by InfiniBand/RoCE port ("mlx5_0/1"); absent (nil)
	// on a host without /sys/class/infiniband or without readable port
	// counters.
	RDMA map[string]RDMARate `json:"rdma,omitempty"`
}

// RDMARate is one InfiniBand or RoCE port's traffic over the interval, from
// /sys/class/infiniband/DEV/ports/N/counters, or, on a port without those
// (Soft-RoCE), from the driver's ports/N/hw_counters. The byte figures
// count whole packets, headers included, as the port sees them: IPoIB
// traffic through the same port is in them too.
type RDMARate struct {
	// RxBytesPerSec and TxBytesPerSec are 0 and meaningless when NoBytes
	// is set; the JSON then leaves them out.
	RxBytesPerSec   float64 `json:"rx_bytes_per_sec"`
	TxBytesPerSec   float64 `json:"tx_bytes_per_sec"`
	RxPacketsPerSec float64 `json:"rx_packets_per_sec"`
	TxPacketsPerSec float64 `json:"tx_packets_per_sec"`
	// NoBytes says the port's driver counts no bytes (Soft-RoCE): the
	// byte rates are unknown, not zero. In JSON it is the absence of
	// rx_bytes_per_sec and tx_bytes_per_sec.
	NoBytes bool `json:"-"`
	// Errors holds, per trouble counter that this port's driver exposes
	// (RDMAErrorCounters for mlx5, RXEErrorCounters for rxe, by the
	// driver's own names), the events per second over the interval. A
	// counter the port does not have is absent, not zero.
	Errors map[string]float64 `json:"errors,omitempty"`
}

// rdmaRateJSON is RDMARate on the wire: the byte rates are absent when the
// port has none.
type rdmaRateJSON struct {
	RxBytesPerSec   *float64           `json:"rx_bytes_per_sec,omitempty"`
	TxBytesPerSec   *float64           `json:"tx_bytes_per_sec,omitempty"`
	RxPacketsPerSec float64            `json:"rx_packets_per_sec"`
	TxPacketsPerSec float64            `json:"tx_packets_per_sec"`
	Errors          map[string]float64 `json:"errors,omitempty"`
}

// MarshalJSON leaves the byte rates out when the port has none (NoBytes).
func (r RDMARate) MarshalJSON() ([]byte, error) {
	j := rdmaRateJSON{RxPacketsPerSec: r.RxPacketsPerSec, TxPacketsPerSec: r.TxPacketsPerSec, Errors: r.Errors}
	if !r.NoBytes {
		rx, tx := r.RxBytesPerSec, r.TxBytesPerSec
		j.RxBytesPerSec, j.TxBytesPerSec = &rx, &tx
	}
	return json.Marshal(j)
}

// UnmarshalJSON sets NoBytes when the line has no byte rates.
func (r *RDMARate) UnmarshalJSON(b []byte) error {
	var j rdmaRateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = RDMARate{RxPacketsPerSec: j.RxPacketsPerSec, TxPacketsPerSec: j.TxPacketsPerSec, Errors: j.Errors}
	if j.RxBytesPerSec == nil || j.TxBytesPerSec == nil {
		r.NoBytes = true
		return nil
	}
	r.RxBytesPerSec, r.TxBytesPerSec = *j.RxBytesPerSec, *j.TxBytesPerSec
	return nil
}

// Decoder reads the JSON lines of `dpulab sample`.
type Decoder struct {
	sc   *bufio.Scanner
	line int
}

// NewDecoder reads Samples from r.
func NewDecoder(r io.Reader) *Decoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &Decoder{sc: sc}
}

// Next returns the next Sample, or io.EOF at the end. Blank lines are
// skipped; a malformed line is an error naming its line number.
func (d *Decoder) Next() (Sample, error) {
	for d.sc.Scan() {
		d.line++
		b := bytes.TrimSpace(d.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		return DecodeLine(b, d.line)
	}
	if err := d.sc.Err(); err != nil {
		return Sample{}, err
	}
	return Sample{}, io.EOF
}

// DecodeLine parses one JSON line (line is for the error message), for
// callers that already split the stream into lines, like runner.Line.
func DecodeLine(b []byte, line int) (Sample, error) {
	var s Sample
	if err := json.Unmarshal(b, &s); err != nil {
		return Sample{}, fmt.Errorf("sample line %d: %w", line, err)
	}
	if s.T.IsZero() {
		return Sample{}, fmt.Errorf("sample line %d: no time (\"t\"): not a dpulab sample line", line)
	}
	return s, nil
}
