//go:build rdma && rdmasim && cgo

// dplverbs_sim.c: the simulated implementation of dplverbs.h, for tests
// only (build tags rdma,rdmasim; never in a shipped binary). The verbs'
// messages travel over a Unix socket between two processes, in exactly the
// frames of wire.go's WireQP and after sim.go's handshake, so this side and
// a Go WireQP interoperate; each side enforces on what arrives the rules
// adapters enforce: a WRITE WITH IMM lands only inside a region registered
// for remote write under its rkey and consumes a posted receive; a SEND
// needs a posted receive big enough; RC holds a message until a receive is
// posted and reports every outcome to the sender; UC drops what breaks a
// rule and completes at the sender once the message is on its way. Every
// length read from the socket is bounds-checked before use.

#define _GNU_SOURCE
#include "dplverbs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum { FRAME_SEND = 1, FRAME_WRITE = 2, FRAME_ACK = 3, FRAME_DISCONNECT = 4, FRAME_HEADER = 32 };
enum { ST_INIT, ST_READY, ST_ERROR, ST_CLOSED };
#define MAX_FRAME (16u << 20)		 // MaxRxSize: the largest region a Conn registers
#define MAX_REGION (MAX_FRAME + (32u * (1024 + 65536 + 1)))
#define MAX_HELD 65536
static const uint8_t sim_magic[8] = {'D', 'P', 'L', 'R', 'S', 'I', 'M', '1'};
#define SIM_HELLO 12

struct dpl_listener {
	int fd, wakefd, type, port;
	char host[64];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

struct recv_slot {
	uint64_t id;
	struct dpl_mr *mr;
	size_t off, n;
};

struct pending {
	uint64_t id, seq;
	uint32_t n;
	uint8_t op;
	int signaled;
};

struct cqe {
	struct dpl_wc wc;
	uint64_t seq;
};

struct held {
	struct held *next;
	uint32_t len; // header + payload
	uint8_t data[];
};

struct region {
	struct dpl_mr mr;
	int remote_write;
};

struct dpl_qp {
	int fd, wakefd, type, state, gone, sq, rq;
	int peer_port, lport; // the client's port (its hello), the listener's
	char lhost[64];
	struct region **regions;
	int nregions, capregions;
	uint64_t next_key;

	struct recv_slot *recvs;
	int rhead, rcount;

	uint64_t post_seq, freed_seq;
	struct pending *unacked;
	int uhead, ulen;

	struct cqe *cq;
	int cqsize, cqhead, cqcount;

	int events[4];
	int nev;

	struct held *hhead, *htail;
	int nheld;

	uint8_t *out;
	size_t outlen, outcap;
	int want_out; // read by dpl_wait without the lock: __atomic

	uint8_t *in;
	size_t inlen, incap;

