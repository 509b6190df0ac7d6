//go:build linux && (amd64 || arm64) && !nordma

package rdma

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"

	"github.com/dpulab/dpulab/server/rdma/internal/ibv"
)

// This file is the provider's verbs (linux/amd64 and linux/arm64, with or
// without cgo): libibverbs.so.1 and librdmacm.so.1 opened at run time with
// purego and called through their symbols; the verbs verbs.h defines
// inline (ibv_post_send, ibv_post_recv, ibv_poll_cq, ibv_req_notify_cq)
// called, as the inline functions do, through the device context's ops
// table (struct ibv_context_ops, an ABI rdma-core keeps stable).
// provider.go builds QP, the listener and the dialer on them. (They began
// as a Go mirror of a C layer of ours, dplverbs_rdmacore.c, retired in
// issue 31; the pv* names and their setup, errors and rules are that
// layer's.)
//
// Memory the libraries or the device read or write is never Go's: the
// registered regions, the work requests, the scatter list, the
// completions, the out-pointers, the strings and the structs handed to
// librdmacm are in mmap'd pages (per queue pair: a page for posting and
// polling under the queue pair's lock, a page for the waiter, a page for
// the connection manager), so no Go pointer ever reaches C code, as
// purego's rules (those of cgo) require. The libraries' own structs
// (rdma_cm_id, rdma_cm_event, ibv_context, ibv_mr, ...) are read at the
// offsets of package ibv, which a cgo test checks against the headers.
// Both architectures are little-endian: imm_data, in network byte order in
// the work request and the completion, is byte-swapped.

// fn holds the entry points: rdmaCore's list (rdmacore.go), plus libc's
// errno and strerror (errors worded as strerror(errno) words them).
var fn struct {
	ibvAllocPD, ibvDeallocPD, ibvRegMR, ibvDeregMR                              uintptr
	ibvCreateCompChannel, ibvDestroyCompChannel, ibvCreateCQ, ibvDestroyCQ      uintptr
	ibvGetCQEvent, ibvAckCQEvents                                               uintptr
	rdmaCreateEventChannel, rdmaDestroyEventChannel                             uintptr
	rdmaGetaddrinfo, rdmaFreeaddrinfo, rdmaCreateEP, rdmaDestroyID              uintptr
	rdmaMigrateID, rdmaListen, rdmaConnect, rdmaAccept, rdmaReject              uintptr
	rdmaDisconnect, rdmaGetCMEvent, rdmaAckCMEvent, rdmaCreateQP, rdmaDestroyQP uintptr
	errnoLocation, strerror                                                     uintptr
}

var pvInitDone bool

// pvInit: loads the libraries and their entry points; nil, or
// the reason. Called once, under ProviderReady's Once.
func pvInit() error {
	if pvInitDone {
		return nil
	}
	const flags = purego.RTLD_NOW | purego.RTLD_LOCAL
	v, verr := purego.Dlopen("libibverbs.so.1", flags)
	c, cerr := purego.Dlopen("librdmacm.so.1", flags)
	if verr != nil {
		return fmt.Errorf("cannot load libibverbs.so.1: %v", verr)
	}
	if cerr != nil {
		return fmt.Errorf("cannot load librdmacm.so.1: %v", cerr)
	}
	libc, err := purego.Dlopen("libc.so.6", flags)
	if err != nil {
		return fmt.Errorf("cannot load libc.so.6: %v", err)
	}
	for _, s := range []struct {
		h    uintptr
		lib  string
		name string
		to   *uintptr
	}{
		{v, "libibverbs.so.1", "ibv_alloc_pd", &fn.ibvAllocPD},
		{v, "libibverbs.so.1", "ibv_dealloc_pd", &fn.ibvDeallocPD},
		{v, "libibverbs.so.1", "ibv_reg_mr", &fn.ibvRegMR},
		{v, "libibverbs.so.1", "ibv_dereg_mr", &fn.ibvDeregMR},
		{v, "libibverbs.so.1", "ibv_create_comp_channel", &fn.ibvCreateCompChannel},
		{v, "libibverbs.so.1", "ibv_destroy_comp_channel", &fn.ibvDestroyCompChannel},
		{v, "libibverbs.so.1", "ibv_create_cq", &fn.ibvCreateCQ},
		{v, "libibverbs.so.1", "ibv_destroy_cq", &fn.ibvDestroyCQ},
		{v, "libibverbs.so.1", "ibv_get_cq_event", &fn.ibvGetCQEvent},
		{v, "libibverbs.so.1", "ibv_ack_cq_events", &fn.ibvAckCQEvents},
		{c, "librdmacm.so.1", "rdma_create_event_channel", &fn.rdmaCreateEventChannel},
		{c, "librdmacm.so.1", "rdma_destroy_event_channel", &fn.rdmaDestroyEventChannel},
		{c, "librdmacm.so.1", "rdma_getaddrinfo", &fn.rdmaGetaddrinfo},
		{c, "librdmacm.so.1", "rdma_freeaddrinfo", &fn.rdmaFreeaddrinfo},
		{c, "librdmacm.so.1", "rdma_create_ep", &fn.rdmaCreateEP},
		{c, "librdmacm.so.1", "rdma_destroy_id", &fn.rdmaDestroyID},
		{c, "librdmacm.so.1", "rdma_migrate_id", &fn.rdmaMigrateID},
		{c, "librdmacm.so.1", "rdma_listen", &fn.rdmaListen},
		{c, "librdmacm.so.1", "rdma_connect", &fn.rdmaConnect},
		{c, "librdmacm.so.1", "rdma_accept", &fn.rdmaAccept},
		{c, "librdmacm.so.1", "rdma_reject", &fn.rdmaReject},
		{c, "librdmacm.so.1", "rdma_disconnect", &fn.rdmaDisconnect},
		{c, "librdmacm.so.1", "rdma_get_cm_event", &fn.rdmaGetCMEvent},
		{c, "librdmacm.so.1", "rdma_ack_cm_event", &fn.rdmaAckCMEvent},
		{c, "librdmacm.so.1", "rdma_create_qp", &fn.rdmaCreateQP},
		{c, "librdmacm.so.1", "rdma_destroy_qp", &fn.rdmaDestroyQP},
		{libc, "libc.so.6", "__errno_location", &fn.errnoLocation},
		{libc, "libc.so.6", "strerror", &fn.strerror},
	} {
		p, err := purego.Dlsym(s.h, s.name)
		if err != nil || p == 0 {
			return fmt.Errorf("%s lacks %s: rdma-core is too old", s.lib, s.name)
		}
		*s.to = p
	}
	pvInitDone = true
	return nil
}

