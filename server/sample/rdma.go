package sample

import (
	"path/filepath"
	"sort"
)

// RDMA traffic leaves the host without passing through the kernel's network
// stack, so /proc/net/dev (Sample.Net) never sees it: a Redis server serving
// over RDMA at 20 Gb/s shows an idle NIC there. The InfiniBand (and RoCE)
// port counters in sysfs count every packet the port sends and receives,
// RDMA or not, so they are what shows that traffic.

// RDMARate is one InfiniBand or RoCE port's traffic over the interval, from
// /sys/class/infiniband/DEV/ports/N/counters. The byte figures count whole
// packets, headers included, as the port sees them: IPoIB traffic through
// the same port is in them too.
type RDMARate struct {
	RxBytesPerSec   float64 `json:"rx_bytes_per_sec"`
	TxBytesPerSec   float64 `json:"tx_bytes_per_sec"`
	RxPacketsPerSec float64 `json:"rx_packets_per_sec"`
	TxPacketsPerSec float64 `json:"tx_packets_per_sec"`
	// Errors holds, per counter of RDMAErrorCounters that this port's
	// driver exposes (mlx5 does, in ports/N/hw_counters), the events per
	// second over the interval. A counter the port does not have is
	// absent, not zero.
	Errors map[string]float64 `json:"errors,omitempty"`
}

// RDMAErrorCounters are the hardware counters read beside the traffic:
// the ones that say an RDMA connection is losing packets or retrying, the
// difference between the reliable (RC) and unreliable (UC) queue pairs a
// lab compares.
var RDMAErrorCounters = []string{
	// Packets received out of sequence: on UC a packet was lost (nothing
	// resends it); on RC the sender will resend.
	"out_of_sequence",
	// NAKs for a sequence error received: the peer saw a gap and asked
	// this RC sender to resend.
	"packet_seq_err",
	// The acknowledgement timer of an RC queue pair ran out: a resend.
	"local_ack_timeout_err",
	// An RC sender ran out of retries after "receiver not ready" NAKs: the
	// peer had no receive posted, and the queue pair went to error.
	"rnr_nak_retry_err",
}

// The traffic counters, under ports/N/counters. port_*_data counts 4-byte
// words (the InfiniBand PortXmitData/PortRcvData definition).
const (
	ibXmitData    = "port_xmit_data"
	ibRcvData     = "port_rcv_data"
	ibXmitPackets = "port_xmit_packets"
	ibRcvPackets  = "port_rcv_packets"
	// ibSaturated is where a 32-bit InfiniBand counter stops: the
	// original PMA counters saturate instead of wrapping, so a reading
	// there says nothing about the interval.
	ibSaturated = 1<<32 - 1
)

// rdmaCounters is one port's cumulative counters; a zero map entry is a
// counter read as 0, an absent one a counter the port does not have.
type rdmaCounters struct {
	xmitData, rcvData, xmitPkts, rcvPkts uint64
	errs                                 map[string]uint64
}

// readRDMA reads every port of every device under
// /sys/class/infiniband, keyed "DEV/PORT" (mlx5_0/1). It returns nil when
// the host has no such directory or no port with readable traffic counters:
// such a host has no RDMA figures at all, rather than zero ones. A port
// whose four traffic counters are not all readable is left out; a partial
// port would under-report.
func (s *Sampler) readRDMA() map[string]rdmaCounters {
	ports, _ := filepath.Glob(s.path("/sys/class/infiniband/*/ports/*/counters"))
	sort.Strings(ports)
	var out map[string]rdmaCounters
	for _, dir := range ports {
		portDir := filepath.Dir(dir)
		port := filepath.Base(portDir)
		dev := filepath.Base(filepath.Dir(filepath.Dir(portDir)))
		var c rdmaCounters
		ok := true
		for name, dst := range map[string]*uint64{ibXmitData: &c.xmitData, ibRcvData: &c.rcvData, ibXmitPackets: &c.xmitPkts, ibRcvPackets: &c.rcvPkts} {
			v, err := readUint(filepath.Join(dir, name))
			if err != nil {
				ok = false
				break
			}
			*dst = v
		}
		if !ok {
			continue
		}
		for _, name := range RDMAErrorCounters {
			v, err := readUint(filepath.Join(portDir, "hw_counters", name))
			if err != nil {
				continue
			}
			if c.errs == nil {
				c.errs = map[string]uint64{}
			}
			c.errs[name] = v
		}
		if out == nil {
			out = map[string]rdmaCounters{}
		}
		out[dev+"/"+port] = c
	}
	return out
}

// rdmaRates turns two readings dt seconds apart into rates, for the ports
// present in both. A port whose data counter reads saturated (a 32-bit
// InfiniBand counter at its ceiling) is left out of the interval: its
// traffic cannot be told. The result is nil when no port has a rate.
func rdmaRates(prev, cur map[string]rdmaCounters, dt float64) map[string]RDMARate {
	if dt <= 0 {
		return nil
	}
	var out map[string]RDMARate
	names := make([]string, 0, len(cur))
	for n := range cur {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := cur[n]
		p, ok := prev[n]
		if !ok || c.xmitData == ibSaturated || c.rcvData == ibSaturated {
			continue
		}
		rate := func(a, b uint64) float64 { return round2(float64(CounterDelta(a, b, 0)) / dt) }
		r := RDMARate{
			RxBytesPerSec:   round2(4 * float64(CounterDelta(p.rcvData, c.rcvData, 0)) / dt),
			TxBytesPerSec:   round2(4 * float64(CounterDelta(p.xmitData, c.xmitData, 0)) / dt),
			RxPacketsPerSec: rate(p.rcvPkts, c.rcvPkts),
			TxPacketsPerSec: rate(p.xmitPkts, c.xmitPkts),
		}
		for name, v := range c.errs {
			pv, ok := p.errs[name]
			if !ok {
				continue
			}
			if r.Errors == nil {
				r.Errors = map[string]float64{}
			}
			r.Errors[name] = rate(pv, v)
		}
		if out == nil {
			out = map[string]RDMARate{}
		}
		out[n] = r
	}
	return out
}