	int violations, dropped;
};

static void seterr(char *err, size_t errlen, const char *fmt, ...) {
	if (!err || errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void put16(uint8_t *b, uint16_t v) { b[0] = v >> 8, b[1] = v; }
static void put32(uint8_t *b, uint32_t v) { b[0] = v >> 24, b[1] = v >> 16, b[2] = v >> 8, b[3] = v; }
static void put64(uint8_t *b, uint64_t v) { put32(b, v >> 32), put32(b + 4, (uint32_t)v); }
static uint16_t get16(const uint8_t *b) { return (uint16_t)(b[0] << 8 | b[1]); }
static uint32_t get32(const uint8_t *b) { return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]; }
static uint64_t get64(const uint8_t *b) { return (uint64_t)get32(b) << 32 | get32(b + 4); }

static long long now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// io_full reads or writes exactly n bytes on a non-blocking fd before the
// deadline (ms, monotonic): 0, or -1 (errno ETIMEDOUT on time-out, EPIPE
// on end of stream).
static int io_full(int fd, void *p, size_t n, int wr, long long deadline) {
	uint8_t *b = p;
	while (n > 0) {
		ssize_t k = wr ? send(fd, b, n, MSG_NOSIGNAL) : recv(fd, b, n, 0);
		if (k > 0) {
			b += k, n -= (size_t)k;
			continue;
		}
		if (k == 0 && !wr) {
			errno = EPIPE;
			return -1;
		}
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		long long left = deadline - now_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct pollfd pf = {.fd = fd, .events = wr ? POLLOUT : POLLIN};
		poll(&pf, 1, (int)(left > 1000 ? 1000 : left));
	}
	return 0;
}

// sim_dir: $DPULAB_RDMASIM_DIR, else dpulab-rdmasim-UID under $TMPDIR or
// /tmp, as sim.go's simDir.
static int sim_dir(char *dir, size_t n, char *err, size_t errlen) {
	const char *d = getenv("DPULAB_RDMASIM_DIR");
	int k;
	if (d && *d) {
		k = snprintf(dir, n, "%s", d);
	} else {
		const char *t = getenv("TMPDIR");
		if (!t || !*t)
			t = "/tmp";
		k = snprintf(dir, n, "%s/dpulab-rdmasim-%u", t, (unsigned)getuid());
	}
	if (k < 0 || (size_t)k >= n) {
		seterr(err, errlen, "simulated rdma: directory name too long");
		return -1;
	}
	// MkdirAll, one level at a time.
	for (char *p = dir + 1;; p++) {
		if (*p == '/' || *p == 0) {
			char c = *p;
			*p = 0;
			if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
				seterr(err, errlen, "simulated rdma: mkdir %s: %s", dir, strerror(errno));
				*p = c;
				return -1;
			}
			*p = c;
			if (c == 0)
				break;
		}
	}
	return 0;
}

// sim_socket: where HOST:PORT listens, as sim.go's simSocket.
static int sim_socket(char *path, size_t n, const char *dir, const char *host, int port) {
	char h[256];
	if (!*host || !strcmp(host, "*") || !strcmp(host, "0.0.0.0") || !strcmp(host, "::"))
		host = "any";
	if (snprintf(h, sizeof h, "%s", host) >= (int)sizeof h)
		return -1;
	for (char *p = h; *p; p++)
		if (*p == ':' || *p == '/' || *p == '%')
			*p = '-';
	int k = snprintf(path, n, "%s/%s_%d.sock", dir, h, port);
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

int dpl_init(char *err, size_t errlen) {
	(void)err, (void)errlen;
	return 0;
}

dpl_listener *dpl_listen(const char *host, int port, int type, int *bound, char *err, size_t errlen) {
	char dir[4096];
	if (port < 0 || port > 65535) {
		seterr(err, errlen, "bad port");
		return NULL;
	}
	if (sim_dir(dir, sizeof dir, err, errlen) != 0)
		return NULL;
	dpl_listener *l = calloc(1, sizeof *l);
	if (!l) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	l->type = type;
	snprintf(l->host, sizeof l->host, "%s", host);
	for (int try = 0;; try++) {
		int p = port ? port : 20000 + (int)(random() % 40000);
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		if (sim_socket(sa.sun_path, sizeof sa.sun_path, dir, host, p) != 0) {
			seterr(err, errlen, "simulated rdma: socket path too long in %s", dir);
			free(l);
			return NULL;
		}
		if (port) {
			struct stat st;
			if (lstat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode)) {
				int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
				if (c >= 0 && connect(c, (struct sockaddr *)&sa, sizeof sa) == 0) {
					close(c);
					seterr(err, errlen, "address already in use (simulated: %s)", sa.sun_path);
					free(l);
					return NULL;
				}
				if (c >= 0)
					close(c);
				unlink(sa.sun_path);
			}
		}
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			seterr(err, errlen, "socket: %s", strerror(errno));
			free(l);
			return NULL;
		}
		if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 128) == 0) {
			l->fd = fd;
			memcpy(l->path, sa.sun_path, sizeof l->path);
			*bound = l->port = p;
			break;
		}
		int e = errno;
		close(fd);
		if (port || try > 100) {
			seterr(err, errlen, "simulated: %s: %s", sa.sun_path, strerror(e));
			free(l);
			return NULL;
		}
	}
	l->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->wakefd < 0) {
		seterr(err, errlen, "eventfd: %s", strerror(errno));
		close(l->fd);
		unlink(l->path);
		free(l);
		return NULL;
	}
	return l;
}

static dpl_qp *qp_new(int fd) {
	dpl_qp *q = calloc(1, sizeof *q);
	if (!q)
		return NULL;
	q->fd = fd;
	q->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->wakefd < 0) {
		free(q);
		return NULL;
	}
	q->next_key = ((uint64_t)random() << 1) | 1;
	return q;
}