// call calls a C function whose failure needs no errno.
func call(f uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(f, args...)
	return r
}

// callErrno calls a C function and reads errno on the same OS thread
// right after it (purego reports no errno on Linux). errno means
// something only when the function says it failed.
func callErrno(f uintptr, args ...uintptr) (uintptr, syscall.Errno) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, _, _ := purego.SyscallN(f, args...)
	e := *cptr[int32](call(fn.errnoLocation))
	return r, syscall.Errno(e)
}

// cint is a C int result.
func cint(r uintptr) int { return int(int32(r)) }

// cptr views C memory at p (never Go memory) as a *T.
func cptr[T any](p uintptr) *T { return *(**T)(unsafe.Pointer(&p)) }

// strerror is libc's wording of e.
func strerror(e syscall.Errno) string {
	if fn.strerror == 0 {
		return e.Error()
	}
	return cstring(call(fn.strerror, uintptr(e)), 256)
}

// cstring reads a NUL-terminated C string of at most max bytes.
func cstring(p uintptr, max int) string {
	if p == 0 {
		return ""
	}
	b := unsafe.Slice(cptr[byte](p), max)
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// cmem is memory outside the Go heap (an anonymous mapping) that C code
// may read and write.
type cmem struct{ b []byte }

func newCmem(n int) (*cmem, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %v", n, err)
	}
	return &cmem{b: b}, nil
}

func (m *cmem) free() {
	if m != nil && m.b != nil {
		unix.Munmap(m.b)
		m.b = nil
	}
}

// at is the C address of byte off.
func (m *cmem) at(off int) uintptr { return uintptr(unsafe.Pointer(&m.b[off])) }

// str writes s NUL-terminated at off and gives its C address.
func (m *cmem) str(off int, s string) uintptr {
	copy(m.b[off:], s)
	m.b[off+len(s)] = 0
	return m.at(off)
}

func loadPtr(p uintptr) uintptr { return *cptr[uintptr](p) }

// The per-queue-pair page layout.
const (
	pageSize = 4096
	// page 0, under the queue pair's lock: posting and polling.
	hotSGE    = 0
	hotSendWR = 16
	hotRecvWR = hotSendWR + 128
	hotBad    = hotRecvWR + 32
	hotWC     = 256 // 64 completions of 48 bytes
	pvPollMax = 64
	// page 1, the waiter's alone: ibv_get_cq_event's out-pointers.
	waitCQ  = pageSize
	waitCtx = pageSize + 8
	// page 2, the connection manager's (setup, events; under the lock
	// once the queue pair is shared).
	cmEvent   = 2 * pageSize
	cmParam   = 2*pageSize + 16
	cmPrivate = 2*pageSize + 64  // up to 148 bytes of private data
	cmAttr    = 2*pageSize + 256 // struct ibv_qp_init_attr
)

// dplMagic: our clients say who they are in the connect request's private
// data, so a server refuses a client of the other queue-pair type with
// the reason; Valkey's clients send none (RC).
var dplMagic = [4]byte{'D', 'P', 'L', 'R'}

// pvOpts are a queue pair's settings (ProviderOptions, as the verbs take them).
type pvOpts struct {
	typ, sqSize, rqSize, inlineSize, retryCount, compVector int
}

// pvListener is a listening id on its own event channel.
type pvListener struct {
	ch, id uintptr
	chfd   int
	wakefd int
	typ    int
	mem    *cmem // rdma_get_cm_event's out-pointer
}

// pvMR is a registered region: buf is page-aligned mmap'd memory with a guard
// page on each side.
type pvMR struct {
	buf        []byte
	mapping    []byte
	mr         uintptr // struct ibv_mr *
	addr       uint64
	rkey, lkey uint32
}

