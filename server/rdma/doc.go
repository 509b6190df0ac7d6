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
//     unacknowledged.
//
// # Through the transport seam (issue 11)
//
// The rdmasim build registers rdma in server/transport over the simulated
// provider (server/transport/rdma_sim.go): `dpulab server` listens on
// rdma-port (rdma-bind, rdma-transport-mode, rdma-rx-size, rdma-sq-size and
// rdma-rq-size apply; its log says the transport is simulated), and
// `dpulab bench --target rdma://HOST:PORT --rdma-mode rc|uc` dials it, two
// processes speaking this protocol; the bench labels its figures as a
// simulation. Not yet: INFO's rdma section (Counters per listener), and
// the tuning keys that only hardware gives a meaning (inline size,
// rdma-poll-us, retry count, completion vector), which the cgo provider
// will honour.
//
// # The cgo provider (build tag rdma, later)
//
// Written so far: its loader (rdmacore.go): libibverbs.so.1 and
// librdmacm.so.1 opened with dlopen and checked for every entry point the
// provider needs, and Probe, which says what a host lacks (a library, an
// entry point, /dev/infiniband/rdma_cm with how to load a driver or add
// Soft-RoCE). The rest, below, is not written: a -tags rdma build says so
// when asked for rdma (server/transport/rdma_pending.go).
//
// A second implementation of QP over rdma-core, behind the build tag rdma
// and a small C layer of our own, with libibverbs and librdmacm loaded at
// run time (dlopen) so a binary built with the tag still starts without
// them: rdma_create_id/resolve/connect or listen/accept for setup (port
// space TCP), ibv_alloc_pd, one completion channel and CQ of 2×1024
// entries, rdma_create_qp of IBV_QPT_RC or IBV_QPT_UC; Register is
// page-aligned mmap with guard pages plus ibv_reg_mr (remote write for
// the receive buffer only), since registered memory must not move and
// must not live on the Go heap; Post* fill ibv_sge/ibv_send_wr
// (IBV_WR_SEND, IBV_WR_RDMA_WRITE_WITH_IMM, imm_data big-endian) and
// ibv_post_send/recv; Poll wraps ibv_poll_cq; Notify is fed by a goroutine
// waiting on the completion and CM channel fds (after spinning rdma-poll-us
// on the CQ), re-arming with ibv_req_notify_cq and acking events;
// rnr_retry_count 7 on RC. The Conn and its tests stay as they are.
package rdma