dpl_qp *dpl_accept(dpl_listener *l, int timeout_ms, char *err, size_t errlen) {
	struct pollfd pf[2] = {{.fd = l->fd, .events = POLLIN}, {.fd = l->wakefd, .events = POLLIN}};
	err[0] = 0;
	if (poll(pf, 2, timeout_ms) <= 0 || (pf[1].revents & POLLIN))
		return NULL;
	int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			seterr(err, errlen, "accept: %s", strerror(errno));
		return NULL;
	}
	dpl_qp *q = qp_new(fd);
	if (!q) {
		close(fd);
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	memcpy(q->lhost, l->host, sizeof q->lhost);
	q->lport = l->port;
	return q;
}

void dpl_wake_listener(dpl_listener *l) {
	uint64_t one = 1;
	if (write(l->wakefd, &one, sizeof one) < 0) {
		// The counter is full: a wake-up is pending anyway.
	}
}

void dpl_listener_close(dpl_listener *l) {
	unlink(l->path);
	close(l->fd);
	close(l->wakefd);
	free(l);
}

// qp_alloc sizes the queues from o.
static int qp_alloc(dpl_qp *q, const struct dpl_opts *o) {
	q->type = o->type == DPL_UC ? DPL_UC : DPL_RC;
	q->sq = o->sq_size > 0 ? o->sq_size : 1024;
	q->rq = o->rq_size > 0 ? o->rq_size : 1024;
	if (q->sq > 1 << 16 || q->rq > 1 << 16)
		return -1;
	q->cqsize = q->sq + q->rq;
	q->recvs = calloc((size_t)q->rq, sizeof *q->recvs);
	q->unacked = calloc((size_t)q->sq, sizeof *q->unacked);
	q->cq = calloc((size_t)q->cqsize, sizeof *q->cq);
	return q->recvs && q->unacked && q->cq ? 0 : -1;
}

void dpl_peer(dpl_qp *q, char *host, size_t hostlen, int *port) {
	// Every simulated peer is on this machine.
	snprintf(host, hostlen, "127.0.0.1");
	*port = q->peer_port;
}

int dpl_accept_setup(dpl_qp *q, const struct dpl_opts *o, int timeout_ms, char *err, size_t errlen) {
	uint8_t h[SIM_HELLO];
	long long dl = now_ms() + timeout_ms;
	if (io_full(q->fd, h, sizeof h, 0, dl) != 0 || memcmp(h, sim_magic, 8) != 0) {
		seterr(err, errlen, "not a simulated rdma client");
		return -1;
	}
	int typ = h[8];
	q->peer_port = get16(h + 10);
	int want = o->type == DPL_UC ? DPL_UC : DPL_RC;
	if (typ != want) {
		char msg[200];
		int n = snprintf(msg, sizeof msg, "the server on %s:%d speaks %s; this client asked for %s", q->lhost, q->lport,
				 want == DPL_UC ? "UC" : "RC", typ == DPL_UC ? "UC" : typ == DPL_RC ? "RC" : "another type");
		uint8_t b[3 + sizeof msg];
		b[0] = 1;
		put16(b + 1, (uint16_t)n);
		memcpy(b + 3, msg, (size_t)n);
		io_full(q->fd, b, 3 + (size_t)n, 1, now_ms() + 1000);
		seterr(err, errlen, "%s", msg);
		return -1;
	}
	if (qp_alloc(q, o) != 0) {
		seterr(err, errlen, "queue sizes out of range or out of memory");
		return -1;
	}
	uint8_t ok = 0;
	if (io_full(q->fd, &ok, 1, 1, dl) != 0) {
		seterr(err, errlen, "%s", strerror(errno));
		return -1;
	}
	return 0;
}

