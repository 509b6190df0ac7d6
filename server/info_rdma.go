package server

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/sample"
	"github.com/dpulab/dpulab/server/transport"
)

// rdmaInfo writes INFO's rdma section (issue 12): the RDMA listeners'
// queue-pair mode and their connections' counts summed, through kv as
// info's other sections do. A server without RDMA listeners reports
// rdma_enabled:0 and nothing else. After the connections' counts come the
// host's RDMA ports' own counters, one line per port
// (rdma_port_rxe0_1:sent_pkts=…,rcvd_pkts=…), read where the sampler and
// `rdma statistic show` read them, so INFO, `dpulab sample` and the
// kernel's tool show the same numbers for the same port.
func (s *Server) rdmaInfo(kv func(string, any)) {
	s.lnMu.Lock()
	var stats []rdma.StatsListener
	for _, ln := range s.listeners {
		if sl, ok := ln.(rdma.StatsListener); ok {
			stats = append(stats, sl)
		}
	}
	s.lnMu.Unlock()
	if len(stats) == 0 {
		kv("rdma_enabled", 0)
		return
	}
	var typ rdma.QPType
	var accepted, bytesIn, bytesOut, writesIn, writesOut, rereg, keepalives, protoErrs, lost, dead uint64
	for _, sl := range stats {
		t, n, c := sl.RDMAStats()
		typ = t
		accepted += n
		bytesIn += c.BytesIn.Load()
		bytesOut += c.BytesOut.Load()
		writesIn += c.WritesIn.Load()
		writesOut += c.WritesOut.Load()
		rereg += c.Reregistrations.Load()
		keepalives += c.KeepalivesSent.Load()
		protoErrs += c.ProtocolErrors.Load()
		lost += c.LostWrites.Load()
		dead += c.PeerDead.Load()
	}
	mode := "reliable-connected"
	if typ == rdma.UC {
		mode = "unreliable-connected"
	}
	kv("rdma_enabled", 1)
	kv("rdma_transport_mode", mode)
	kv("rdma_simulated", b2i(transport.Simulated(transport.RDMA) != ""))
	kv("rdma_listeners", len(stats))
	kv("rdma_connections_received", accepted)
	kv("rdma_bytes_in", bytesIn)
	kv("rdma_bytes_out", bytesOut)
	kv("rdma_writes_in", writesIn)
	kv("rdma_writes_out", writesOut)
	kv("rdma_reregistrations", rereg)
	kv("rdma_keepalives_sent", keepalives)
	kv("rdma_protocol_errors", protoErrs)
	kv("rdma_lost_writes", lost)
	kv("rdma_peer_dead", dead)
	s.rdmaPortInfo(kv)
}

// rdmaPortInfo writes one line per RDMA port of this host with its
// counters (hw_counters, plus counters/ where the driver has them), ports
// and names sorted; nothing on a host whose ports cannot be read.
func (s *Server) rdmaPortInfo(kv func(string, any)) {
	ports, err := sample.ReadRDMAPortCounters(s.sysRoot)
	if err != nil || len(ports) == 0 {
		return
	}
	for _, port := range slices.Sorted(maps.Keys(ports)) {
		cs := ports[port]
		var b strings.Builder
		for i, name := range slices.Sorted(maps.Keys(cs)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(name)
			b.WriteByte('=')
			b.WriteString(strconv.FormatUint(cs[name], 10))
		}
		kv("rdma_port_"+strings.NewReplacer("/", "_", "-", "_", ".", "_").Replace(port), b.String())
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