// pvQP is a connection's id, queue pair, completion queue and channels.
type pvQP struct {
	id, ch, pd, cc, cq, qp uintptr
	chfd, ccfd             int
	hasQP, server          bool
	established, errstate  bool
	gone                   atomic.Bool
	wakefd                 int
	typ, sq, rq            int
	inlineSize, retry      int
	peerType               int
	cqEvents               uint32 // taken from the channel by pvWait, not yet acked
	mrs                    map[*pvMR]struct{}
	events                 []int
	mem                    *cmem
	// The inline verbs' entry points: the device context's ops.
	postSend, postRecv, pollCQ, reqNotify uintptr
}

// sockaddr reads a struct sockaddr's numeric host and port.
func sockaddr(p uintptr) (string, int) {
	b := unsafe.Slice(cptr[byte](p), 28)
	switch int(b[0]) | int(b[1])<<8 {
	case unix.AF_INET:
		return net.IP(append([]byte(nil), b[4:8]...)).String(), int(b[2])<<8 | int(b[3])
	case unix.AF_INET6:
		return net.IP(append([]byte(nil), b[8:24]...)).String(), int(b[2])<<8 | int(b[3])
	}
	return "", 0
}

// newID is new_id: an id of the queue pair's type for host:port (passive:
// to listen on), moved to channel ch: RC in the TCP port space, UC in the
// IB one with a UC id. An active id has its address and route resolved.
func newID(ch uintptr, host string, port int, src string, typ int, passive bool) (uintptr, error) {
	m, err := newCmem(pageSize)
	if err != nil {
		return 0, err
	}
	defer m.free()
	const (
		oHints = 0
		oRes   = 128
		oID    = 136
		oSS    = 256
		oHost  = 512
		oPort  = 1024
	)
	hints := cptr[ibv.AddrInfo](m.at(oHints))
	if passive {
		hints.Flags = ibv.AIPassive
	}
	hints.PortSpace, hints.QPType = ibv.PortSpaceTCP, ibv.QPTypeRC
	if typ == int(UC) {
		hints.PortSpace, hints.QPType = ibv.PortSpaceIB, ibv.QPTypeUC
	}
	if passive && (host == "" || host == "*" || host == "0.0.0.0" || host == "::") {
		host = ""
	}
	if len(host) > 400 {
		return 0, fmt.Errorf("rdma_getaddrinfo %s:%d: host name too long", host, port)
	}
	hostp := uintptr(0)
	shown := "*"
	if host != "" {
		hostp, shown = m.str(oHost, host), host
	}
	r, e := callErrno(fn.rdmaGetaddrinfo, hostp, m.str(oPort, fmt.Sprint(port)), m.at(oHints), m.at(oRes))
	if cint(r) != 0 {
		return 0, fmt.Errorf("rdma_getaddrinfo %s:%d: %s", shown, port, strerror(e))
	}
	res := cptr[ibv.AddrInfo](loadPtr(m.at(oRes)))
	// A source address picks the interface, and so the device, the
	// connection leaves by: rdma_create_ep resolves from ai_src_addr.
	osrc, osrclen := res.SrcAddr, res.SrcLen
	if !passive && src != "" {
		ss := m.b[oSS : oSS+128]
		ip := net.ParseIP(src)
		switch {
		case ip != nil && ip.To4() != nil:
			ss[0], ss[1] = byte(unix.AF_INET), 0
			copy(ss[4:8], ip.To4())
			res.SrcLen = 16
		case ip != nil:
			ss[0], ss[1] = byte(unix.AF_INET6), 0
			copy(ss[8:24], ip.To16())
			res.SrcLen = 28
		default:
			call(fn.rdmaFreeaddrinfo, loadPtr(m.at(oRes)))
			return 0, fmt.Errorf("source address %s: not a numeric IPv4 or IPv6 address", src)
		}
		res.SrcAddr = m.at(oSS)
	}
	r, saved := callErrno(fn.rdmaCreateEP, m.at(oID), loadPtr(m.at(oRes)), 0, 0)
	res.SrcAddr, res.SrcLen = osrc, osrclen
	call(fn.rdmaFreeaddrinfo, loadPtr(m.at(oRes)))
	if cint(r) != 0 {
		switch {
		case passive:
			hint := ""
			if saved == unix.EADDRNOTAVAIL || saved == unix.ENODEV {
				hint = " (no RDMA device has that address)"
			}
			return 0, fmt.Errorf("rdma_create_ep (bind %s:%d): %s%s", shown, port, strerror(saved), hint)
		case src != "":
			hint := ""
			if saved == unix.EADDRNOTAVAIL || saved == unix.ENODEV || saved == unix.EINVAL {
				hint = " (is the source address on an RDMA device's interface?)"
			}
			return 0, fmt.Errorf("rdma_create_ep (address and route from %s): %s%s", src, strerror(saved), hint)
		}
		return 0, fmt.Errorf("rdma_create_ep (address and route): %s", strerror(saved))
	}
	id := loadPtr(m.at(oID))
	if r, e := callErrno(fn.rdmaMigrateID, id, ch); cint(r) != 0 {
		call(fn.rdmaDestroyID, id)
		return 0, fmt.Errorf("rdma_migrate_id: %s", strerror(e))
	}
	return id, nil
}