dpl_qp *dpl_connect(const char *host, int port, const char *src, const struct dpl_opts *o, char *local_host,
		    size_t hostlen, int *local_port, int timeout_ms, char *err, size_t errlen) {
	// Simulated peers are all on this machine: a source address only
	// names the local end.
	snprintf(local_host, hostlen, "%s", src && *src ? src : "127.0.0.1");
	char dir[4096];
	if (sim_dir(dir, sizeof dir, err, errlen) != 0)
		return NULL;
	int fd = -1;
	const char *hosts[2] = {host, ""};
	for (int i = 0; i < 2 && fd < 0; i++) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		if (sim_socket(sa.sun_path, sizeof sa.sun_path, dir, hosts[i], port) != 0)
			continue;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		seterr(err, errlen, "connection refused (simulated: nothing listens in %s)", dir);
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	dpl_qp *q = qp_new(fd);
	if (!q) {
		close(fd);
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	long long dl = now_ms() + timeout_ms;
	*local_port = 1024 + (int)(random() % 60000);
	uint8_t h[SIM_HELLO] = {0};
	memcpy(h, sim_magic, 8);
	h[8] = o->type == DPL_UC ? DPL_UC : DPL_RC;
	put16(h + 10, (uint16_t)*local_port);
	uint8_t st[3];
	if (io_full(fd, h, sizeof h, 1, dl) != 0 || io_full(fd, st, 1, 0, dl) != 0) {
		seterr(err, errlen, "%s", strerror(errno));
		dpl_destroy(q);
		return NULL;
	}
	if (st[0] != 0) {
		char msg[65536 + 1];
		size_t n = 0;
		if (io_full(fd, st + 1, 2, 0, dl) == 0) {
			n = get16(st + 1);
			if (io_full(fd, msg, n, 0, dl) != 0)
				n = 0;
		}
		msg[n] = 0;
		// The server's words reach the terminal: printable ASCII only.
		for (size_t i = 0; i < n; i++)
			if (msg[i] < 0x20 || msg[i] > 0x7e)
				msg[i] = '?';
		seterr(err, errlen, "refused: %s", msg);
		dpl_destroy(q);
		return NULL;
	}
	if (qp_alloc(q, o) != 0) {
		seterr(err, errlen, "queue sizes out of range or out of memory");
		dpl_destroy(q);
		return NULL;
	}
	return q;
}

static void push_event(dpl_qp *q, int ev) {
	if (q->nev < (int)(sizeof q->events / sizeof q->events[0]))
		q->events[q->nev++] = ev;
}

int dpl_establish(dpl_qp *q, int timeout_ms, char *err, size_t errlen) {
	(void)timeout_ms, (void)err, (void)errlen;
	if (q->state == ST_INIT) {
		q->state = ST_READY;
		push_event(q, DPL_EV_ESTABLISHED);
	}
	return 0;
}

int dpl_sq_depth(dpl_qp *q) { return q->sq; }
int dpl_rq_depth(dpl_qp *q) { return q->rq; }

// map_region: page-aligned memory with a guard page on each side.
static int map_region(struct dpl_mr *mr, size_t len) {
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (len + pg - 1) / pg * pg;
	mr->maplen = body + 2 * pg;
	mr->map = mmap(NULL, mr->maplen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mr->map == MAP_FAILED)
		return -1;
	mr->buf = (uint8_t *)mr->map + pg;
	if (mprotect(mr->buf, body, PROT_READ | PROT_WRITE) != 0) {
		munmap(mr->map, mr->maplen);
		return -1;
	}
	mr->len = len;
	return 0;
}

struct dpl_mr *dpl_reg(dpl_qp *q, size_t len, int remote_write, char *err, size_t errlen) {
	if (len == 0 || len > MAX_REGION) {
		seterr(err, errlen, "register %zu bytes: size out of range", len);
		return NULL;
	}
	if (q->state == ST_CLOSED) {
		seterr(err, errlen, "queue pair closed");
		return NULL;
	}
	if (q->nregions == q->capregions) {
		int c = q->capregions ? 2 * q->capregions : 8;
		struct region **r = realloc(q->regions, (size_t)c * sizeof *r);
		if (!r) {
			seterr(err, errlen, "out of memory");
			return NULL;
		}
		q->regions = r;
		q->capregions = c;
	}
	struct region *r = calloc(1, sizeof *r);
	if (!r || map_region(&r->mr, len) != 0) {
		seterr(err, errlen, "mmap %zu bytes: %s", len, strerror(errno));
		free(r);
		return NULL;
	}
	q->next_key = q->next_key * 6364136223846793005ull + 1442695040888963407ull;
	r->mr.rkey = r->mr.lkey = (uint32_t)(q->next_key >> 32);
	r->mr.addr = (uint64_t)(uintptr_t)r->mr.buf;
	r->mr.priv = r;
	r->remote_write = remote_write;
	q->regions[q->nregions++] = r;
	return &r->mr;
}

static int region_index(dpl_qp *q, const struct dpl_mr *mr) {
	for (int i = 0; i < q->nregions; i++)
		if (&q->regions[i]->mr == mr)
			return i;
	return -1;
}

static void unmap_region(struct region *r) {
	munmap(r->mr.map, r->mr.maplen);
	free(r);
}

int dpl_dereg(dpl_qp *q, struct dpl_mr *mr) {
	int i = region_index(q, mr);
	if (i < 0)
		return DPL_ELOCAL;
	struct region *r = q->regions[i];
	q->regions[i] = q->regions[--q->nregions];
	// A posted receive naming it would write freed memory: drop those
	// (the Conn never deregisters a region with receives posted).
	for (int k = 0; k < q->rcount; k++) {
		struct recv_slot *s = &q->recvs[(q->rhead + k) % q->rq];
		if (s->mr == mr)
			s->mr = NULL;
	}
	unmap_region(r);
	return 0;
}

static struct region *region_by_key(dpl_qp *q, uint32_t rkey) {
	for (int i = 0; i < q->nregions; i++)
		if (q->regions[i]->mr.rkey == rkey)
			return q->regions[i];
	return NULL;
}

static int local_ok(dpl_qp *q, struct dpl_mr *mr, size_t off, size_t n) {
	return region_index(q, mr) >= 0 && off <= mr->len && n <= mr->len - off;
}

static void wake(dpl_qp *q) {
	uint64_t one = 1;
	if (write(q->wakefd, &one, sizeof one) < 0) {
		// Full counter: already awake.
	}
}

void dpl_wake(dpl_qp *q) { wake(q); }

// queue appends a frame to the output; a failure to grow is a lost link.
static void lost(dpl_qp *q);
static int queue_frame(dpl_qp *q, uint8_t kind, uint8_t status, uint32_t imm, uint32_t rkey, uint64_t raddr,
		       const uint8_t *payload, uint32_t n) {
	size_t need = q->outlen + FRAME_HEADER + n;
	if (need > q->outcap) {
		size_t c = q->outcap ? q->outcap : 64 << 10;
		while (c < need)
			c *= 2;
		uint8_t *b = realloc(q->out, c);
		if (!b)
			return -1;
		q->out = b;
		q->outcap = c;
	}
	uint8_t *h = q->out + q->outlen;
	memset(h, 0, FRAME_HEADER);
	h[0] = kind, h[1] = status;
	put32(h + 4, imm);
	put32(h + 8, rkey);
	put32(h + 12, n);
	put64(h + 16, raddr);
	if (n)
		memcpy(h + FRAME_HEADER, payload, n);
	q->outlen = need;
	return 0;
}

// flush writes what it can without blocking; the rest waits for POLLOUT.
static void flush(dpl_qp *q) {
	size_t done = 0;
	while (done < q->outlen) {
		ssize_t k = send(q->fd, q->out + done, q->outlen - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			done += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		q->outlen = 0;
		__atomic_store_n(&q->want_out, 0, __ATOMIC_RELEASE);
		lost(q);
		return;
	}
	memmove(q->out, q->out + done, q->outlen - done);
	q->outlen -= done;
	int want = q->outlen > 0;
	if (want && !__atomic_load_n(&q->want_out, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&q->want_out, 1, __ATOMIC_RELEASE);
		wake(q); // a waiter polling without POLLOUT must look again
	} else if (!want) {
		__atomic_store_n(&q->want_out, 0, __ATOMIC_RELEASE);
	}
}

static void complete(dpl_qp *q, uint64_t id, uint8_t op, uint8_t status, uint32_t len, uint32_t imm, uint64_t seq);
static void to_error(dpl_qp *q);

static void disconnected(dpl_qp *q) {
	if (!q->gone) {
		__atomic_store_n(&q->gone, 1, __ATOMIC_RELEASE);
		push_event(q, DPL_EV_DISCONNECTED);
	}
}

static void acked(dpl_qp *q, uint8_t status) {
	if (q->ulen == 0)
		return;
	struct pending w = q->unacked[q->uhead];
	q->uhead = (q->uhead + 1) % q->sq;
	q->ulen--;
	if (status != DPL_WC_SUCCESS) {
		complete(q, w.id, w.op, status, 0, 0, w.seq);
		to_error(q);
		return;
	}
	if (w.signaled)
		complete(q, w.id, w.op, DPL_WC_SUCCESS, w.n, 0, w.seq);
}

static void free_held(dpl_qp *q) {
	while (q->hhead) {
		struct held *h = q->hhead;
		q->hhead = h->next;
		free(h);
	}
	q->htail = NULL;
	q->nheld = 0;
}

// lost: the socket failed, as a peer that vanished.
static void lost(dpl_qp *q) {
	if (q->type == DPL_RC)
		while (q->ulen > 0 && q->state == ST_READY)
			acked(q, DPL_WC_RETRY);
	to_error(q);
	disconnected(q);
}

static void complete(dpl_qp *q, uint64_t id, uint8_t op, uint8_t status, uint32_t len, uint32_t imm, uint64_t seq) {
	if (q->state == ST_CLOSED)
		return;
	if (q->cqcount == q->cqsize) {
		struct cqe *last = &q->cq[(q->cqhead + q->cqcount - 1) % q->cqsize];
		memset(last, 0, sizeof *last);
		last->wc.op = op, last->wc.status = DPL_WC_CQ_OVERRUN;
		to_error(q);
		return;
	}
	struct cqe *e = &q->cq[(q->cqhead + q->cqcount) % q->cqsize];
	q->cqcount++;
	*e = (struct cqe){.wc = {.wr_id = id, .byte_len = len, .imm = imm, .op = op, .status = status}, .seq = seq};
}

static void to_error(dpl_qp *q) {
	if (q->state != ST_INIT && q->state != ST_READY)
		return;
	q->state = ST_ERROR;
	while (q->rcount > 0) {
		struct recv_slot s = q->recvs[q->rhead];
		q->rhead = (q->rhead + 1) % q->rq;
		q->rcount--;
		if (q->cqcount < q->cqsize) {
			q->cq[(q->cqhead + q->cqcount) % q->cqsize] = (struct cqe){.wc = {.wr_id = s.id, .op = DPL_OP_RECV, .status = DPL_WC_FLUSHED}};
			q->cqcount++;
		}
	}
	while (q->ulen > 0) {
		struct pending w = q->unacked[q->uhead];
		q->uhead = (q->uhead + 1) % q->sq;
		q->ulen--;
		if (q->cqcount < q->cqsize) {
			q->cq[(q->cqhead + q->cqcount) % q->cqsize] = (struct cqe){.wc = {.wr_id = w.id, .op = w.op, .status = DPL_WC_FLUSHED}, .seq = w.seq};
			q->cqcount++;
		}
	}
	free_held(q);
}

static void send_ack(dpl_qp *q, uint8_t status) {
	if (queue_frame(q, FRAME_ACK, status, 0, 0, 0, NULL, 0) != 0)
		lost(q);
}

// deliver applies one arrived SEND or WRITE WITH IMM (header and payload
// in m, len bytes, payload length already checked against len); RC
// acknowledges it with its outcome.
static void deliver(dpl_qp *q, const uint8_t *m) {
	uint8_t kind = m[0];
	uint32_t imm = get32(m + 4), rkey = get32(m + 8), n = get32(m + 12);
	uint64_t raddr = get64(m + 16);
	const uint8_t *data = m + FRAME_HEADER;
	struct region *dst = NULL;
	if (kind == FRAME_WRITE) {
		dst = region_by_key(q, rkey);
		if (!dst || !dst->remote_write || raddr < dst->mr.addr || raddr - dst->mr.addr > dst->mr.len ||
		    (uint64_t)n > dst->mr.len - (raddr - dst->mr.addr)) {
			if (q->type == DPL_RC)
				send_ack(q, DPL_WC_REM_ACCESS);
			else
				q->violations++;
			return;
		}
	}
	if (q->rcount == 0) {
		q->dropped++; // UC: dropped at the receiver (RC holds instead)
		return;
	}
	struct recv_slot s = q->recvs[q->rhead];
	if (kind == FRAME_SEND && n > s.n) {
		if (q->type == DPL_RC) {
			q->rhead = (q->rhead + 1) % q->rq;
			q->rcount--;
			complete(q, s.id, DPL_OP_RECV, DPL_WC_LOC_LEN, 0, 0, 0);
			send_ack(q, DPL_WC_REM_INV_REQ);
			to_error(q);
		}
		return;
	}
	q->rhead = (q->rhead + 1) % q->rq;
	q->rcount--;
	if (kind == FRAME_SEND) {
		// s.mr may have been deregistered under the receive: then the
		// bytes go nowhere (the completion still tells).
		if (s.mr && n)
			memcpy((uint8_t *)s.mr->buf + s.off, data, n);
		complete(q, s.id, DPL_OP_RECV, DPL_WC_SUCCESS, n, 0, 0);
	} else {
		if (n)
			memcpy((uint8_t *)dst->mr.buf + (raddr - dst->mr.addr), data, n);
		complete(q, s.id, DPL_OP_RECV_IMM, DPL_WC_SUCCESS, n, imm, 0);
	}
	if (q->type == DPL_RC)
		send_ack(q, DPL_WC_SUCCESS);
}

static void release_held(dpl_qp *q) {
	while (q->hhead && q->rcount > 0 && q->state == ST_READY) {
		struct held *h = q->hhead;
		q->hhead = h->next;
		if (!q->hhead)
			q->htail = NULL;
		q->nheld--;
		deliver(q, h->data);
		free(h);
	}
}

// take applies one complete frame from the input (header + n payload
// bytes); -1 when the peer is broken.
static int take(dpl_qp *q, const uint8_t *f, uint32_t n) {
	switch (f[0]) {
	case FRAME_SEND:
	case FRAME_WRITE:
		if (q->state != ST_READY) {
			// A queue pair in the error state answers nothing: the
			// sender's RC request runs out of retries.
			if (q->type == DPL_RC)
				send_ack(q, DPL_WC_RETRY);
		} else if (q->hhead || (q->rcount == 0 && q->type == DPL_RC)) {
			if (q->nheld >= MAX_HELD)
				return -1;
			struct held *h = malloc(sizeof *h + FRAME_HEADER + n);
			if (!h)
				return -1;
			h->next = NULL;
			h->len = FRAME_HEADER + n;
			memcpy(h->data, f, FRAME_HEADER + (size_t)n);
			if (q->htail)
				q->htail->next = h;
			else
				q->hhead = h;
			q->htail = h;
			q->nheld++;
		} else {
			deliver(q, f);
		}
		return 0;
	case FRAME_ACK:
		acked(q, f[1] <= DPL_WC_OTHER ? f[1] : DPL_WC_OTHER);
		return 0;
	case FRAME_DISCONNECT:
		to_error(q);
		disconnected(q);
		return 0;
	}
	return -1; // not our peer, or a broken one
}

// progress moves bytes both ways without blocking.
static void progress(dpl_qp *q) {
	if (q->state == ST_INIT || q->state == ST_CLOSED || q->fd < 0)
		return;
	if (q->outlen)
		flush(q);
	if (q->gone)
		return;
	for (;;) {
		if (q->incap - q->inlen < 64 << 10) {
			size_t c = q->incap ? q->incap * 2 : 256 << 10;
			if (c > FRAME_HEADER + MAX_FRAME + (256 << 10))
				c = FRAME_HEADER + MAX_FRAME + (256 << 10);
			if (c > q->incap) {
				uint8_t *b = realloc(q->in, c);
				if (!b) {
					lost(q);
					return;
				}
				q->in = b;
				q->incap = c;
			}
		}
		if (q->inlen == q->incap)
			break; // cannot happen: a frame fits; guard anyway
		ssize_t k = recv(q->fd, q->in + q->inlen, q->incap - q->inlen, MSG_DONTWAIT);
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			lost(q);
			return;
		}
		if (k < 0)
			break;
		q->inlen += (size_t)k;
		size_t off = 0;
		while (q->inlen - off >= FRAME_HEADER) {
			const uint8_t *f = q->in + off;
			uint32_t n = 0;
			if (f[0] == FRAME_SEND || f[0] == FRAME_WRITE) {
				n = get32(f + 12);
				if (n > MAX_FRAME) {
					lost(q);
					return;
				}
			}
			if (q->inlen - off < FRAME_HEADER + (size_t)n)
				break;
			if (take(q, f, n) != 0) {
				lost(q);
				return;
			}
			off += FRAME_HEADER + (size_t)n;
			if (q->gone)
				break;
		}
		memmove(q->in, q->in + off, q->inlen - off);
		q->inlen -= off;
		if (q->gone)
			return;
	}
	if (q->outlen)
		flush(q);
}

int dpl_post_recv(dpl_qp *q, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n) {
	if (q->state != ST_INIT && q->state != ST_READY)
		return DPL_EQPSTATE;
	if (!local_ok(q, mr, off, n))
		return DPL_ELOCAL;
	if (q->rcount == q->rq)
		return DPL_EFULL;
	q->recvs[(q->rhead + q->rcount) % q->rq] = (struct recv_slot){.id = wr_id, .mr = mr, .off = off, .n = n};
	q->rcount++;
	size_t before = q->outlen;
	release_held(q);
	if (q->outlen != before)
		flush(q);
	return 0;
}

static int post(dpl_qp *q, uint8_t kind, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n, uint64_t raddr,
		uint32_t rkey, uint32_t imm, int signaled) {
	if (q->state != ST_READY)
		return DPL_EQPSTATE;
	if (!local_ok(q, mr, off, n) || n > MAX_FRAME)
		return DPL_ELOCAL;
	if (q->post_seq - q->freed_seq >= (uint64_t)q->sq)
		return DPL_EFULL;
	if (queue_frame(q, kind, 0, imm, rkey, raddr, (const uint8_t *)mr->buf + off, (uint32_t)n) != 0)
		return DPL_EOTHER;
	q->post_seq++;
	uint8_t op = kind == FRAME_WRITE ? DPL_OP_WRITE : DPL_OP_SEND;
	if (q->type == DPL_RC) {
		q->unacked[(q->uhead + q->ulen) % q->sq] = (struct pending){.id = wr_id, .seq = q->post_seq, .n = (uint32_t)n, .op = op, .signaled = signaled};
		q->ulen++;
	} else if (signaled) {
		complete(q, wr_id, op, DPL_WC_SUCCESS, (uint32_t)n, 0, q->post_seq); // UC: on its way
	}
	flush(q);
	return 0;
}

int dpl_post_send(dpl_qp *q, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n, int signaled) {
	return post(q, FRAME_SEND, wr_id, mr, off, n, 0, 0, 0, signaled);
}

int dpl_post_write_imm(dpl_qp *q, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n, uint64_t raddr, uint32_t rkey,
		       uint32_t imm, int signaled) {
	return post(q, FRAME_WRITE, wr_id, mr, off, n, raddr, rkey, imm, signaled);
}

int dpl_poll(dpl_qp *q, struct dpl_wc *wc, int n) {
	progress(q);
	int k = 0;
	while (k < n && q->cqcount > 0) {
		struct cqe *e = &q->cq[q->cqhead];
		q->cqhead = (q->cqhead + 1) % q->cqsize;
		q->cqcount--;
		if (e->seq > q->freed_seq)
			q->freed_seq = e->seq;
		wc[k++] = e->wc;
	}
	return k;
}

int dpl_event(dpl_qp *q) {
	if (q->nev == 0)
		return DPL_EV_NONE;
	int ev = q->events[0];
	memmove(q->events, q->events + 1, (size_t)(q->nev - 1) * sizeof q->events[0]);
	q->nev--;
	return ev;
}

int dpl_arm(dpl_qp *q) {
	(void)q;
	return 0;
}

int dpl_wait(dpl_qp *q, int timeout_ms) {
	struct pollfd pf[2] = {{.fd = q->wakefd, .events = POLLIN}, {.fd = q->fd, .events = POLLIN}};
	if (__atomic_load_n(&q->want_out, __ATOMIC_ACQUIRE))
		pf[1].events |= POLLOUT;
	// After the disconnect nothing more is read: the socket's end of
	// stream must not keep waking the waiter.
	int n = __atomic_load_n(&q->gone, __ATOMIC_ACQUIRE) ? 1 : 2;
	int r = poll(pf, (nfds_t)n, timeout_ms);
	if (r > 0 && (pf[0].revents & POLLIN)) {
		uint64_t drain;
		if (read(q->wakefd, &drain, sizeof drain) < 0) {
			// Taken by another waiter.
		}
	}
	return r;
}

int dpl_disconnect(dpl_qp *q) {
	if (q->state != ST_READY && q->state != ST_ERROR)
		return 0;
	if (!q->gone && queue_frame(q, FRAME_DISCONNECT, 0, 0, 0, 0, NULL, 0) == 0)
		flush(q);
	to_error(q);
	disconnected(q);
	return 0;
}

void dpl_destroy(dpl_qp *q) {
	if (!q)
		return;
	int started = q->state != ST_INIT;
	dpl_disconnect(q);
	q->state = ST_CLOSED;
	if (started && q->fd >= 0 && q->outlen) {
		// The disconnect gets a second to go out to a peer that stopped
		// reading.
		long long dl = now_ms() + 1000;
		while (q->outlen && now_ms() < dl) {
			struct pollfd pf = {.fd = q->fd, .events = POLLOUT};
			poll(&pf, 1, 100);
			size_t before = q->outlen;
			flush(q);
			if (q->outlen == before && !(pf.revents & POLLOUT))
				continue;
		}
	}
	if (q->fd >= 0)
		close(q->fd);
	close(q->wakefd);
	for (int i = 0; i < q->nregions; i++)
		unmap_region(q->regions[i]);
	free(q->regions);
	free_held(q);
	free(q->recvs);
	free(q->unacked);
	free(q->cq);
	free(q->out);
	free(q->in);
	free(q);
}
