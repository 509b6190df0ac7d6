// Package rdma is the core of the bundled server's RDMA transport (issue
// 12): Valkey's "Redis over RDMA" protocol, written against a small
// verbs-level interface, with an in-memory fabric that runs it in tests.
//
// # What is built
//
//   - control.go: the 32-byte big-endian control messages of Valkey's
//     src/rdma.c (GetServerFeature, SetClientFeature, Keepalive,
//     RegisterXferMemory), encoded and decoded strictly: a message of
//     another length or an unknown opcode is an error, as in Valkey.
//     Reserved bytes are ignored on receipt, as Valkey ignores them, and
//     zero when we send.
//   - verbs.go: the interface the protocol needs (QP, Region, Completion,
//     Event): register memory and learn its addr and rkey, post 32-byte
//     receives, post SEND, post RDMA WRITE WITH IMM to (addr, rkey), poll
//     completions in order, connection events, RC or UC.
//   - fabric.go: Fabric, an in-memory implementation for tests that
//     enforces what adapters enforce (writes only inside a region
//     registered for remote write, under its rkey; a receive posted for
//     every SEND and WRITE WITH IMM; queue depths; completions in order;
//     UC losing what a fault hook says, RC nothing).
//   - conn.go: Conn, both sides of the protocol as an io.ReadWriteCloser
//     with net.Conn-style deadlines. Each side registers a receive buffer
//     (rdma-rx-size: 1 MiB by default, 64 KiB..16 MiB) and announces it
//     with RegisterXferMemory once established; a side writes only after
//     the peer's announcement, by WRITE WITH IMM at the peer's current
//     offset with the chunk length as immediate, never past the space
//     left, and waits when the buffer is full. The receiver counts bytes
//     per WRITE WITH IMM completion and re-posts the receive it consumed
//     (1024 posted); once its buffer is exactly full and read, it starts
//     again at 0 and announces the buffer again, and the writer restarts
//     at offset 0. The server sends Keepalive every 3 s; a failed send
//     means a dead peer. Per-message work allocates nothing
//     (BenchmarkWrite: 0 allocs/op for 64 B and 16 KiB writes).
//   - wire.go: WireQP, a QP whose peer is in another process: the verbs'
//     messages over a stream socket, each side enforcing on what arrives
//     the fabric's rules (regions and rkeys, posted receives, RC holding a
//     message until a receive is posted and reporting every outcome to
//     the sender, UC dropping what breaks a rule).
//   - sim.go: the simulated provider's connection setup (rdma_cm's part):
//     an address HOST:PORT is a Unix socket in one directory
//     (DPULAB_RDMASIM_DIR), ListenSim and DialSim give net.Listener and
//     net.Conn (NetConn: a Conn with *net.TCPAddr addresses, as rdma_cm's
//     live in the TCP port space). A client of the other queue-pair type
//     is refused with the reason.
//
// # UC: our extension
//
// UC ("rdma-transport-mode unreliable-connected") runs the same protocol
// over a UC queue pair, between our own client and server only (Valkey
// speaks RC). UC neither retries nor acknowledges, so two things change,
// both on UC connections only:
//
//   - The immediate carries a 20-bit write sequence number with the
//     length (chunks of at most 4 KiB, one packet at the largest MTU), and
//     the receive buffer is at most 1 MiB. A write that is lost or
//     truncated on the way never completes at the receiver, so the next
//     write that does arrives out of sequence: the connection fails with
//     ErrLostWrite, counted in Counters.LostWrites, and the gap is never
//     read as data. (A buffer generation holds at most 2^20 writes, so the
//     sequence cannot wrap unseen.) A loss at the very end of the stream
//     shows as a reply that does not come: the caller's read deadline.
//   - UC drops a message that finds no receive posted, where RC retries
//     (rnr_retry_count 7, what libvalkey asks for; Valkey's protocol has no
//     credits and relies on it). So the receiver sends UCAck (opcode
//     0x8001, ours) with its count of writes taken in, every quarter
//     window and on a 10 ms tick, and a sender keeps at most 960 writes
//     unacknowledged. An ack is lost like any UC message, and a sender
//     stopped at its window sends nothing that would make a new count, so
//     the tick sends an unchanged count again after 1, 2, 4, ... ticks,
//     eight times (TestUCLostAckRepeats: each count lost twice). A lost
//     RegisterXferMemory is not recovered (re-sending it would restart
//     the peer's writes at offset 0 over unread bytes): the reply that
//     does not come, as for a lost last write.
//
// # Through the transport seam (issue 11)
//
// server/transport registers rdma from one of its rdma_*.go files, by
// build: on linux/amd64 and linux/arm64 the provider below
// (rdma_core.go), with or without cgo, in every build; -tags rdmasim (tests
// only) the Go simulation instead (rdma_sim.go); -tags nordma, and every
// other platform, nothing, saying why ("RDMA is not in this build for
// windows/amd64: ...", exit status 2 from the server and the bench).
// `dpulab server` listens on rdma-port (rdma-bind, rdma-transport-mode,
// rdma-rx-size, rdma-sq-size, rdma-rq-size, rdma-inline-size,
// rdma-poll-us, rdma-retry-count, rdma-completion-vector), `dpulab bench
// --target rdma://HOST:PORT --rdma-mode rc|uc` dials it, INFO's rdma
// section counts per listener (StatsListener), and figures over a
// simulation say so. `dpulab version` lists the transports with the
// provider and whether this host can use it (Provider).
//
// # The provider: rdma-core from Go (issue 31)
//
// verbs_purego.go calls rdma-core over github.com/ebitengine/purego, with
// or without cgo: libibverbs.so.1, librdmacm.so.1 and libc (errno,
// strerror) are opened at run time, not linked, so a binary starts and
// serves TCP on a host without them, and rdmacore.go's Probe says what a
// host lacks (a library, with what to install; an entry point;
// /dev/infiniband/rdma_cm, with how to load a driver or add Soft-RoCE).
// The verbs verbs.h defines inline (post send and receive, poll, notify)
// are called through the device context's ops table, as the inline
// functions do. The structs handed to the libraries and the offsets read
// in theirs are package internal/ibv's, checked against the installed
// headers by its test, the one piece of cgo left (C's own offsetof and
// sizeof: nothing in Go can read a header; it is a test, never built
// into a binary, and runs wherever cgo and rdma-core's headers are).
// Nothing the libraries or the device touch is Go memory: regions are
// page-aligned mmap with a guard page on each side, and work requests,
// the scatter entry, completions, out-pointers, strings and CM parameters
// live in three mmap'd pages per queue pair (posting and polling under
// the lock, the waiter's, the CM's).
//
// Setup: rdma_getaddrinfo and rdma_create_ep, each connection's id moved
// to its own event channel; RC in the TCP port space (Valkey's), UC with a
// UC id in the IB port space (the CM must say UC: a TCP-space id is RC);
// per connection a protection domain, one completion channel and a CQ of
// send+receive depth on rdma-completion-vector, the queue pair with
// rdma-inline-size, rdma-sq-size and rdma-rq-size; rdma_accept /
// rdma_connect with retry_count rdma-retry-count and rnr_retry_count 7.
// Our clients put "DPLR"+type in the connect request's private data so a
// server refuses the other queue-pair type with the reason (rdma_reject);
// Valkey's clients send none and count as RC. Sends of at most the inline
// size go IBV_SEND_INLINE.
//
// provider.go implements QP over those verbs: Register is the mmap'd
// region plus ibv_reg_mr (remote write for the receive buffer only);
// Notify is fed by a goroutine that spins on the CQ for rdma-poll-us
// after the last completion, then arms it (ibv_req_notify_cq) and sleeps
// in poll(2) on the completion channel, the CM channel and an eventfd for
// Close; completions it takes wait in a ring for Poll. Listen and Dial
// give net.Listener and net.Conn (NetConn) as sim.go does.
//
// The provider links the binary against the system's dynamic loader (to
// open the libraries), in a CGO_ENABLED=0 build too. -tags nordma leaves
// it out for a fully static binary (qemu-user without the target's
// libraries, a host without glibc).
//
// Until issue 31 the provider was a C layer of ours (dplverbs.h,
// dplverbs_rdmacore.c over dlopen, behind -tags rdma and cgo) with a C
// simulation for tests (dplverbs_sim.c, -tags rdma,rdmasim); the Go
// provider replaced it call for call after passing every guest test, and
// both are gone.
//
// # What has run, and what has not
//
// On the kernel's real RDMA stack (issue 28), the C layer's build in the
// Soft-RoCE guest of .ci/rdma-guest (Debian's kernel 6.1, rdma_rxe,
// rdma-core 44; two devices joined by a veth wire, the client binding the
// other device's address so that traffic crosses it), every
// server/transport/rdma_guest_test.go test: RC and UC with default
// polling over pipelines, value sizes and connection counts, a soak, a
// killed client, a terminated server, 1,000 connect/close cycles against
// `rdma resource`, protected mode, mode mismatch, the devices' own packet
// counters; Valkey's server and RDMA module under `dpulab bench` (RC), and
// Valkey's rdma-test client against `dpulab server`. Two faults found
// there and fixed: the completion channel had two readers (Poll took the
// notification the sleeping goroutine armed for: every RC run stalled),
// and Write blocked until the peer's buffer took everything, so a server
// answering a client still writing its pipeline stopped reading it and
// both waited (large values stalled); Write now keeps a backlog.
//
// The Go provider in the same guest (a CGO_ENABLED=0 build, 6 Dec 2026,
// the host heavily loaded), then as the default build (issue 31): every
// guest test, RC and UC (.ci/rdma-guest prints each with its figures).
// UC with 64 KiB values, 16 connections, 16 deep had failed once as a 3 s
// run: its one pipeline round was still answering (17 replies/s, the
// slowest at 13.5 s) when the bench's 5 s after the run's end ran out, no
// lost write reported; the C layer took as long side by side (p99 5.2 s
// against 4.9 s), and those cases are counted runs now. Here (no RDMA
// device): the libraries load and every entry point resolves, the device
// check and librdmacm's own failure come back with what to do
// (provider_test.go, rdmacore_test.go), and the C structs' layout matches
// the headers (internal/ibv).
//
// Also run here: the protocol over the Go simulation (sim_test.go,
// conn_test.go, fabric_test.go; faults injected through Fabric's hooks
// and WireQP's rules), and `dpulab server` with `dpulab bench` of a
// rdmasim build as two processes (server/bench/rdmasim_test.go). Not run
// on hardware RDMA NICs (ConnectX, BlueField) by us: Soft-RoCE is the same
// verbs and rdma_cm API over a software device, not the adapters' timing
// or their UC implementation.
package rdma
