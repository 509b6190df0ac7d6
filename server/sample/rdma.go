package sample

import (
	"github.com/dpulab/dpulab/internal/wire/samplewire"
	"path/filepath"
	"sort"
)

// RDMA traffic leaves the host without passing through the kernel's network
// stack, so /proc/net/dev (Sample.Net) never sees it: a Redis server serving
// over RDMA at 20 Gb/s shows an idle NIC there. The InfiniBand (and RoCE)
// port counters in sysfs count every packet the port sends and receives,
// RDMA or not, so they are what shows that traffic.

// Where the counters are depends on the driver:
//
//   - Hardware ports (mlx4, mlx5, qib, ...) have the InfiniBand PMA counters
//     in ports/N/counters: bytes (port_*_data) and packets. mlx5 adds its
//     own counters in ports/N/hw_counters, among them the trouble counters
//     of RDMAErrorCounters.
//   - Soft-RoCE (rdma_rxe) has no ports/N/counters at all; its
//     ports/N/hw_counters holds the driver's own counters (the kernel's
//     rxe_hw_counters.c), which are also what `rdma statistic show`
//     prints: sent_pkts and rcvd_pkts count the RoCE packets the port
//     sent and received (ACKs included, loopback included), and nothing
//     counts bytes. Such a port gets packet rates and RXEErrorCounters,
//     and no byte rates (RDMARate.NoBytes).
//   - Soft-iWARP (siw) registers no hardware counters and no PMA, so it has
//     neither directory and reports nothing.
//
// The trouble counters are reported under the driver's own names, per a
// list per driver (RDMAErrorCounters for mlx5, RXEErrorCounters for rxe),
// never renamed onto one another: their meanings are close but not the
// same (rxe's completer_retry_err counts every resend, after a timeout or a
// sequence NAK alike; mlx5's local_ack_timeout_err only the timeouts), and
// a consumer that wants to put them side by side maps the names itself.

// RDMARate is one port's rates over the interval (samplewire.RDMARate,
// where it is declared with its JSON form).
type RDMARate = samplewire.RDMARate

// RDMAErrorCounters are mlx5's hardware counters read beside the traffic
// of a port with ports/N/counters: the ones that say an RDMA connection is
// losing packets or retrying, the difference between the reliable (RC) and
// unreliable (UC) queue pairs a lab compares.
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

// RXEErrorCounters are Soft-RoCE's (rdma_rxe) trouble counters, read from
// the hw_counters of a port without ports/N/counters, under rxe's names.
var RXEErrorCounters = []string{
	// Requests the responder received ahead of the expected sequence
	// number (a gap): it NAKs them. Close to mlx5's out_of_sequence.
	"out_of_seq_request",
	// Requests the responder received again (already seen): the peer
	// resent them.
	"duplicate_request",
	// Sequence-error NAKs this RC requester received: the peer saw a gap
	// and asked for a resend. Close to mlx5's packet_seq_err.
	"rcvd_seq_err",
	// Resends by this requester, after an acknowledgement timeout or a
	// sequence NAK alike.
	"completer_retry_err",
	// Queue pairs that ran out of retries and went to error.
	"retry_exceeded_err",
	// "Receiver not ready" NAKs this requester received (the peer had no
	// receive posted), and those this responder sent.
	"rcvd_rnr_err",
	"send_rnr_err",
	// Queue pairs that ran out of RNR retries and went to error. Close to
	// mlx5's rnr_nak_retry_err.
	"retry_rnr_exceeded_err",
	// Packets rxe failed to hand to the network stack.
	"send_err",
}

// The traffic counters, under ports/N/counters. port_*_data counts 4-byte
// words (the InfiniBand PortXmitData/PortRcvData definition).
const (
	ibXmitData    = "port_xmit_data"
	ibRcvData     = "port_rcv_data"
	ibXmitPackets = "port_xmit_packets"
	ibRcvPackets  = "port_rcv_packets"
	// rxe's packet counters, under ports/N/hw_counters.
	rxeSentPkts = "sent_pkts"
	rxeRcvdPkts = "rcvd_pkts"
	// ibSaturated is where a 32-bit InfiniBand counter stops: the
	// original PMA counters saturate instead of wrapping, so a reading
	// there says nothing about the interval.
	ibSaturated = 1<<32 - 1
)

// rdmaCounters is one port's cumulative counters; a zero map entry is a
// counter read as 0, an absent one a counter the port does not have.
// noBytes is a port without data counters (rxe): xmitData and rcvData are
// then 0 and mean nothing.
type rdmaCounters struct {
	xmitData, rcvData, xmitPkts, rcvPkts uint64
	noBytes                              bool
	errs                                 map[string]uint64
}

// readRDMA reads every port of every device under
// /sys/class/infiniband, keyed "DEV/PORT" (mlx5_0/1). It returns nil when
// the host has no such directory or no port with readable traffic counters:
// such a host has no RDMA figures at all, rather than zero ones. A port
// whose four traffic counters in ports/N/counters are not all readable is
// read from hw_counters' sent_pkts and rcvd_pkts instead (rxe), and left
// out when it has neither; a partial port would under-report.
func (s *Sampler) readRDMA() map[string]rdmaCounters {
	ports, _ := filepath.Glob(s.path("/sys/class/infiniband/*/ports/*"))
	sort.Strings(ports)
	var out map[string]rdmaCounters
	for _, portDir := range ports {
		port := filepath.Base(portDir)
		dev := filepath.Base(filepath.Dir(filepath.Dir(portDir)))
		c, ok := readPortTraffic(portDir)
		if !ok {
			continue
		}
		errNames := RDMAErrorCounters
		if c.noBytes {
			errNames = RXEErrorCounters
		}
		for _, name := range errNames {
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

// readPortTraffic reads a port's traffic: the four PMA counters of
// ports/N/counters when all are readable, else rxe's packet counters in
// ports/N/hw_counters (noBytes). ok is false when it has neither set.
func readPortTraffic(portDir string) (c rdmaCounters, ok bool) {
	read := func(dir string, m map[string]*uint64) bool {
		for name, dst := range m {
			v, err := readUint(filepath.Join(portDir, dir, name))
			if err != nil {
				return false
			}
			*dst = v
		}
		return true
	}
	if read("counters", map[string]*uint64{ibXmitData: &c.xmitData, ibRcvData: &c.rcvData, ibXmitPackets: &c.xmitPkts, ibRcvPackets: &c.rcvPkts}) {
		return c, true
	}
	c = rdmaCounters{noBytes: true}
	if read("hw_counters", map[string]*uint64{rxeSentPkts: &c.xmitPkts, rxeRcvdPkts: &c.rcvPkts}) {
		return c, true
	}
	return rdmaCounters{}, false
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
		// A port whose counters changed kind between the readings
		// (driver swapped) has no interval either.
		if !ok || p.noBytes != c.noBytes || c.xmitData == ibSaturated || c.rcvData == ibSaturated {
			continue
		}
		rate := func(a, b uint64) float64 { return round2(float64(CounterDelta(a, b, 0)) / dt) }
		r := RDMARate{
			RxPacketsPerSec: rate(p.rcvPkts, c.rcvPkts),
			TxPacketsPerSec: rate(p.xmitPkts, c.xmitPkts),
			NoBytes:         c.noBytes,
		}
		if !c.noBytes {
			r.RxBytesPerSec = round2(4 * float64(CounterDelta(p.rcvData, c.rcvData, 0)) / dt)
			r.TxBytesPerSec = round2(4 * float64(CounterDelta(p.xmitData, c.xmitData, 0)) / dt)
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
