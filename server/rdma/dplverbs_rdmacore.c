//go:build rdma && !rdmasim && cgo

// dplverbs_rdmacore.c: dplverbs.h over rdma-core, what ships with -tags
// rdma. libibverbs and librdmacm are opened at run time (dlopen) and called
// through function pointers, so a binary built with the tag starts on a
// host without them; ibv_post_send, ibv_post_recv, ibv_poll_cq and
// ibv_req_notify_cq are inline in verbs.h (through the device's ops) and
// need no symbol. Setup follows Valkey's src/rdma.c: librdmacm, one
// completion channel and one CQ per connection, RC with rnr_retry_count 7.
// RC ids live in the TCP port space (RDMA_PS_TCP, what Valkey's clients
// use); UC needs an id whose CM requests say UC, which librdmacm gives
// through rdma_create_ep with ai_qp_type IBV_QPT_UC in the IB port space.

#define _GNU_SOURCE
#include "dplverbs.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define FN(name) __typeof__(name) *name
static struct {
	FN(ibv_alloc_pd);
	FN(ibv_dealloc_pd);
	FN(ibv_reg_mr);
	FN(ibv_dereg_mr);
	FN(ibv_create_comp_channel);
	FN(ibv_destroy_comp_channel);
	FN(ibv_create_cq);
	FN(ibv_destroy_cq);
	FN(ibv_get_cq_event);
	FN(ibv_ack_cq_events);
	FN(rdma_create_event_channel);
	FN(rdma_destroy_event_channel);
	FN(rdma_getaddrinfo);
	FN(rdma_freeaddrinfo);
	FN(rdma_create_ep);
	FN(rdma_destroy_id);
	FN(rdma_migrate_id);
	FN(rdma_listen);
	FN(rdma_connect);
	FN(rdma_accept);
	FN(rdma_reject);
	FN(rdma_disconnect);
	FN(rdma_get_cm_event);
	FN(rdma_ack_cm_event);
	FN(rdma_create_qp);
	FN(rdma_destroy_qp);
} fn;
#undef FN

// Our clients say who they are in the connect request's private data, so
// a server refuses a client of the other queue-pair type with the reason;
// Valkey's clients send none (RC).
static const uint8_t dpl_magic[4] = {'D', 'P', 'L', 'R'};

struct dpl_listener {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	int wakefd, type;
};

struct mr_node {
	struct dpl_mr mr;
	struct mr_node *next;
};

struct dpl_qp {
	struct rdma_cm_id *id;
	struct rdma_event_channel *ch;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	int has_qp, server, established, gone, errstate;
	int wakefd, type, sq, rq, inline_size, retry, peer_type;
	unsigned cq_events; // taken from the channel by dpl_wait, not yet acked
	struct mr_node *mrs;
	int events[4], nev;
};