// eventChannel creates a non-blocking rdma_cm event channel and gives its
// fd.
func eventChannel() (uintptr, int, error) {
	ch, e := callErrno(fn.rdmaCreateEventChannel)
	if ch == 0 {
		return 0, -1, fmt.Errorf("rdma_create_event_channel: %s", strerror(e))
	}
	fd := int(*cptr[int32](ch + ibv.EventChannelFD))
	unix.SetNonblock(fd, true)
	return ch, fd, nil
}

func newWakeFD() (int, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, fmt.Errorf("eventfd: %v", err)
	}
	return fd, nil
}

// pvListen: listens on host:port (port 0: a free one, the
// port given back).
func pvListen(host string, port, typ int) (*pvListener, int, error) {
	l := &pvListener{typ: typ, wakefd: -1}
	fail := func(err error) (*pvListener, int, error) {
		if l.id != 0 {
			call(fn.rdmaDestroyID, l.id)
		}
		if l.ch != 0 {
			call(fn.rdmaDestroyEventChannel, l.ch)
		}
		if l.wakefd >= 0 {
			unix.Close(l.wakefd)
		}
		l.mem.free()
		return nil, 0, err
	}
	var err error
	if l.wakefd, err = newWakeFD(); err != nil {
		return fail(err)
	}
	if l.mem, err = newCmem(pageSize); err != nil {
		return fail(err)
	}
	if l.ch, l.chfd, err = eventChannel(); err != nil {
		return fail(err)
	}
	if l.id, err = newID(l.ch, host, port, "", typ, true); err != nil {
		return fail(err)
	}
	if r, e := callErrno(fn.rdmaListen, l.id, 128); cint(r) != 0 {
		return fail(fmt.Errorf("rdma_listen: %s", strerror(e)))
	}
	_, bound := sockaddr(l.id + ibv.CMIDSrcAddr)
	if bound == 0 {
		bound = port
	}
	return l, bound, nil
}

func newPVQP() (*pvQP, error) {
	q := &pvQP{chfd: -1, ccfd: -1, mrs: map[*pvMR]struct{}{}}
	var err error
	if q.wakefd, err = newWakeFD(); err != nil {
		return nil, err
	}
	if q.mem, err = newCmem(3 * pageSize); err != nil {
		unix.Close(q.wakefd)
		return nil, err
	}
	return q, nil
}

// pollFDs is poll(2) that takes EINTR (Go's preemption signals) as
// nothing ready.
func pollFDs(pf []unix.PollFd, timeoutMs int) int {
	n, err := unix.Poll(pf, timeoutMs)
	if err != nil {
		return 0
	}
	return n
}

// pvAccept: waits up to timeoutMs for a connection request;
// a queue pair to set up with pvAcceptSetup, or nil (a nil error on a
// time-out, a wake-up or an event that is no request).
func pvAccept(l *pvListener, timeoutMs int) (*pvQP, error) {
	pf := []unix.PollFd{{Fd: int32(l.chfd), Events: unix.POLLIN}, {Fd: int32(l.wakefd), Events: unix.POLLIN}}
	if pollFDs(pf, timeoutMs) <= 0 || pf[1].Revents&unix.POLLIN != 0 {
		return nil, nil
	}
	if cint(call(fn.rdmaGetCMEvent, l.ch, l.mem.at(0))) != 0 {
		return nil, nil
	}
	ev := loadPtr(l.mem.at(0))
	if *cptr[int32](ev + ibv.CMEventEvent) != ibv.CMEventConnectRequest {
		call(fn.rdmaAckCMEvent, ev)
		return nil, nil
	}
	id := loadPtr(ev + ibv.CMEventID)
	q, err := newPVQP()
	if err != nil {
		call(fn.rdmaReject, id, 0, 0)
		call(fn.rdmaDestroyID, id)
		call(fn.rdmaAckCMEvent, ev)
		return nil, err
	}
	q.id = id
	q.server = true
	q.peerType = int(RC) // Valkey's clients say nothing: RC
	if pd, n := loadPtr(ev+ibv.CMEventPrivateData), *cptr[uint8](ev + ibv.CMEventPrivateDataLen); pd != 0 && n >= 5 {
		b := unsafe.Slice(cptr[byte](pd), 5)
		if [4]byte(b[:4]) == dplMagic {
			q.peerType = int(b[4])
		}
	}
	call(fn.rdmaAckCMEvent, ev)
	return q, nil
}

// pvWakeListener: a waiting pvAccept returns.
func pvWakeListener(l *pvListener) {
	unix.Write(l.wakefd, []byte{1, 0, 0, 0, 0, 0, 0, 0}) // a full counter: a wake-up is pending anyway
}

// pvListenerClose.
func pvListenerClose(l *pvListener) {
	call(fn.rdmaDestroyID, l.id)
	call(fn.rdmaDestroyEventChannel, l.ch)
	unix.Close(l.wakefd)
	l.mem.free()
}

