//go:build cgo && linux

// Package cabi gives rdma-core's C ABI as its headers state it (offsetof,
// sizeof, enum values), for ibv's test only: it is imported by no shipped
// code, and needs cgo and rdma-core's headers (Debian: libibverbs-dev,
// librdmacm-dev).
package cabi

/*
#include <stddef.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define O(s, f) (long)offsetof(struct s, f)
#define Z(s) (long)sizeof(struct s)

static const long values[] = {
	Z(ibv_sge), O(ibv_sge, addr), O(ibv_sge, length), O(ibv_sge, lkey),
	Z(ibv_send_wr), O(ibv_send_wr, wr_id), O(ibv_send_wr, next), O(ibv_send_wr, sg_list), O(ibv_send_wr, num_sge),
	O(ibv_send_wr, opcode), O(ibv_send_wr, send_flags), O(ibv_send_wr, imm_data), O(ibv_send_wr, wr.rdma.remote_addr),
	O(ibv_send_wr, wr.rdma.rkey),
	Z(ibv_recv_wr), O(ibv_recv_wr, wr_id), O(ibv_recv_wr, next), O(ibv_recv_wr, sg_list), O(ibv_recv_wr, num_sge),
	Z(ibv_wc), O(ibv_wc, wr_id), O(ibv_wc, status), O(ibv_wc, opcode), O(ibv_wc, vendor_err), O(ibv_wc, byte_len),
	O(ibv_wc, imm_data), O(ibv_wc, qp_num), O(ibv_wc, src_qp), O(ibv_wc, wc_flags), O(ibv_wc, pkey_index),
	O(ibv_wc, slid), O(ibv_wc, sl), O(ibv_wc, dlid_path_bits),
	Z(ibv_qp_cap), O(ibv_qp_cap, max_send_wr), O(ibv_qp_cap, max_recv_wr), O(ibv_qp_cap, max_send_sge),
	O(ibv_qp_cap, max_recv_sge), O(ibv_qp_cap, max_inline_data),
	Z(ibv_qp_init_attr), O(ibv_qp_init_attr, qp_context), O(ibv_qp_init_attr, send_cq), O(ibv_qp_init_attr, recv_cq),
	O(ibv_qp_init_attr, srq), O(ibv_qp_init_attr, cap), O(ibv_qp_init_attr, qp_type), O(ibv_qp_init_attr, sq_sig_all),
	Z(rdma_conn_param), O(rdma_conn_param, private_data), O(rdma_conn_param, private_data_len),
	O(rdma_conn_param, responder_resources), O(rdma_conn_param, initiator_depth), O(rdma_conn_param, flow_control),
	O(rdma_conn_param, retry_count), O(rdma_conn_param, rnr_retry_count), O(rdma_conn_param, srq),
	O(rdma_conn_param, qp_num),
	Z(rdma_addrinfo), O(rdma_addrinfo, ai_flags), O(rdma_addrinfo, ai_family), O(rdma_addrinfo, ai_qp_type),
	O(rdma_addrinfo, ai_port_space), O(rdma_addrinfo, ai_src_len), O(rdma_addrinfo, ai_dst_len),
	O(rdma_addrinfo, ai_src_addr), O(rdma_addrinfo, ai_dst_addr), O(rdma_addrinfo, ai_src_canonname),
	O(rdma_addrinfo, ai_dst_canonname), O(rdma_addrinfo, ai_route_len), O(rdma_addrinfo, ai_route),
	O(rdma_addrinfo, ai_connect_len), O(rdma_addrinfo, ai_connect), O(rdma_addrinfo, ai_next),
	O(ibv_context, ops.poll_cq), O(ibv_context, ops.req_notify_cq), O(ibv_context, ops.post_send),
	O(ibv_context, ops.post_recv), O(ibv_context, num_comp_vectors), O(ibv_cq, context), O(ibv_qp, context),
	O(ibv_comp_channel, fd), O(rdma_event_channel, fd), O(ibv_mr, lkey), O(ibv_mr, rkey), O(rdma_cm_id, verbs),
	O(rdma_cm_id, qp), O(rdma_cm_id, route.addr.src_addr), O(rdma_cm_id, route.addr.dst_addr), O(rdma_cm_event, id),
	O(rdma_cm_event, event), O(rdma_cm_event, param.conn.private_data), O(rdma_cm_event, param.conn.private_data_len),
	IBV_WC_SUCCESS, IBV_WC_LOC_LEN_ERR, IBV_WC_WR_FLUSH_ERR, IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_ACCESS_ERR,
	IBV_WC_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RECV,
	IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND, IBV_SEND_SIGNALED,
	IBV_SEND_INLINE, IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_QPT_RC, IBV_QPT_UC, RDMA_PS_TCP,
	RDMA_PS_IB, RAI_PASSIVE, RDMA_CM_EVENT_CONNECT_REQUEST, RDMA_CM_EVENT_CONNECT_ERROR, RDMA_CM_EVENT_UNREACHABLE,
	RDMA_CM_EVENT_REJECTED, RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_DISCONNECTED, RDMA_CM_EVENT_DEVICE_REMOVAL,
};
static long value(int i) { return values[i]; }
static int nvalues(void) { return (int)(sizeof values / sizeof values[0]); }
*/
import "C"

// Values is the headers' offsetof, sizeof and enum values, in the order
// ibv's test lists them.
func Values() []int64 {
	v := make([]int64, int(C.nvalues()))
	for i := range v {
		v[i] = int64(C.value(C.int(i)))
	}
	return v
}
