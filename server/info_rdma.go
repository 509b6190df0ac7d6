package server

import (
	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
)

// rdmaInfo writes INFO's rdma section (issue 12): the RDMA listeners'
// queue-pair mode and their connections' counts summed, through kv as
// info's other sections do. A server without RDMA listeners reports
// rdma_enabled:0 and nothing else.
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
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
