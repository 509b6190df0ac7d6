//go:build linux && (amd64 || arm64)

// Package ibv lays out the parts of rdma-core's C ABI (infiniband/verbs.h,
// rdma/rdma_cma.h) that server/rdma's pure-Go provider reads and writes:
// the structs it hands to libibverbs and librdmacm as Go structs of the
// same layout, the offsets of the fields it reads in structs the
// libraries own, and the enum values it uses. The layout is the LP64 one
// of linux/amd64 and linux/arm64 (the same on both); abi_test.go (a cgo
// test, run wherever rdma-core's headers are installed) checks every
// offset, size and value here against the headers' own offsetof, sizeof
// and enums. rdma-core keeps this ABI stable: the inline verbs
// (ibv_post_send, ibv_post_recv, ibv_poll_cq, ibv_req_notify_cq) call
// through struct ibv_context_ops, whose slots never move.
package ibv

// SGE is struct ibv_sge.
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// SendWR is struct ibv_send_wr (128 bytes), with the rdma member of its
// wr union (remote_addr, rkey) named; the other unions are padding.
type SendWR struct {
	WRID       uint64
	Next       uintptr // struct ibv_send_wr *
	SGList     uintptr // struct ibv_sge *
	NumSGE     int32
	Opcode     uint32
	SendFlags  uint32
	ImmData    uint32 // network byte order
	RemoteAddr uint64 // wr.rdma.remote_addr
	RKey       uint32 // wr.rdma.rkey
	_          [20]byte
	_          [56]byte // qp_type union, bind_mw/tso union
}

// RecvWR is struct ibv_recv_wr.
type RecvWR struct {
	WRID   uint64
	Next   uintptr // struct ibv_recv_wr *
	SGList uintptr // struct ibv_sge *
	NumSGE int32
	_      int32
}

// WC is struct ibv_wc.
type WC struct {
	WRID         uint64
	Status       uint32
	Opcode       uint32
	VendorErr    uint32
	ByteLen      uint32
	ImmData      uint32 // network byte order
	QPNum        uint32
	SrcQP        uint32
	WCFlags      uint32
	PKeyIndex    uint16
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
	_            [2]byte
}

// QPCap is struct ibv_qp_cap.
type QPCap struct {
	MaxSendWR, MaxRecvWR, MaxSendSGE, MaxRecvSGE, MaxInlineData uint32
}

// QPInitAttr is struct ibv_qp_init_attr.
type QPInitAttr struct {
	QPContext uintptr
	SendCQ    uintptr // struct ibv_cq *
	RecvCQ    uintptr
	SRQ       uintptr
	Cap       QPCap
	QPType    uint32
	SQSigAll  int32
	_         [4]byte
}

// ConnParam is struct rdma_conn_param.
type ConnParam struct {
	PrivateData        uintptr
	PrivateDataLen     uint8
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8
	RNRRetryCount      uint8
	SRQ                uint8
	_                  uint8
	QPNum              uint32
	_                  [4]byte
}

// AddrInfo is struct rdma_addrinfo.
type AddrInfo struct {
	Flags        int32
	Family       int32
	QPType       int32
	PortSpace    int32
	SrcLen       uint32
	DstLen       uint32
	SrcAddr      uintptr // struct sockaddr *
	DstAddr      uintptr
	SrcCanonName uintptr
	DstCanonName uintptr
	RouteLen     uintptr
	Route        uintptr
	ConnectLen   uintptr
	Connect      uintptr
	Next         uintptr
}

// Offsets of the fields read in structs the libraries own.
const (
	// struct ibv_context: ops.poll_cq, ops.req_notify_cq, ops.post_send,
	// ops.post_recv (function pointers), num_comp_vectors.
	ContextPollCQ         = 96
	ContextReqNotifyCQ    = 104
	ContextPostSend       = 208
	ContextPostRecv       = 216
	ContextNumCompVectors = 272
	// struct ibv_cq.context, struct ibv_qp.context.
	CQContext = 0
	QPContext = 0
	// struct ibv_comp_channel.fd, struct rdma_event_channel.fd.
	CompChannelFD  = 8
	EventChannelFD = 0
	// struct ibv_mr.lkey, .rkey.
	MRLKey = 36
	MRRKey = 40
	// struct rdma_cm_id: verbs, qp, route.addr.src_addr, route.addr.dst_addr
	// (each address a sockaddr_storage).
	CMIDVerbs   = 0
	CMIDQP      = 24
	CMIDSrcAddr = 32
	CMIDDstAddr = 160
	// struct rdma_cm_event: id, event, param.conn.private_data,
	// param.conn.private_data_len.
	CMEventID             = 0
	CMEventEvent          = 16
	CMEventPrivateData    = 24
	CMEventPrivateDataLen = 32
)

// Enum values.
const (
	WCSuccess         = 0      // IBV_WC_SUCCESS
	WCLocLenErr       = 1      // IBV_WC_LOC_LEN_ERR
	WCWRFlushErr      = 5      // IBV_WC_WR_FLUSH_ERR
	WCRemInvReqErr    = 9      // IBV_WC_REM_INV_REQ_ERR
	WCRemAccessErr    = 10     // IBV_WC_REM_ACCESS_ERR
	WCRetryExcErr     = 12     // IBV_WC_RETRY_EXC_ERR
	WCRNRRetryExcErr  = 13     // IBV_WC_RNR_RETRY_EXC_ERR
	WCOpSend          = 0      // IBV_WC_SEND
	WCOpRDMAWrite     = 1      // IBV_WC_RDMA_WRITE
	WCOpRecv          = 128    // IBV_WC_RECV
	WCOpRecvRDMAImm   = 129    // IBV_WC_RECV_RDMA_WITH_IMM
	WCWithImm         = 2      // IBV_WC_WITH_IMM
	WROpRDMAWriteImm  = 1      // IBV_WR_RDMA_WRITE_WITH_IMM
	WROpSend          = 2      // IBV_WR_SEND
	SendSignaled      = 2      // IBV_SEND_SIGNALED
	SendInline        = 8      // IBV_SEND_INLINE
	AccessLocalWrite  = 1      // IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite = 2      // IBV_ACCESS_REMOTE_WRITE
	QPTypeRC          = 2      // IBV_QPT_RC
	QPTypeUC          = 3      // IBV_QPT_UC
	PortSpaceTCP      = 0x0106 // RDMA_PS_TCP
	PortSpaceIB       = 0x013F // RDMA_PS_IB
	AIPassive         = 1      // RAI_PASSIVE
)

// RDMA_CM_EVENT_* values.
const (
	CMEventConnectRequest = 4
	CMEventConnectError   = 6
	CMEventUnreachable    = 7
	CMEventRejected       = 8
	CMEventEstablished    = 9
	CMEventDisconnected   = 10
	CMEventDeviceRemoval  = 11
)