// verbs creates the protection domain, completion channel, CQ and queue
// pair on the id's device.
func (q *pvQP) verbs(o *pvOpts) error {
	q.typ = int(RC)
	if o.typ == int(UC) {
		q.typ = int(UC)
	}
	q.sq, q.rq = 1024, 1024
	if o.sqSize > 0 {
		q.sq = o.sqSize
	}
	if o.rqSize > 0 {
		q.rq = o.rqSize
	}
	q.inlineSize = max(o.inlineSize, 0)
	q.retry = 7
	if o.retryCount > 0 && o.retryCount <= 7 {
		q.retry = o.retryCount
	}
	ctx := loadPtr(q.id + ibv.CMIDVerbs)
	if ctx == 0 {
		return errors.New("the connection has no RDMA device")
	}
	q.postSend = loadPtr(ctx + ibv.ContextPostSend)
	q.postRecv = loadPtr(ctx + ibv.ContextPostRecv)
	q.pollCQ = loadPtr(ctx + ibv.ContextPollCQ)
	q.reqNotify = loadPtr(ctx + ibv.ContextReqNotifyCQ)
	if q.postSend == 0 || q.postRecv == 0 || q.pollCQ == 0 || q.reqNotify == 0 {
		return errors.New("the RDMA device's provider lacks post_send, post_recv, poll_cq or req_notify_cq")
	}
	var e syscall.Errno
	if q.pd, e = callErrno(fn.ibvAllocPD, ctx); q.pd == 0 {
		return fmt.Errorf("ibv_alloc_pd: %s", strerror(e))
	}
	if q.cc, e = callErrno(fn.ibvCreateCompChannel, ctx); q.cc == 0 {
		return fmt.Errorf("ibv_create_comp_channel: %s", strerror(e))
	}
	q.ccfd = int(*cptr[int32](q.cc + ibv.CompChannelFD))
	unix.SetNonblock(q.ccfd, true)
	vec := o.compVector
	nvec := int(*cptr[int32](ctx + ibv.ContextNumCompVectors))
	if vec < 0 {
		vec = 0
		if nvec > 0 {
			vec = rand.IntN(nvec)
		}
	} else if nvec > 0 {
		vec %= nvec
	}
	if q.cq, e = callErrno(fn.ibvCreateCQ, ctx, uintptr(q.sq+q.rq), 0, q.cc, uintptr(vec)); q.cq == 0 {
		return fmt.Errorf("ibv_create_cq (%d entries, vector %d): %s", q.sq+q.rq, vec, strerror(e))
	}
	if rc := cint(call(q.reqNotify, q.cq, 0)); rc != 0 {
		return fmt.Errorf("ibv_req_notify_cq: %s", strerror(syscall.Errno(rc)))
	}
	a := cptr[ibv.QPInitAttr](q.mem.at(cmAttr))
	*a = ibv.QPInitAttr{SendCQ: q.cq, RecvCQ: q.cq, QPType: ibv.QPTypeRC,
		Cap: ibv.QPCap{MaxSendWR: uint32(q.sq), MaxRecvWR: uint32(q.rq), MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: uint32(q.inlineSize)}}
	name := "RC"
	if q.typ == int(UC) {
		a.QPType, name = ibv.QPTypeUC, "UC"
	}
	if r, e := callErrno(fn.rdmaCreateQP, q.id, q.pd, q.mem.at(cmAttr)); cint(r) != 0 {
		return fmt.Errorf("rdma_create_qp (%s, send %d, receive %d, inline %d): %s", name, q.sq, q.rq, q.inlineSize, strerror(e))
	}
	q.hasQP = true
	q.qp = loadPtr(q.id + ibv.CMIDQP)
	// The adapter may give more inline room than asked, never less.
	q.inlineSize = int(a.Cap.MaxInlineData)
	return nil
}

// pvPeer: the requesting client's address.
func pvPeer(q *pvQP) (string, int) { return sockaddr(q.id + ibv.CMIDDstAddr) }

// pvAcceptSetup: a client of the other type is
// refused with the reason; otherwise the queue pair is created (the qp
// must be destroyed on an error as well).
func pvAcceptSetup(q *pvQP, o *pvOpts) error {
	want := int(RC)
	if o.typ == int(UC) {
		want = int(UC)
	}
	if q.peerType != want {
		// The words travel in the reject's private data (at most 148
		// bytes in an IB CM REJ): who we are and what the client asked.
		self, port := sockaddr(q.id + ibv.CMIDSrcAddr)
		asked := RC
		if q.peerType == int(UC) {
			asked = UC
		}
		msg := modeMismatch(Addr{self, port}, QPType(want), asked)
		if len(msg) > 139 {
			msg = msg[:139]
		}
		copy(q.mem.b[cmPrivate:], msg)
		call(fn.rdmaReject, q.id, q.mem.at(cmPrivate), uintptr(len(msg)))
		return errors.New(msg)
	}
	var err error
	if q.ch, q.chfd, err = eventChannel(); err != nil {
		return err
	}
	if r, e := callErrno(fn.rdmaMigrateID, q.id, q.ch); cint(r) != 0 {
		return fmt.Errorf("rdma_migrate_id: %s", strerror(e))
	}
	if err := q.verbs(o); err != nil {
		call(fn.rdmaReject, q.id, 0, 0)
		return err
	}
	return nil
}

