// dplverbs.h: the small C layer under the cgo provider (build tag rdma).
// Two implementations, chosen by build tags: dplverbs_rdmacore.c (rdma &&
// !rdmasim: libibverbs and librdmacm through dlopen'd function pointers,
// what ships) and dplverbs_sim.c (rdma && rdmasim: the verbs' messages over
// Unix sockets between processes, wire-compatible with wire.go's WireQP and
// sim.go's handshake; tests only, never shipped). The Go side
// (provider.go) serialises every call on one queue pair under its lock,
// except dpl_wait, which reads only what never changes after setup and the
// completion channel, which it alone reads.
#ifndef DPLVERBS_H
#define DPLVERBS_H

#include <stddef.h>
#include <stdint.h>

// Queue-pair types, as verbs.go's QPType.
enum { DPL_RC = 1, DPL_UC = 2 };

// Post and poll errors (negative returns), as verbs.go's errors.
enum {
	DPL_EQPSTATE = -1, // not connected, or in the error state
	DPL_EFULL = -2,    // work queue full
	DPL_ELOCAL = -3,   // local buffer outside the region
	DPL_EOTHER = -4,   // the provider failed (errno-style)
};

// Completion ops and statuses: verbs.go's Op and Status values.
enum { DPL_OP_SEND = 1, DPL_OP_WRITE = 2, DPL_OP_RECV = 3, DPL_OP_RECV_IMM = 4 };
enum {
	DPL_WC_SUCCESS = 0,
	DPL_WC_FLUSHED = 1,
	DPL_WC_RNR = 2,
	DPL_WC_REM_ACCESS = 3,
	DPL_WC_REM_INV_REQ = 4,
	DPL_WC_LOC_LEN = 5,
	DPL_WC_RETRY = 6,
	DPL_WC_CQ_OVERRUN = 7,
	DPL_WC_OTHER = 8,
};

// Connection events (verbs.go's Event).
enum { DPL_EV_NONE = 0, DPL_EV_ESTABLISHED = 1, DPL_EV_DISCONNECTED = 2 };

// dpl_opts: a queue pair's settings; zero values take the defaults.
struct dpl_opts {
	int type;        // DPL_RC or DPL_UC
	int sq_size;     // send queue depth (default 1024)
	int rq_size;     // receive queue depth (default 1024)
	int inline_size; // largest send posted inline (0: none)
	int retry_count; // RC transport retries, 0..7 (0: 7)
	int comp_vector; // completion vector (-1: automatic)
};

struct dpl_wc {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t imm; // host order
	uint8_t op;
	uint8_t status;
	uint32_t vendor_err;
};

// A registered region: buf..buf+len is page-aligned mmap'd memory with a
// guard page on each side, never on the Go heap.
struct dpl_mr {
	void *buf;
	size_t len;
	uint64_t addr; // what the peer names in a write
	uint32_t rkey, lkey;
	void *priv; // the provider's (struct ibv_mr *)
	void *map;  // the mapping, guard pages included
	size_t maplen;
};

typedef struct dpl_listener dpl_listener;
typedef struct dpl_qp dpl_qp;

// Errors come back as text in err (at most errlen bytes, NUL-terminated).
#define DPL_ERRLEN 512

// dpl_init loads the provider (rdma-core: the libraries and entry points);
// 0, or -1 with the reason.
int dpl_init(char *err, size_t errlen);

// dpl_listen listens on host:port (port 0: a free one, told in *bound).
dpl_listener *dpl_listen(const char *host, int port, int type, int *bound, char *err, size_t errlen);
// dpl_accept waits up to timeout_ms for a connection request: a queue pair
// to set up with dpl_accept_setup, or NULL (err empty on a time-out).
dpl_qp *dpl_accept(dpl_listener *l, int timeout_ms, char *err, size_t errlen);
// dpl_peer gives the requesting client's address (numeric host, port),
// known from dpl_accept on.
void dpl_peer(dpl_qp *q, char *host, size_t hostlen, int *port);
// dpl_accept_setup reads the request and creates the queue pair (a client
// of the other type is refused with the reason, naming this server's
// address and type); receives may be posted after it. 0, or -1 with err
// (the qp must still be destroyed).
int dpl_accept_setup(dpl_qp *q, const struct dpl_opts *o, int timeout_ms, char *err, size_t errlen);
// dpl_wake_listener makes a waiting dpl_accept return (for Close).
void dpl_wake_listener(dpl_listener *l);
void dpl_listener_close(dpl_listener *l);

// dpl_connect resolves host:port (from the source address src when not
// NULL or empty: the local interface, and so the device, the connection
// leaves by) and creates the queue pair; the local address is told in
// local_host and *local_port. Receives may be posted after it, then
// dpl_establish connects.
dpl_qp *dpl_connect(const char *host, int port, const char *src, const struct dpl_opts *o, char *local_host,
		    size_t hostlen, int *local_port, int timeout_ms, char *err, size_t errlen);
// dpl_establish completes the connection (server: accepts it; client:
// connects) within timeout_ms: 0, or -1 with err.
int dpl_establish(dpl_qp *q, int timeout_ms, char *err, size_t errlen);

int dpl_sq_depth(dpl_qp *q);
int dpl_rq_depth(dpl_qp *q);

struct dpl_mr *dpl_reg(dpl_qp *q, size_t len, int remote_write, char *err, size_t errlen);
int dpl_dereg(dpl_qp *q, struct dpl_mr *mr);

int dpl_post_recv(dpl_qp *q, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n);
int dpl_post_send(dpl_qp *q, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n, int signaled);
int dpl_post_write_imm(dpl_qp *q, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n,
		       uint64_t raddr, uint32_t rkey, uint32_t imm, int signaled);

// dpl_poll moves up to n completions into wc: how many, or a DPL_E* error.
int dpl_poll(dpl_qp *q, struct dpl_wc *wc, int n);
// dpl_event takes the next connection event (DPL_EV_*).
int dpl_event(dpl_qp *q);
// dpl_arm asks for a notification of the next completion before sleeping.
int dpl_arm(dpl_qp *q);
// dpl_wait sleeps until a completion, an event, dpl_wake or timeout_ms
// (-1: no limit). The completion channel has one owner, the one goroutine
// that arms and waits: dpl_wait alone takes (and acknowledges) the
// channel's notifications, so a dpl_poll from elsewhere never consumes the
// wake-up the waiter armed for. The caller arms, polls once more, then
// waits; completions and events are taken by the next dpl_poll/dpl_event.
int dpl_wait(dpl_qp *q, int timeout_ms);
void dpl_wake(dpl_qp *q);

int dpl_disconnect(dpl_qp *q);
void dpl_destroy(dpl_qp *q);

#endif
