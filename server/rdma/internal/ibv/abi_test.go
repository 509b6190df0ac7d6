//go:build cgo && linux && (amd64 || arm64)

package ibv_test

import (
	"testing"
	"unsafe"

	"github.com/dpulab/dpulab/server/rdma/internal/ibv"
	"github.com/dpulab/dpulab/server/rdma/internal/ibv/cabi"
)

// TestABIMatchesHeaders: every size, offset and value the pure-Go
// provider relies on is what rdma-core's installed headers say (C's own
// offsetof, sizeof and enums through cabi), in the same order as cabi's
// list.
func TestABIMatchesHeaders(t *testing.T) {
	var (
		sge  ibv.SGE
		swr  ibv.SendWR
		rwr  ibv.RecvWR
		wc   ibv.WC
		cp   ibv.QPCap
		qia  ibv.QPInitAttr
		conn ibv.ConnParam
		ai   ibv.AddrInfo
	)
	ours := []struct {
		name string
		v    uintptr
	}{
		{"sizeof ibv_sge", unsafe.Sizeof(sge)}, {"ibv_sge.addr", unsafe.Offsetof(sge.Addr)}, {"ibv_sge.length", unsafe.Offsetof(sge.Length)}, {"ibv_sge.lkey", unsafe.Offsetof(sge.LKey)},
		{"sizeof ibv_send_wr", unsafe.Sizeof(swr)}, {"ibv_send_wr.wr_id", unsafe.Offsetof(swr.WRID)}, {"ibv_send_wr.next", unsafe.Offsetof(swr.Next)}, {"ibv_send_wr.sg_list", unsafe.Offsetof(swr.SGList)}, {"ibv_send_wr.num_sge", unsafe.Offsetof(swr.NumSGE)},
		{"ibv_send_wr.opcode", unsafe.Offsetof(swr.Opcode)}, {"ibv_send_wr.send_flags", unsafe.Offsetof(swr.SendFlags)}, {"ibv_send_wr.imm_data", unsafe.Offsetof(swr.ImmData)}, {"ibv_send_wr.wr.rdma.remote_addr", unsafe.Offsetof(swr.RemoteAddr)},
		{"ibv_send_wr.wr.rdma.rkey", unsafe.Offsetof(swr.RKey)},
		{"sizeof ibv_recv_wr", unsafe.Sizeof(rwr)}, {"ibv_recv_wr.wr_id", unsafe.Offsetof(rwr.WRID)}, {"ibv_recv_wr.next", unsafe.Offsetof(rwr.Next)}, {"ibv_recv_wr.sg_list", unsafe.Offsetof(rwr.SGList)}, {"ibv_recv_wr.num_sge", unsafe.Offsetof(rwr.NumSGE)},
		{"sizeof ibv_wc", unsafe.Sizeof(wc)}, {"ibv_wc.wr_id", unsafe.Offsetof(wc.WRID)}, {"ibv_wc.status", unsafe.Offsetof(wc.Status)}, {"ibv_wc.opcode", unsafe.Offsetof(wc.Opcode)}, {"ibv_wc.vendor_err", unsafe.Offsetof(wc.VendorErr)}, {"ibv_wc.byte_len", unsafe.Offsetof(wc.ByteLen)},
		{"ibv_wc.imm_data", unsafe.Offsetof(wc.ImmData)}, {"ibv_wc.qp_num", unsafe.Offsetof(wc.QPNum)}, {"ibv_wc.src_qp", unsafe.Offsetof(wc.SrcQP)}, {"ibv_wc.wc_flags", unsafe.Offsetof(wc.WCFlags)}, {"ibv_wc.pkey_index", unsafe.Offsetof(wc.PKeyIndex)},
		{"ibv_wc.slid", unsafe.Offsetof(wc.SLID)}, {"ibv_wc.sl", unsafe.Offsetof(wc.SL)}, {"ibv_wc.dlid_path_bits", unsafe.Offsetof(wc.DLIDPathBits)},
		{"sizeof ibv_qp_cap", unsafe.Sizeof(cp)}, {"ibv_qp_cap.max_send_wr", unsafe.Offsetof(cp.MaxSendWR)}, {"ibv_qp_cap.max_recv_wr", unsafe.Offsetof(cp.MaxRecvWR)}, {"ibv_qp_cap.max_send_sge", unsafe.Offsetof(cp.MaxSendSGE)},
		{"ibv_qp_cap.max_recv_sge", unsafe.Offsetof(cp.MaxRecvSGE)}, {"ibv_qp_cap.max_inline_data", unsafe.Offsetof(cp.MaxInlineData)},
		{"sizeof ibv_qp_init_attr", unsafe.Sizeof(qia)}, {"ibv_qp_init_attr.qp_context", unsafe.Offsetof(qia.QPContext)}, {"ibv_qp_init_attr.send_cq", unsafe.Offsetof(qia.SendCQ)}, {"ibv_qp_init_attr.recv_cq", unsafe.Offsetof(qia.RecvCQ)},
		{"ibv_qp_init_attr.srq", unsafe.Offsetof(qia.SRQ)}, {"ibv_qp_init_attr.cap", unsafe.Offsetof(qia.Cap)}, {"ibv_qp_init_attr.qp_type", unsafe.Offsetof(qia.QPType)}, {"ibv_qp_init_attr.sq_sig_all", unsafe.Offsetof(qia.SQSigAll)},
		{"sizeof rdma_conn_param", unsafe.Sizeof(conn)}, {"rdma_conn_param.private_data", unsafe.Offsetof(conn.PrivateData)}, {"rdma_conn_param.private_data_len", unsafe.Offsetof(conn.PrivateDataLen)},
		{"rdma_conn_param.responder_resources", unsafe.Offsetof(conn.ResponderResources)}, {"rdma_conn_param.initiator_depth", unsafe.Offsetof(conn.InitiatorDepth)}, {"rdma_conn_param.flow_control", unsafe.Offsetof(conn.FlowControl)},
		{"rdma_conn_param.retry_count", unsafe.Offsetof(conn.RetryCount)}, {"rdma_conn_param.rnr_retry_count", unsafe.Offsetof(conn.RNRRetryCount)}, {"rdma_conn_param.srq", unsafe.Offsetof(conn.SRQ)},
		{"rdma_conn_param.qp_num", unsafe.Offsetof(conn.QPNum)},
		{"sizeof rdma_addrinfo", unsafe.Sizeof(ai)}, {"rdma_addrinfo.ai_flags", unsafe.Offsetof(ai.Flags)}, {"rdma_addrinfo.ai_family", unsafe.Offsetof(ai.Family)}, {"rdma_addrinfo.ai_qp_type", unsafe.Offsetof(ai.QPType)},
		{"rdma_addrinfo.ai_port_space", unsafe.Offsetof(ai.PortSpace)}, {"rdma_addrinfo.ai_src_len", unsafe.Offsetof(ai.SrcLen)}, {"rdma_addrinfo.ai_dst_len", unsafe.Offsetof(ai.DstLen)},
		{"rdma_addrinfo.ai_src_addr", unsafe.Offsetof(ai.SrcAddr)}, {"rdma_addrinfo.ai_dst_addr", unsafe.Offsetof(ai.DstAddr)}, {"rdma_addrinfo.ai_src_canonname", unsafe.Offsetof(ai.SrcCanonName)},
		{"rdma_addrinfo.ai_dst_canonname", unsafe.Offsetof(ai.DstCanonName)}, {"rdma_addrinfo.ai_route_len", unsafe.Offsetof(ai.RouteLen)}, {"rdma_addrinfo.ai_route", unsafe.Offsetof(ai.Route)},
		{"rdma_addrinfo.ai_connect_len", unsafe.Offsetof(ai.ConnectLen)}, {"rdma_addrinfo.ai_connect", unsafe.Offsetof(ai.Connect)}, {"rdma_addrinfo.ai_next", unsafe.Offsetof(ai.Next)},
		{"ibv_context.ops.poll_cq", ibv.ContextPollCQ}, {"ibv_context.ops.req_notify_cq", ibv.ContextReqNotifyCQ}, {"ibv_context.ops.post_send", ibv.ContextPostSend},
		{"ibv_context.ops.post_recv", ibv.ContextPostRecv}, {"ibv_context.num_comp_vectors", ibv.ContextNumCompVectors}, {"ibv_cq.context", ibv.CQContext}, {"ibv_qp.context", ibv.QPContext},
		{"ibv_comp_channel.fd", ibv.CompChannelFD}, {"rdma_event_channel.fd", ibv.EventChannelFD}, {"ibv_mr.lkey", ibv.MRLKey}, {"ibv_mr.rkey", ibv.MRRKey}, {"rdma_cm_id.verbs", ibv.CMIDVerbs},
		{"rdma_cm_id.qp", ibv.CMIDQP}, {"rdma_cm_id.route.addr.src_addr", ibv.CMIDSrcAddr}, {"rdma_cm_id.route.addr.dst_addr", ibv.CMIDDstAddr}, {"rdma_cm_event.id", ibv.CMEventID},
		{"rdma_cm_event.event", ibv.CMEventEvent}, {"rdma_cm_event.param.conn.private_data", ibv.CMEventPrivateData}, {"rdma_cm_event.param.conn.private_data_len", ibv.CMEventPrivateDataLen},
		{"IBV_WC_SUCCESS", ibv.WCSuccess}, {"IBV_WC_LOC_LEN_ERR", ibv.WCLocLenErr}, {"IBV_WC_WR_FLUSH_ERR", ibv.WCWRFlushErr}, {"IBV_WC_REM_INV_REQ_ERR", ibv.WCRemInvReqErr}, {"IBV_WC_REM_ACCESS_ERR", ibv.WCRemAccessErr},
		{"IBV_WC_RETRY_EXC_ERR", ibv.WCRetryExcErr}, {"IBV_WC_RNR_RETRY_EXC_ERR", ibv.WCRNRRetryExcErr}, {"IBV_WC_SEND", ibv.WCOpSend}, {"IBV_WC_RDMA_WRITE", ibv.WCOpRDMAWrite}, {"IBV_WC_RECV", ibv.WCOpRecv},
		{"IBV_WC_RECV_RDMA_WITH_IMM", ibv.WCOpRecvRDMAImm}, {"IBV_WC_WITH_IMM", ibv.WCWithImm}, {"IBV_WR_RDMA_WRITE_WITH_IMM", ibv.WROpRDMAWriteImm}, {"IBV_WR_SEND", ibv.WROpSend}, {"IBV_SEND_SIGNALED", ibv.SendSignaled},
		{"IBV_SEND_INLINE", ibv.SendInline}, {"IBV_ACCESS_LOCAL_WRITE", ibv.AccessLocalWrite}, {"IBV_ACCESS_REMOTE_WRITE", ibv.AccessRemoteWrite}, {"IBV_QPT_RC", ibv.QPTypeRC}, {"IBV_QPT_UC", ibv.QPTypeUC}, {"RDMA_PS_TCP", ibv.PortSpaceTCP},
		{"RDMA_PS_IB", ibv.PortSpaceIB}, {"RAI_PASSIVE", ibv.AIPassive}, {"RDMA_CM_EVENT_CONNECT_REQUEST", ibv.CMEventConnectRequest}, {"RDMA_CM_EVENT_CONNECT_ERROR", ibv.CMEventConnectError}, {"RDMA_CM_EVENT_UNREACHABLE", ibv.CMEventUnreachable},
		{"RDMA_CM_EVENT_REJECTED", ibv.CMEventRejected}, {"RDMA_CM_EVENT_ESTABLISHED", ibv.CMEventEstablished}, {"RDMA_CM_EVENT_DISCONNECTED", ibv.CMEventDisconnected}, {"RDMA_CM_EVENT_DEVICE_REMOVAL", ibv.CMEventDeviceRemoval},
	}
	c := cabi.Values()
	if len(c) != len(ours) {
		t.Fatalf("cabi lists %d values, this test %d: keep the two lists in step", len(c), len(ours))
	}
	for i, o := range ours {
		if int64(o.v) != c[i] {
			t.Errorf("%s: ours %d, the headers' %d", o.name, o.v, c[i])
		}
	}
}