// pvConnect: resolves host:port (from the source address
// src when not empty) and creates the queue pair; gives the local address.
// Receives may be posted after it, then pvEstablish connects.
func pvConnect(host string, port int, src string, o *pvOpts) (*pvQP, string, int, error) {
	q, err := newPVQP()
	if err != nil {
		return nil, "", 0, err
	}
	if q.ch, q.chfd, err = eventChannel(); err != nil {
		pvDestroy(q)
		return nil, "", 0, err
	}
	typ := int(RC)
	if o.typ == int(UC) {
		typ = int(UC)
	}
	if q.id, err = newID(q.ch, host, port, src, typ, false); err == nil {
		err = q.verbs(o)
	}
	if err != nil {
		pvDestroy(q)
		return nil, "", 0, err
	}
	lh, lp := sockaddr(q.id + ibv.CMIDSrcAddr)
	return q, lh, lp, nil
}

func eventName(e int32) string {
	switch e {
	case ibv.CMEventRejected:
		return "rejected by the server"
	case ibv.CMEventUnreachable:
		return "server unreachable"
	case ibv.CMEventConnectError:
		return "connect error"
	case ibv.CMEventDisconnected:
		return "disconnected"
	case ibv.CMEventDeviceRemoval:
		return "device removed"
	}
	return "unexpected connection event"
}

func (q *pvQP) pushEvent(ev int) {
	if len(q.events) < 4 {
		q.events = append(q.events, ev)
	}
}

// pvEstablish: the server accepts, the client connects,
// within timeout.
func pvEstablish(q *pvQP, timeout time.Duration) error {
	p := cptr[ibv.ConnParam](q.mem.at(cmParam))
	*p = ibv.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: uint8(q.retry),
		RNRRetryCount: 7} // what libvalkey asks: the protocol has no credits
	var r uintptr
	var e syscall.Errno
	what := "rdma_accept"
	if q.server {
		r, e = callErrno(fn.rdmaAccept, q.id, q.mem.at(cmParam))
	} else {
		what = "rdma_connect"
		copy(q.mem.b[cmPrivate:], dplMagic[:])
		q.mem.b[cmPrivate+4] = byte(q.typ)
		p.PrivateData, p.PrivateDataLen = q.mem.at(cmPrivate), 5
		r, e = callErrno(fn.rdmaConnect, q.id, q.mem.at(cmParam))
	}
	if cint(r) != 0 {
		return fmt.Errorf("%s: %s", what, strerror(e))
	}
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("no connection within %d ms", timeout.Milliseconds())
		}
		pf := []unix.PollFd{{Fd: int32(q.chfd), Events: unix.POLLIN}}
		if pollFDs(pf, int(max(left.Milliseconds(), 1))) <= 0 {
			continue // a time-out is seen at the top; EINTR polls again
		}
		if cint(call(fn.rdmaGetCMEvent, q.ch, q.mem.at(cmEvent))) != 0 {
			continue
		}
		ev := loadPtr(q.mem.at(cmEvent))
		t := *cptr[int32](ev + ibv.CMEventEvent)
		why := ""
		if pd, n := loadPtr(ev+ibv.CMEventPrivateData), int(*cptr[uint8](ev + ibv.CMEventPrivateDataLen)); t == ibv.CMEventRejected && n > 0 && pd != 0 {
			// The server's words reach the terminal: printable ASCII only.
			b := unsafe.Slice(cptr[byte](pd), min(n, 127))
			w := make([]byte, 0, len(b))
			for _, c := range b {
				if c == 0 {
					break
				}
				if c < 0x20 || c > 0x7e {
					c = '?'
				}
				w = append(w, c)
			}
			why = string(w)
		}
		call(fn.rdmaAckCMEvent, ev)
		if t == ibv.CMEventEstablished {
			q.established = true
			q.pushEvent(int(EventEstablished))
			return nil
		}
		if why != "" {
			return fmt.Errorf("%s: %s", eventName(t), why)
		}
		return errors.New(eventName(t))
	}
}

// pvReg: page-aligned memory with a guard page on each side
// (registered memory must not move, and an overrun faults instead of
// corrupting), registered for local write, and remote write when asked.
func pvReg(q *pvQP, n int, remoteWrite bool) (*pvMR, error) {
	if n <= 0 || n > 64<<20 {
		return nil, fmt.Errorf("register %d bytes: size out of range", n)
	}
	pg := unix.Getpagesize()
	body := (n + pg - 1) / pg * pg
	mapping, err := unix.Mmap(-1, 0, body+2*pg, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %s", n, strerror(err.(syscall.Errno)))
	}
	if err := unix.Mprotect(mapping[pg:pg+body], unix.PROT_READ|unix.PROT_WRITE); err != nil {
		unix.Munmap(mapping)
		return nil, fmt.Errorf("mprotect: %s", strerror(err.(syscall.Errno)))
	}
	m := &pvMR{mapping: mapping, buf: mapping[pg : pg+n : pg+n]}
	access := uintptr(ibv.AccessLocalWrite)
	if remoteWrite {
		access |= ibv.AccessRemoteWrite
	}
	addr := uintptr(unsafe.Pointer(&m.buf[0]))
	mr, e := callErrno(fn.ibvRegMR, q.pd, addr, uintptr(n), access)
	if mr == 0 {
		hint := ""
		if e == unix.ENOMEM || e == unix.EPERM {
			hint = " (raise the locked-memory limit: ulimit -l unlimited)"
		}
		unix.Munmap(mapping)
		return nil, fmt.Errorf("ibv_reg_mr %d bytes: %s%s", n, strerror(e), hint)
	}
	m.mr, m.addr = mr, uint64(addr)
	m.lkey, m.rkey = *cptr[uint32](mr + ibv.MRLKey), *cptr[uint32](mr + ibv.MRRKey)
	q.mrs[m] = struct{}{}
	return m, nil
}