static void seterr(char *err, size_t errlen, const char *fmt, ...) {
	if (!err || errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static long long now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int nonblock(int fd) { return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

int dpl_init(char *err, size_t errlen) {
	static int done;
	if (done)
		return 0;
	void *v = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	void *c = dlopen("librdmacm.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!v || !c) {
		seterr(err, errlen, "cannot load %s: %s", v ? "librdmacm.so.1" : "libibverbs.so.1", dlerror());
		return -1;
	}
#define LOAD(h, name)                                                                            \
	do {                                                                                     \
		*(void **)&fn.name = dlsym(h, #name);                                            \
		if (!fn.name) {                                                                  \
			seterr(err, errlen, "%s lacks %s: rdma-core is too old", h == v ? "libibverbs.so.1" : "librdmacm.so.1", #name); \
			return -1;                                                               \
		}                                                                                \
	} while (0)
	LOAD(v, ibv_alloc_pd);
	LOAD(v, ibv_dealloc_pd);
	LOAD(v, ibv_reg_mr);
	LOAD(v, ibv_dereg_mr);
	LOAD(v, ibv_create_comp_channel);
	LOAD(v, ibv_destroy_comp_channel);
	LOAD(v, ibv_create_cq);
	LOAD(v, ibv_destroy_cq);
	LOAD(v, ibv_get_cq_event);
	LOAD(v, ibv_ack_cq_events);
	LOAD(c, rdma_create_event_channel);
	LOAD(c, rdma_destroy_event_channel);
	LOAD(c, rdma_getaddrinfo);
	LOAD(c, rdma_freeaddrinfo);
	LOAD(c, rdma_create_ep);
	LOAD(c, rdma_destroy_id);
	LOAD(c, rdma_migrate_id);
	LOAD(c, rdma_listen);
	LOAD(c, rdma_connect);
	LOAD(c, rdma_accept);
	LOAD(c, rdma_reject);
	LOAD(c, rdma_disconnect);
	LOAD(c, rdma_get_cm_event);
	LOAD(c, rdma_ack_cm_event);
	LOAD(c, rdma_create_qp);
	LOAD(c, rdma_destroy_qp);
#undef LOAD
	done = 1;
	return 0;
}

// new_id makes an id of the queue pair's type for host:port (passive: to
// listen on), moved to channel ch: RC in the TCP port space, UC in the IB
// one with a UC id. An active id has its address and route resolved.
static struct rdma_cm_id *new_id(struct rdma_event_channel *ch, const char *host, int port, const char *src, int type,
				 int passive, char *err, size_t errlen) {
	struct rdma_addrinfo hints = {0}, *res = NULL;
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	hints.ai_port_space = type == DPL_UC ? RDMA_PS_IB : RDMA_PS_TCP;
	hints.ai_qp_type = type == DPL_UC ? IBV_QPT_UC : IBV_QPT_RC;
	if (passive && (!*host || !strcmp(host, "*") || !strcmp(host, "0.0.0.0") || !strcmp(host, "::")))
		host = NULL;
	int rc = fn.rdma_getaddrinfo(host, ps, &hints, &res);
	if (rc) {
		seterr(err, errlen, "rdma_getaddrinfo %s:%d: %s", host ? host : "*", port, strerror(errno));
		return NULL;
	}
	// A source address picks the interface, and so the device, the
	// connection leaves by: rdma_create_ep resolves from ai_src_addr.
	struct sockaddr_storage ss = {0};
	struct sockaddr *osrc = res->ai_src_addr;
	socklen_t osrclen = res->ai_src_len;
	if (!passive && src && *src) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		if (inet_pton(AF_INET, src, &s4->sin_addr) == 1) {
			s4->sin_family = AF_INET;
			res->ai_src_len = sizeof *s4;
		} else if (inet_pton(AF_INET6, src, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			res->ai_src_len = sizeof *s6;
		} else {
			fn.rdma_freeaddrinfo(res);
			seterr(err, errlen, "source address %s: not a numeric IPv4 or IPv6 address", src);
			return NULL;
		}
		res->ai_src_addr = (struct sockaddr *)&ss;
	}
	struct rdma_cm_id *id = NULL;
	rc = fn.rdma_create_ep(&id, res, NULL, NULL);
	int saved = errno;
	res->ai_src_addr = osrc;
	res->ai_src_len = osrclen;
	fn.rdma_freeaddrinfo(res);
	if (rc) {
		if (passive)
			seterr(err, errlen, "rdma_create_ep (bind %s:%d): %s%s", host ? host : "*", port, strerror(saved),
			       saved == EADDRNOTAVAIL || saved == ENODEV ? " (no RDMA device has that address)" : "");
		else if (src && *src)
			seterr(err, errlen, "rdma_create_ep (address and route from %s): %s%s", src, strerror(saved),
			       saved == EADDRNOTAVAIL || saved == ENODEV || saved == EINVAL ? " (is the source address on an RDMA device's interface?)" : "");
		else
			seterr(err, errlen, "rdma_create_ep (address and route): %s", strerror(saved));
		return NULL;
	}
	if (fn.rdma_migrate_id(id, ch)) {
		seterr(err, errlen, "rdma_migrate_id: %s", strerror(errno));
		fn.rdma_destroy_id(id);
		return NULL;
	}
	return id;
}

static void addr_host(struct sockaddr *sa, char *host, size_t hostlen) {
	if (!host || hostlen == 0)
		return;
	host[0] = 0;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, host, (socklen_t)hostlen);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, host, (socklen_t)hostlen);
}

static int addr_port(struct sockaddr *sa) {
	if (sa->sa_family == AF_INET)
		return ntohs(((struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

dpl_listener *dpl_listen(const char *host, int port, int type, int *bound, char *err, size_t errlen) {
	dpl_listener *l = calloc(1, sizeof *l);
	if (!l) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	l->type = type;
	l->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->ch = fn.rdma_create_event_channel();
	if (l->wakefd < 0 || !l->ch) {
		seterr(err, errlen, "rdma_create_event_channel: %s", strerror(errno));
		goto fail;
	}
	nonblock(l->ch->fd);
	l->id = new_id(l->ch, host, port, NULL, type, 1, err, errlen);
	if (!l->id)
		goto fail;
	if (fn.rdma_listen(l->id, 128)) {
		seterr(err, errlen, "rdma_listen: %s", strerror(errno));
		goto fail;
	}
	*bound = addr_port(&l->id->route.addr.src_addr);
	if (!*bound)
		*bound = port;
	return l;
fail:
	if (l->id)
		fn.rdma_destroy_id(l->id);
	if (l->ch)
		fn.rdma_destroy_event_channel(l->ch);
	if (l->wakefd >= 0)
		close(l->wakefd);
	free(l);
	return NULL;
}

static dpl_qp *qp_new(void) {
	dpl_qp *q = calloc(1, sizeof *q);
	if (!q)
		return NULL;
	q->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->wakefd < 0) {
		free(q);
		return NULL;
	}
	return q;
}

dpl_qp *dpl_accept(dpl_listener *l, int timeout_ms, char *err, size_t errlen) {
	struct pollfd pf[2] = {{.fd = l->ch->fd, .events = POLLIN}, {.fd = l->wakefd, .events = POLLIN}};
	err[0] = 0;
	if (poll(pf, 2, timeout_ms) <= 0 || (pf[1].revents & POLLIN))
		return NULL;
	struct rdma_cm_event *ev;
	if (fn.rdma_get_cm_event(l->ch, &ev))
		return NULL;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		fn.rdma_ack_cm_event(ev);
		return NULL;
	}
	dpl_qp *q = qp_new();
	if (!q) {
		fn.rdma_reject(ev->id, NULL, 0);
		fn.rdma_destroy_id(ev->id);
		fn.rdma_ack_cm_event(ev);
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	q->id = ev->id;
	q->server = 1;
	q->peer_type = DPL_RC; // Valkey's clients say nothing: RC
	const uint8_t *pd = ev->param.conn.private_data;
	if (pd && ev->param.conn.private_data_len >= 5 && !memcmp(pd, dpl_magic, 4))
		q->peer_type = pd[4];
	fn.rdma_ack_cm_event(ev);
	return q;
}

void dpl_wake_listener(dpl_listener *l) {
	uint64_t one = 1;
	if (write(l->wakefd, &one, sizeof one) < 0) {
		// The counter is full: a wake-up is pending anyway.
	}
}

void dpl_listener_close(dpl_listener *l) {
	fn.rdma_destroy_id(l->id);
	fn.rdma_destroy_event_channel(l->ch);
	close(l->wakefd);
	free(l);
}

// verbs creates the protection domain, completion channel, CQ and queue
// pair on the id's device.
static int verbs(dpl_qp *q, const struct dpl_opts *o, char *err, size_t errlen) {
	q->type = o->type == DPL_UC ? DPL_UC : DPL_RC;
	q->sq = o->sq_size > 0 ? o->sq_size : 1024;
	q->rq = o->rq_size > 0 ? o->rq_size : 1024;
	q->inline_size = o->inline_size > 0 ? o->inline_size : 0;
	q->retry = o->retry_count > 0 && o->retry_count <= 7 ? o->retry_count : 7;
	struct ibv_context *ctx = q->id->verbs;
	if (!ctx) {
		seterr(err, errlen, "the connection has no RDMA device");
		return -1;
	}
	if (!(q->pd = fn.ibv_alloc_pd(ctx))) {
		seterr(err, errlen, "ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	if (!(q->cc = fn.ibv_create_comp_channel(ctx))) {
		seterr(err, errlen, "ibv_create_comp_channel: %s", strerror(errno));
		return -1;
	}
	nonblock(q->cc->fd);
	int vec = o->comp_vector;
	if (vec < 0)
		vec = ctx->num_comp_vectors > 0 ? (int)(random() % ctx->num_comp_vectors) : 0;
	else if (ctx->num_comp_vectors > 0)
		vec %= ctx->num_comp_vectors;
	if (!(q->cq = fn.ibv_create_cq(ctx, q->sq + q->rq, NULL, q->cc, vec))) {
		seterr(err, errlen, "ibv_create_cq (%d entries, vector %d): %s", q->sq + q->rq, vec, strerror(errno));
		return -1;
	}
	if (ibv_req_notify_cq(q->cq, 0)) {
		seterr(err, errlen, "ibv_req_notify_cq: %s", strerror(errno));
		return -1;
	}
	struct ibv_qp_init_attr a = {
		.send_cq = q->cq,
		.recv_cq = q->cq,
		.qp_type = q->type == DPL_UC ? IBV_QPT_UC : IBV_QPT_RC,
		.cap = {.max_send_wr = (uint32_t)q->sq, .max_recv_wr = (uint32_t)q->rq, .max_send_sge = 1, .max_recv_sge = 1,
			.max_inline_data = (uint32_t)q->inline_size},
	};
	if (fn.rdma_create_qp(q->id, q->pd, &a)) {
		seterr(err, errlen, "rdma_create_qp (%s, send %d, receive %d, inline %d): %s", q->type == DPL_UC ? "UC" : "RC", q->sq,
		       q->rq, q->inline_size, strerror(errno));
		return -1;
	}
	q->has_qp = 1;
	// The adapter may give more inline room than asked, never less.
	q->inline_size = (int)a.cap.max_inline_data;
	return 0;
}

void dpl_peer(dpl_qp *q, char *host, size_t hostlen, int *port) {
	addr_host(&q->id->route.addr.dst_addr, host, hostlen);
	*port = addr_port(&q->id->route.addr.dst_addr);
}

int dpl_accept_setup(dpl_qp *q, const struct dpl_opts *o, int timeout_ms, char *err, size_t errlen) {
	(void)timeout_ms;
	int want = o->type == DPL_UC ? DPL_UC : DPL_RC;
	if (q->peer_type != want) {
		// The words travel in the reject's private data (at most 148
		// bytes in an IB CM REJ): who we are and what the client asked.
		char self[INET6_ADDRSTRLEN] = "";
		addr_host(&q->id->route.addr.src_addr, self, sizeof self);
		char msg[140];
		int n = snprintf(msg, sizeof msg, "the server on %s%s%s:%d speaks %s; this client asked for %s",
				 strchr(self, ':') ? "[" : "", self, strchr(self, ':') ? "]" : "",
				 addr_port(&q->id->route.addr.src_addr), want == DPL_UC ? "UC" : "RC",
				 q->peer_type == DPL_UC ? "UC" : "RC");
		fn.rdma_reject(q->id, msg, (uint8_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1));
		seterr(err, errlen, "%s", msg);
		return -1;
	}
	if (!(q->ch = fn.rdma_create_event_channel())) {
		seterr(err, errlen, "rdma_create_event_channel: %s", strerror(errno));
		return -1;
	}
	nonblock(q->ch->fd);
	if (fn.rdma_migrate_id(q->id, q->ch)) {
		seterr(err, errlen, "rdma_migrate_id: %s", strerror(errno));
		return -1;
	}
	if (verbs(q, o, err, errlen) != 0) {
		fn.rdma_reject(q->id, NULL, 0);
		return -1;
	}
	return 0;
}

dpl_qp *dpl_connect(const char *host, int port, const char *src, const struct dpl_opts *o, char *local_host,
		    size_t hostlen, int *local_port, int timeout_ms, char *err, size_t errlen) {
	(void)timeout_ms; // rdma_create_ep resolves with librdmacm's own time-outs (2 s each)
	dpl_qp *q = qp_new();
	if (!q) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	if (!(q->ch = fn.rdma_create_event_channel())) {
		seterr(err, errlen, "rdma_create_event_channel: %s", strerror(errno));
		dpl_destroy(q);
		return NULL;
	}
	nonblock(q->ch->fd);
	q->id = new_id(q->ch, host, port, src, o->type == DPL_UC ? DPL_UC : DPL_RC, 0, err, errlen);
	if (!q->id || verbs(q, o, err, errlen) != 0) {
		dpl_destroy(q);
		return NULL;
	}
	addr_host(&q->id->route.addr.src_addr, local_host, hostlen);
	*local_port = addr_port(&q->id->route.addr.src_addr);
	return q;
}

static const char *event_name(enum rdma_cm_event_type e) {
	switch (e) {
	case RDMA_CM_EVENT_REJECTED:
		return "rejected by the server";
	case RDMA_CM_EVENT_UNREACHABLE:
		return "server unreachable";
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return "connect error";
	case RDMA_CM_EVENT_DISCONNECTED:
		return "disconnected";
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return "device removed";
	default:
		return "unexpected connection event";
	}
}

static void push_event(dpl_qp *q, int ev) {
	if (q->nev < (int)(sizeof q->events / sizeof q->events[0]))
		q->events[q->nev++] = ev;
}

int dpl_establish(dpl_qp *q, int timeout_ms, char *err, size_t errlen) {
	struct rdma_conn_param p = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = (uint8_t)q->retry,
		.rnr_retry_count = 7, // what libvalkey asks: the protocol has no credits
	};
	uint8_t pd[5];
	int rc;
	if (q->server) {
		rc = fn.rdma_accept(q->id, &p);
	} else {
		memcpy(pd, dpl_magic, 4);
		pd[4] = (uint8_t)q->type;
		p.private_data = pd;
		p.private_data_len = sizeof pd;
		rc = fn.rdma_connect(q->id, &p);
	}
	if (rc) {
		seterr(err, errlen, "%s: %s", q->server ? "rdma_accept" : "rdma_connect", strerror(errno));
		return -1;
	}
	long long dl = now_ms() + timeout_ms;
	for (;;) {
		long long left = dl - now_ms();
		struct pollfd pf = {.fd = q->ch->fd, .events = POLLIN};
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0) {
			seterr(err, errlen, "no connection within %d ms", timeout_ms);
			return -1;
		}
		struct rdma_cm_event *ev;
		if (fn.rdma_get_cm_event(q->ch, &ev))
			continue;
		enum rdma_cm_event_type t = ev->event;
		char why[128] = "";
		if (t == RDMA_CM_EVENT_REJECTED && ev->param.conn.private_data_len > 0 && ev->param.conn.private_data) {
			// The server's words reach the terminal: printable ASCII only.
			size_t n = ev->param.conn.private_data_len < sizeof why - 1 ? ev->param.conn.private_data_len : sizeof why - 1;
			const char *s = ev->param.conn.private_data;
			size_t k = 0;
			for (size_t i = 0; i < n && s[i]; i++)
				why[k++] = s[i] >= 0x20 && s[i] <= 0x7e ? s[i] : '?';
			why[k] = 0;
		}
		fn.rdma_ack_cm_event(ev);
		if (t == RDMA_CM_EVENT_ESTABLISHED) {
			q->established = 1;
			push_event(q, DPL_EV_ESTABLISHED);
			return 0;
		}
		seterr(err, errlen, "%s%s%s", event_name(t), why[0] ? ": " : "", why);
		return -1;
	}
}

int dpl_sq_depth(dpl_qp *q) { return q->sq; }
int dpl_rq_depth(dpl_qp *q) { return q->rq; }

struct dpl_mr *dpl_reg(dpl_qp *q, size_t len, int remote_write, char *err, size_t errlen) {
	if (len == 0 || len > (64u << 20)) {
		seterr(err, errlen, "register %zu bytes: size out of range", len);
		return NULL;
	}
	struct mr_node *m = calloc(1, sizeof *m);
	if (!m) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	// Page-aligned, with a guard page on each side: registered memory
	// must not move, and an overrun faults instead of corrupting.
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (len + pg - 1) / pg * pg;
	m->mr.maplen = body + 2 * pg;
	m->mr.map = mmap(NULL, m->mr.maplen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->mr.map == MAP_FAILED) {
		seterr(err, errlen, "mmap %zu bytes: %s", len, strerror(errno));
		free(m);
		return NULL;
	}
	m->mr.buf = (uint8_t *)m->mr.map + pg;
	m->mr.len = len;
	if (mprotect(m->mr.buf, body, PROT_READ | PROT_WRITE) != 0) {
		seterr(err, errlen, "mprotect: %s", strerror(errno));
		munmap(m->mr.map, m->mr.maplen);
		free(m);
		return NULL;
	}
	int access = IBV_ACCESS_LOCAL_WRITE | (remote_write ? IBV_ACCESS_REMOTE_WRITE : 0);
	struct ibv_mr *mr = (fn.ibv_reg_mr)(q->pd, m->mr.buf, len, access);
	if (!mr) {
		seterr(err, errlen, "ibv_reg_mr %zu bytes: %s%s", len, strerror(errno),
		       errno == ENOMEM || errno == EPERM ? " (raise the locked-memory limit: ulimit -l unlimited)" : "");
		munmap(m->mr.map, m->mr.maplen);
		free(m);
		return NULL;
	}
	m->mr.priv = mr;
	m->mr.addr = (uint64_t)(uintptr_t)m->mr.buf;
	m->mr.rkey = mr->rkey;
	m->mr.lkey = mr->lkey;
	m->next = q->mrs;
	q->mrs = m;
	return &m->mr;
}

static void free_mr(struct mr_node *m) {
	fn.ibv_dereg_mr(m->mr.priv);
	munmap(m->mr.map, m->mr.maplen);
	free(m);
}

int dpl_dereg(dpl_qp *q, struct dpl_mr *mr) {
	for (struct mr_node **p = &q->mrs; *p; p = &(*p)->next) {
		if (&(*p)->mr == mr) {
			struct mr_node *m = *p;
			*p = m->next;
			free_mr(m);
			return 0;
		}
	}
	return DPL_ELOCAL;
}

static int local_ok(dpl_qp *q, struct dpl_mr *mr, size_t off, size_t n) {
	for (struct mr_node *m = q->mrs; m; m = m->next)
		if (&m->mr == mr)
			return off <= mr->len && n <= mr->len - off && n <= UINT32_MAX;
	return 0;
}

static int post_err(int rc) { return rc == ENOMEM ? DPL_EFULL : DPL_EQPSTATE; }

int dpl_post_recv(dpl_qp *q, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n) {
	if (!q->has_qp || q->errstate)
		return DPL_EQPSTATE;
	if (!local_ok(q, mr, off, n))
		return DPL_ELOCAL;
	struct ibv_sge sge = {.addr = mr->addr + off, .length = (uint32_t)n, .lkey = mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;
	int rc = ibv_post_recv(q->id->qp, &wr, &bad);
	return rc ? post_err(rc) : 0;
}

static int post(dpl_qp *q, enum ibv_wr_opcode opc, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n, uint64_t raddr,
		uint32_t rkey, uint32_t imm, int signaled) {
	if (!q->has_qp || !q->established || q->errstate)
		return DPL_EQPSTATE;
	if (!local_ok(q, mr, off, n))
		return DPL_ELOCAL;
	struct ibv_sge sge = {.addr = mr->addr + off, .length = (uint32_t)n, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = opc}, *bad;
	if (signaled)
		wr.send_flags |= IBV_SEND_SIGNALED;
	if (n > 0 && (int)n <= q->inline_size)
		wr.send_flags |= IBV_SEND_INLINE;
	if (opc == IBV_WR_RDMA_WRITE_WITH_IMM) {
		wr.imm_data = htonl(imm);
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	int rc = ibv_post_send(q->id->qp, &wr, &bad);
	return rc ? post_err(rc) : 0;
}

int dpl_post_send(dpl_qp *q, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n, int signaled) {
	return post(q, IBV_WR_SEND, wr_id, mr, off, n, 0, 0, 0, signaled);
}

int dpl_post_write_imm(dpl_qp *q, uint64_t wr_id, struct dpl_mr *mr, size_t off, size_t n, uint64_t raddr, uint32_t rkey,
		       uint32_t imm, int signaled) {
	return post(q, IBV_WR_RDMA_WRITE_WITH_IMM, wr_id, mr, off, n, raddr, rkey, imm, signaled);
}

static uint8_t wc_status(enum ibv_wc_status s) {
	switch (s) {
	case IBV_WC_SUCCESS:
		return DPL_WC_SUCCESS;
	case IBV_WC_WR_FLUSH_ERR:
		return DPL_WC_FLUSHED;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return DPL_WC_RNR;
	case IBV_WC_REM_ACCESS_ERR:
		return DPL_WC_REM_ACCESS;
	case IBV_WC_REM_INV_REQ_ERR:
		return DPL_WC_REM_INV_REQ;
	case IBV_WC_LOC_LEN_ERR:
		return DPL_WC_LOC_LEN;
	case IBV_WC_RETRY_EXC_ERR:
		return DPL_WC_RETRY;
	default:
		return DPL_WC_OTHER;
	}
}

int dpl_poll(dpl_qp *q, struct dpl_wc *wc, int n) {
	if (!q->cq)
		return 0;
	// The completion channel is dpl_wait's alone: taking its
	// notification here would leave the waiter asleep on a CQ that is no
	// longer armed (the stall seen on Soft-RoCE).
	struct ibv_wc w[64];
	if (n > 64)
		n = 64;
	int k = ibv_poll_cq(q->cq, n, w);
	if (k < 0)
		return DPL_EOTHER;
	for (int i = 0; i < k; i++) {
		// A failed completion's opcode is undefined: op 0, the Go side
		// reads it from the request id.
		uint8_t op = 0;
		if (w[i].status == IBV_WC_SUCCESS) {
			switch (w[i].opcode) {
			case IBV_WC_SEND:
				op = DPL_OP_SEND;
				break;
			case IBV_WC_RDMA_WRITE:
				op = DPL_OP_WRITE;
				break;
			case IBV_WC_RECV:
				op = DPL_OP_RECV;
				break;
			case IBV_WC_RECV_RDMA_WITH_IMM:
				op = DPL_OP_RECV_IMM;
				break;
			default:
				break;
			}
		} else {
			q->errstate = 1;
		}
		wc[i] = (struct dpl_wc){
			.wr_id = w[i].wr_id,
			.byte_len = w[i].byte_len,
			.imm = (w[i].wc_flags & IBV_WC_WITH_IMM) ? ntohl(w[i].imm_data) : 0,
			.op = op,
			.status = wc_status(w[i].status),
			.vendor_err = w[i].vendor_err,
		};
	}
	return k;
}

int dpl_event(dpl_qp *q) {
	if (q->nev > 0) {
		int ev = q->events[0];
		memmove(q->events, q->events + 1, (size_t)(q->nev - 1) * sizeof q->events[0]);
		q->nev--;
		return ev;
	}
	struct rdma_cm_event *ev;
	while (q->ch && fn.rdma_get_cm_event(q->ch, &ev) == 0) {
		enum rdma_cm_event_type t = ev->event;
		fn.rdma_ack_cm_event(ev);
		if (t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			q->errstate = 1;
			if (!q->gone) {
				__atomic_store_n(&q->gone, 1, __ATOMIC_RELEASE);
				return DPL_EV_DISCONNECTED;
			}
		}
	}
	return DPL_EV_NONE;
}

int dpl_arm(dpl_qp *q) { return q->cq ? ibv_req_notify_cq(q->cq, 0) : 0; }

int dpl_wait(dpl_qp *q, int timeout_ms) {
	struct pollfd pf[3] = {{.fd = q->wakefd, .events = POLLIN}, {.fd = q->cc ? q->cc->fd : -1, .events = POLLIN},
			       {.fd = q->ch ? q->ch->fd : -1, .events = POLLIN}};
	int r = poll(pf, 3, timeout_ms);
	if (r > 0 && (pf[0].revents & POLLIN)) {
		uint64_t drain;
		if (read(q->wakefd, &drain, sizeof drain) < 0) {
			// Taken by another waiter.
		}
	}
	if (r > 0 && q->cc && (pf[1].revents & POLLIN)) {
		// The notification fired and disarmed the CQ: take it off the
		// channel (or poll(2) would keep returning) and acknowledge in
		// batches; the caller re-arms and polls before it waits again.
		struct ibv_cq *ecq;
		void *ectx;
		while (fn.ibv_get_cq_event(q->cc, &ecq, &ectx) == 0)
			q->cq_events++;
		if (q->cq_events >= 64) {
			fn.ibv_ack_cq_events(q->cq, q->cq_events);
			q->cq_events = 0;
		}
	}
	return r;
}

void dpl_wake(dpl_qp *q) {
	uint64_t one = 1;
	if (write(q->wakefd, &one, sizeof one) < 0) {
		// Full counter: already awake.
	}
}

int dpl_disconnect(dpl_qp *q) {
	if (q->established && !q->gone) {
		fn.rdma_disconnect(q->id);
		q->errstate = 1;
		__atomic_store_n(&q->gone, 1, __ATOMIC_RELEASE);
		push_event(q, DPL_EV_DISCONNECTED);
	}
	return 0;
}

void dpl_destroy(dpl_qp *q) {
	if (!q)
		return;
	dpl_disconnect(q);
	if (q->has_qp)
		fn.rdma_destroy_qp(q->id);
	while (q->mrs) {
		struct mr_node *m = q->mrs;
		q->mrs = m->next;
		free_mr(m);
	}
	if (q->cq) {
		struct ibv_cq *ecq;
		void *ectx;
		while (q->cc && fn.ibv_get_cq_event(q->cc, &ecq, &ectx) == 0)
			q->cq_events++;
		if (q->cq_events)
			fn.ibv_ack_cq_events(q->cq, q->cq_events);
		fn.ibv_destroy_cq(q->cq);
	}
	if (q->cc)
		fn.ibv_destroy_comp_channel(q->cc);
	if (q->pd)
		fn.ibv_dealloc_pd(q->pd);
	if (q->id) {
		// Events still queued on the id must be acked before it goes.
		struct rdma_cm_event *ev;
		while (q->ch && fn.rdma_get_cm_event(q->ch, &ev) == 0)
			fn.rdma_ack_cm_event(ev);
		fn.rdma_destroy_id(q->id);
	}
	if (q->ch)
		fn.rdma_destroy_event_channel(q->ch);
	close(q->wakefd);
	free(q);
}