func freeMR(m *pvMR) {
	call(fn.ibvDeregMR, m.mr)
	unix.Munmap(m.mapping)
	m.buf, m.mapping = nil, nil
}

// pvDereg.
func pvDereg(q *pvQP, m *pvMR) int {
	if _, ok := q.mrs[m]; !ok {
		return dplELocal
	}
	delete(q.mrs, m)
	freeMR(m)
	return 0
}

// The post and poll errors.
const (
	dplEQPState = -1
	dplEFull    = -2
	dplELocal   = -3
	dplEOther   = -4
)

func (q *pvQP) localOK(m *pvMR, off, n int) bool {
	if _, ok := q.mrs[m]; !ok {
		return false
	}
	return off >= 0 && n >= 0 && off <= len(m.buf) && n <= len(m.buf)-off && n <= 1<<32-1
}

func postErr32(rc int) int {
	if rc == int(unix.ENOMEM) {
		return dplEFull
	}
	return dplEQPState
}

// pvPostRecv.
func pvPostRecv(q *pvQP, wrID uint64, m *pvMR, off, n int) int {
	if !q.hasQP || q.errstate {
		return dplEQPState
	}
	if !q.localOK(m, off, n) {
		return dplELocal
	}
	*cptr[ibv.SGE](q.mem.at(hotSGE)) = ibv.SGE{Addr: m.addr + uint64(off), Length: uint32(n), LKey: m.lkey}
	*cptr[ibv.RecvWR](q.mem.at(hotRecvWR)) = ibv.RecvWR{WRID: wrID, SGList: q.mem.at(hotSGE), NumSGE: 1}
	if rc := cint(call(q.postRecv, q.qp, q.mem.at(hotRecvWR), q.mem.at(hotBad))); rc != 0 {
		return postErr32(rc)
	}
	return 0
}

func (q *pvQP) post(opcode uint32, wrID uint64, m *pvMR, off, n int, raddr uint64, rkey, imm uint32, signaled bool) int {
	if !q.hasQP || !q.established || q.errstate {
		return dplEQPState
	}
	if !q.localOK(m, off, n) {
		return dplELocal
	}
	*cptr[ibv.SGE](q.mem.at(hotSGE)) = ibv.SGE{Addr: m.addr + uint64(off), Length: uint32(n), LKey: m.lkey}
	wr := cptr[ibv.SendWR](q.mem.at(hotSendWR))
	*wr = ibv.SendWR{WRID: wrID, SGList: q.mem.at(hotSGE), NumSGE: 1, Opcode: opcode}
	if signaled {
		wr.SendFlags |= ibv.SendSignaled
	}
	if n > 0 && n <= q.inlineSize {
		wr.SendFlags |= ibv.SendInline
	}
	if opcode == ibv.WROpRDMAWriteImm {
		wr.ImmData = bits.ReverseBytes32(imm) // htonl on a little-endian host
		wr.RemoteAddr, wr.RKey = raddr, rkey
	}
	if rc := cint(call(q.postSend, q.qp, q.mem.at(hotSendWR), q.mem.at(hotBad))); rc != 0 {
		return postErr32(rc)
	}
	return 0
}

// pvPostSend.
func pvPostSend(q *pvQP, wrID uint64, m *pvMR, off, n int, signaled bool) int {
	return q.post(ibv.WROpSend, wrID, m, off, n, 0, 0, 0, signaled)
}

// pvPostWriteImm.
func pvPostWriteImm(q *pvQP, wrID uint64, m *pvMR, off, n int, raddr uint64, rkey, imm uint32, signaled bool) int {
	return q.post(ibv.WROpRDMAWriteImm, wrID, m, off, n, raddr, rkey, imm, signaled)
}

func wcStatus(s uint32) Status {
	switch s {
	case ibv.WCSuccess:
		return StatusSuccess
	case ibv.WCWRFlushErr:
		return StatusFlushed
	case ibv.WCRNRRetryExcErr:
		return StatusRNRRetryExceeded
	case ibv.WCRemAccessErr:
		return StatusRemoteAccess
	case ibv.WCRemInvReqErr:
		return StatusRemoteInvalidRequest
	case ibv.WCLocLenErr:
		return StatusLocalLength
	case ibv.WCRetryExcErr:
		return StatusRetryExceeded
	}
	return 8 // DPL_WC_OTHER
}

// pvPoll: moves up to len(out) (at most 64) completions into
// out; how many, or dplEOther. The completion channel is pvWait's alone.
func pvPoll(q *pvQP, out []Completion) int {
	if q.cq == 0 {
		return 0
	}
	n := min(len(out), pvPollMax)
	k := cint(call(q.pollCQ, q.cq, uintptr(n), q.mem.at(hotWC)))
	if k < 0 {
		return dplEOther
	}
	wcs := unsafe.Slice(cptr[ibv.WC](q.mem.at(hotWC)), k)
	for i := range wcs {
		w := &wcs[i]
		// A failed completion's opcode is undefined: op 0, the Go side
		// reads it from the request id.
		var op Op
		if w.Status == ibv.WCSuccess {
			switch w.Opcode {
			case ibv.WCOpSend:
				op = OpSend
			case ibv.WCOpRDMAWrite:
				op = OpWrite
			case ibv.WCOpRecv:
				op = OpRecv
			case ibv.WCOpRecvRDMAImm:
				op = OpRecvWriteImm
			}
		} else {
			q.errstate = true
		}
		var imm uint32
		if w.WCFlags&ibv.WCWithImm != 0 {
			imm = bits.ReverseBytes32(w.ImmData) // ntohl
		}
		out[i] = Completion{WRID: w.WRID, Op: op, Status: wcStatus(w.Status), ByteLen: w.ByteLen, Imm: imm}
	}
	return k
}

// pvEvent: the next connection event (0: none).
func pvEvent(q *pvQP) int {
	if len(q.events) > 0 {
		ev := q.events[0]
		q.events = append(q.events[:0], q.events[1:]...)
		return ev
	}
	for q.ch != 0 && cint(call(fn.rdmaGetCMEvent, q.ch, q.mem.at(cmEvent))) == 0 {
		ev := loadPtr(q.mem.at(cmEvent))
		t := *cptr[int32](ev + ibv.CMEventEvent)
		call(fn.rdmaAckCMEvent, ev)
		if t == ibv.CMEventDisconnected || t == ibv.CMEventDeviceRemoval {
			q.errstate = true
			if !q.gone.Load() {
				q.gone.Store(true)
				return int(EventDisconnected)
			}
		}
	}
	return 0
}

// pvArm: asks for a notification of the next completion.
func pvArm(q *pvQP) {
	if q.cq != 0 {
		call(q.reqNotify, q.cq, 0)
	}
}

// pvWait: sleeps until a completion, an event, pvWake or
// timeoutMs (-1: no limit). It alone takes (and acknowledges) the
// completion channel's notifications. It reads only what never changes
// after setup, and the waiter's own page.
func pvWait(q *pvQP, timeoutMs int) {
	pf := []unix.PollFd{{Fd: int32(q.wakefd), Events: unix.POLLIN}, {Fd: int32(q.ccfd), Events: unix.POLLIN},
		{Fd: int32(q.chfd), Events: unix.POLLIN}}
	if pollFDs(pf, timeoutMs) <= 0 {
		return
	}
	if pf[0].Revents&unix.POLLIN != 0 {
		var drain [8]byte
		unix.Read(q.wakefd, drain[:]) // or taken by another waiter
	}
	if q.cc != 0 && pf[1].Revents&unix.POLLIN != 0 {
		// The notification fired and disarmed the CQ: take it off the
		// channel (or poll(2) would keep returning) and acknowledge in
		// batches; the caller re-arms and polls before it waits again.
		for cint(call(fn.ibvGetCQEvent, q.cc, q.mem.at(waitCQ), q.mem.at(waitCtx))) == 0 {
			q.cqEvents++
		}
		if q.cqEvents >= 64 {
			call(fn.ibvAckCQEvents, q.cq, uintptr(q.cqEvents))
			q.cqEvents = 0
		}
	}
}

// pvWake.
func pvWake(q *pvQP) {
	unix.Write(q.wakefd, []byte{1, 0, 0, 0, 0, 0, 0, 0}) // a full counter: already awake
}

// pvDisconnect.
func pvDisconnect(q *pvQP) {
	if q.established && !q.gone.Load() {
		call(fn.rdmaDisconnect, q.id)
		q.errstate = true
		q.gone.Store(true)
		q.pushEvent(int(EventDisconnected))
	}
}

// pvDestroy: disconnects and releases everything, regions
// included.
func pvDestroy(q *pvQP) {
	if q == nil {
		return
	}
	pvDisconnect(q)
	if q.hasQP {
		call(fn.rdmaDestroyQP, q.id)
	}
	for m := range q.mrs {
		freeMR(m)
	}
	clear(q.mrs)
	if q.cq != 0 {
		for q.cc != 0 && cint(call(fn.ibvGetCQEvent, q.cc, q.mem.at(waitCQ), q.mem.at(waitCtx))) == 0 {
			q.cqEvents++
		}
		if q.cqEvents > 0 {
			call(fn.ibvAckCQEvents, q.cq, uintptr(q.cqEvents))
		}
		call(fn.ibvDestroyCQ, q.cq)
	}
	if q.cc != 0 {
		call(fn.ibvDestroyCompChannel, q.cc)
	}
	if q.pd != 0 {
		call(fn.ibvDeallocPD, q.pd)
	}
	if q.id != 0 {
		// Events still queued on the id must be acked before it goes.
		for q.ch != 0 && cint(call(fn.rdmaGetCMEvent, q.ch, q.mem.at(cmEvent))) == 0 {
			call(fn.rdmaAckCMEvent, loadPtr(q.mem.at(cmEvent)))
		}
		call(fn.rdmaDestroyID, q.id)
	}
	if q.ch != 0 {
		call(fn.rdmaDestroyEventChannel, q.ch)
	}
	unix.Close(q.wakefd)
	q.mem.free()
}
