// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTTP side, on libmicrohttpd: /metrics (OpenMetrics when the Accept
 * header asks for it), / (a page linking to it). One internal epoll
 * thread serves; a guard beside it keeps clients that hold connections
 * (slowloris) from taking the slots of others:
 *
 * - a request must arrive whole within --web.request-timeout however it
 *   trickles in (libmicrohttpd's own timeout counts only idle time), and
 *   its answer must go out within as long again;
 * - an address holds at most --web.max-connections-per-address: its
 *   next connection closes its oldest one still waiting for a request,
 *   not the new one, so that a scraper sharing an address (127.0.0.1 by
 *   default) with a flood still gets in;
 * - past the connection limit, what RLIMIT_NOFILE leaves once the
 *   scrape has its fds, the oldest connection still waiting is closed.
 *
 * The guard closes a connection with shutdown(2): libmicrohttpd sees the
 * stream end and closes it in its own thread.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "exporter.h"

#define TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define OM_TYPE	  "application/openmetrics-text; version=1.0.0; charset=utf-8"

static const char index_page[] =
	"<html><head><title>shpmu-exporter</title></head><body>\n"
	"<h1>shpmu-exporter</h1>\n"
	"<p>Per-CPU and per-cgroup performance counters through "
	"libshpmu.</p>\n"
	"<p><a href=\"/metrics\">Metrics</a></p>\n</body></html>\n";

/* Fds the scrape may open besides those it holds at start: a walk's
 * directories, libmicrohttpd's own, cgroups made later. */
#define FD_HEADROOM	64
#define MIN_CONNECTIONS 4
/* Slots kept free below the limit: libmicrohttpd accepts up to 10
 * connections a turn before it closes those the guard cut. */
#define SPARE 16

/* Where a connection is in its current request. */
enum stage {
	WAITING,   /* for its request, whole: the deadline runs */
	ANSWERING, /* in handle(): a scrape has no deadline here */
	SENDING,   /* its answer queued: the deadline runs again */
};

/* One a connection, from NOTIFY_STARTED to NOTIFY_CLOSED. */
struct conn {
	struct conn *prev, *next;
	int64_t since; /* ns, CLOCK_MONOTONIC: when its stage began */
	enum stage stage;
	int fd;
	bool cut; /* shut down: libmicrohttpd is closing it */
	int family;
	unsigned char addr[16]; /* take_address() */
};

struct server {
	struct exporter *x;
	pthread_mutex_t lock; /* the list, live and stop */
	pthread_cond_t wake;  /* the reaper: stop */
	pthread_t reaper;
	bool stop;
	/* Oldest stage first: a stage that begins goes to the tail, so the
	 * reaper finds what is past its deadline at the head. */
	struct conn *head, *tail;
	unsigned int live; /* on the list and not cut */
	unsigned int soft_limit;
	int64_t timeout_ns;
	int64_t logged; /* mhd_log(): when it last wrote */
	unsigned long unlogged;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void unlink_conn(struct server *s, struct conn *c)
{
	*(c->prev ? &c->prev->next : &s->head) = c->next;
	*(c->next ? &c->next->prev : &s->tail) = c->prev;
	c->prev = c->next = NULL;
}

/* Under s->lock. */
static void set_stage(struct server *s, struct conn *c, enum stage st)
{
	if (s->head == c || c->prev)
		unlink_conn(s, c);
	c->stage = st;
	c->since = now_ns();
	c->prev = s->tail;
	*(s->tail ? &s->tail->next : &s->head) = c;
	s->tail = c;
}

static void stage(struct server *s, struct MHD_Connection *mc, enum stage st)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *c = i ? i->socket_context : NULL;

	/* Untracked (no memory at its start): cut already. */
	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	set_stage(s, c, st);
	pthread_mutex_unlock(&s->lock);
}

static const char *const cut_why[CUT_REASONS] = {
	[CUT_DEADLINE] = "not through within --web.request-timeout",
	[CUT_ADDRESS] = "past --web.max-connections-per-address",
	[CUT_LIMIT] = "past the connection limit",
};

/* Under s->lock, which NOTIFY_CLOSED takes before libmicrohttpd closes
 * the fd: c->fd is still this connection's. */
static void cut(struct server *s, struct conn *c, enum cut_reason why)
{
	char addr[INET6_ADDRSTRLEN];

	shutdown(c->fd, SHUT_RDWR);
	c->cut = true;
	s->live--;
	__atomic_fetch_add(&s->x->cuts[why], 1, __ATOMIC_RELAXED);
	if (s->x->opts->verbose &&
	    inet_ntop(c->family, c->addr, addr, sizeof(addr)))
		say("closed a connection from %s: %s", addr, cut_why[why]);
}

static bool same_address(const struct conn *a, const struct conn *b)
{
	return a->family == b->family &&
	       !memcmp(a->addr, b->addr,
		       a->family == AF_INET6 ? 16 : sizeof(struct in_addr));
}

/* The oldest connection still waiting for its request, from like's
 * address if like is given. */
static struct conn *oldest_waiting(struct server *s, const struct conn *like)
{
	for (struct conn *c = s->head; c; c = c->next)
		if (c->stage == WAITING && !c->cut &&
		    (!like || same_address(c, like)))
			return c;
	return NULL;
}

/* Under s->lock: c is new, on the list. */
static void enforce_limits(struct server *s, struct conn *c)
{
	unsigned int per_address = s->x->opts->max_per_address, n = 0;
	struct conn *victim;

	if (per_address) {
		for (struct conn *o = s->head; o; o = o->next)
			n += !o->cut && same_address(o, c);
		/* Its oldest waiting: c itself when the others are all
		 * being answered. */
		if (n > per_address)
			cut(s, oldest_waiting(s, c), CUT_ADDRESS);
	}
	if (s->live > s->soft_limit && (victim = oldest_waiting(s, NULL)))
		cut(s, victim, CUT_LIMIT);
}

/* The client's address, not its port: what the limit per address
 * compares. */
static void take_address(struct conn *c, const struct sockaddr *sa)
{
	c->family = sa->sa_family;
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		memcpy(c->addr, &in6->sin6_addr, sizeof(in6->sin6_addr));
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		memcpy(c->addr, &in->sin_addr, sizeof(in->sin_addr));
	}
}

static void started(struct server *s, struct MHD_Connection *mc,
		    void **socket_context)
{
	const union MHD_ConnectionInfo *fd, *peer;
	struct conn *c = calloc(1, sizeof(*c));

	fd = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	peer = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!c || !fd || !peer) {
		/* Unwatched, it could stay forever. */
		if (fd)
			shutdown(fd->connect_fd, SHUT_RDWR);
		free(c);
		return;
	}
	c->fd = fd->connect_fd;
	take_address(c, peer->client_addr);
	pthread_mutex_lock(&s->lock);
	set_stage(s, c, WAITING);
	s->live++;
	enforce_limits(s, c);
	pthread_mutex_unlock(&s->lock);
	*socket_context = c;
}

static void notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		   enum MHD_ConnectionNotificationCode e)
{
	struct server *s = cls;
	struct conn *c = *socket_context;

	if (e == MHD_CONNECTION_NOTIFY_STARTED) {
		started(s, mc, socket_context);
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	unlink_conn(s, c);
	if (!c->cut)
		s->live--;
	pthread_mutex_unlock(&s->lock);
	*socket_context = NULL;
	free(c);
}

/* A request is over (answered, or its connection closing): the next
 * one has its deadline from now. */
static void completed(void *cls, struct MHD_Connection *mc, void **req,
		      enum MHD_RequestTerminationCode toe)
{
	(void)req;
	(void)toe;
	stage(cls, mc, WAITING);
}

/* Cuts what is past its deadline, sleeping until the next one: a stage
 * begun later ends later, none can come before the head's. */
static void *reap(void *arg)
{
	struct server *s = arg;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		int64_t now = now_ns(), next = now + s->timeout_ns;
		struct timespec ts;

		for (struct conn *c = s->head; c; c = c->next) {
			if (c->cut || c->stage == ANSWERING)
				continue;
			if (c->since + s->timeout_ns > now) {
				next = c->since + s->timeout_ns;
				break;
			}
			cut(s, c, CUT_DEADLINE);
		}
		ts.tv_sec = next / 1000000000;
		ts.tv_nsec = next % 1000000000;
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static int guard_start(struct server *s)
{
	pthread_condattr_t attr;
	int err;

	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &attr);
	pthread_condattr_destroy(&attr);
	err = pthread_create(&s->reaper, NULL, reap, s);
	if (err) {
		say("cannot start the connection guard: %s", strerror(err));
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		return -err;
	}
	return 0;
}

/* After MHD_stop_daemon(): every connection is gone. */
static void guard_stop(struct server *s)
{
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->reaper, NULL);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
}

/* libmicrohttpd's messages: a line for each connection a client breaks
 * off, so a flood of them is rate-limited to one a second (all of them
 * with --verbose). Its own thread calls, and MHD_start_daemon(). */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct server *s = cls;
	int64_t now = now_ns();
	char msg[256];
	size_t n;

	if (!s->x->opts->verbose && now - s->logged < 1000000000) {
		s->unlogged++;
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	if (s->unlogged)
		say("libmicrohttpd: %s (and %lu more since the last)", msg,
		    s->unlogged);
	else
		say("libmicrohttpd: %s", msg);
	s->logged = now;
	s->unlogged = 0;
}

/* Fds open now, or -1 (no /proc). */
static long fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	long n = -1; /* d's own */

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Connections get what RLIMIT_NOFILE leaves the scrape: the fds it holds
 * now (perf events, BPF objects, the cgroups found at start), a quarter
 * more and FD_HEADROOM. Past that, accept() or perf_event_open() would
 * fail with EMFILE. */
static unsigned int connection_limit(const struct options *o, long *held,
				     unsigned long long *nofile)
{
	unsigned long long want = o->max_connections, reserve, room;
	struct rlimit rl;
	long n = fds_open();

	*held = n;
	*nofile = 0;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return o->max_connections;
	*nofile = rl.rlim_cur;
	if (n < 0)
		n = FD_HEADROOM; /* a guess */
	reserve = (unsigned long long)(n + n / 4 + FD_HEADROOM);
	room = rl.rlim_cur > reserve ? rl.rlim_cur - reserve : 0;
	if (room < MIN_CONNECTIONS) {
		say("RLIMIT_NOFILE %llu leaves no room for connections beside "
		    "%ld fds: %d allowed, scrapes may fail with EMFILE",
		    *nofile, n, MIN_CONNECTIONS);
		room = MIN_CONNECTIONS;
	}
	return (unsigned int)(room < want ? room : want);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code,
			     const char *type, void *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int code,
			    const char *msg)
{
	return reply(conn, code, "text/plain; charset=utf-8", (void *)msg,
		     strlen(msg), MHD_RESPMEM_PERSISTENT);
}

static bool wants_openmetrics(struct MHD_Connection *conn)
{
	const char *accept = MHD_lookup_connection_value(
		conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

	return accept && strstr(accept, "application/openmetrics-text");
}

/* Where a request goes, judged on its raw target: handle() gets the
 * path decoded, where %00 ends the string early ("/metrics%00x" would
 * compare equal to "/metrics"). The query is no part of it. */
static const char index_route, metrics_route;

static void *route(void *cls, const char *uri, struct MHD_Connection *conn)
{
	size_t n = strcspn(uri, "?");

	(void)cls;
	(void)conn;
	if (n == 1 && uri[0] == '/')
		return (void *)&index_route;
	if (n == strlen("/metrics") && !strncmp(uri, "/metrics", n))
		return (void *)&metrics_route;
	return NULL;
}

static ssize_t no_body(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)cls;
	(void)pos;
	(void)buf;
	(void)max;
	return MHD_CONTENT_READER_END_OF_STREAM;
}

/* HEAD: the page's headers without a scrape. Its length is unknown
 * until one, so none is sent rather than a Content-Length of 0; and not
 * chunked, for which libmicrohttpd 0.9.75 sends the last chunk, a body,
 * even to HEAD: the end of the connection ends the answer. */
static enum MHD_Result headers_only(struct MHD_Connection *conn,
				    const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, 1024, no_body, NULL, NULL);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_set_response_options(r, MHD_RF_HTTP_VERSION_1_0_ONLY, MHD_RO_END);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer(struct exporter *x, struct MHD_Connection *conn,
			      const char *method, const void *where,
			      size_t upload_size)
{
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
	enum format fmt;
	size_t len;
	char *page;
	int err;

	if (!head && strcmp(method, MHD_HTTP_METHOD_GET))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "GET /metrics\n");
	/* A GET has no body: answer once its headers are in. */
	if (upload_size)
		return MHD_NO;
	if (where == &index_route)
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
			     (void *)index_page, sizeof(index_page) - 1,
			     MHD_RESPMEM_PERSISTENT);
	if (where != &metrics_route)
		return text(conn, MHD_HTTP_NOT_FOUND, "see /metrics\n");
	fmt = wants_openmetrics(conn) ? OPENMETRICS_1_0 : TEXT_0_0_4;
	if (head)
		return headers_only(conn, fmt == OPENMETRICS_1_0 ? OM_TYPE
								 : TEXT_TYPE);
	err = scrape(x, fmt, &page, &len);
	if (err) {
		say("scrape: %s", strerror(-err));
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "scrape failed: see the exporter's log\n");
	}
	return reply(conn, MHD_HTTP_OK,
		     fmt == OPENMETRICS_1_0 ? OM_TYPE : TEXT_TYPE, page, len,
		     MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_size, void **where)
{
	struct server *s = cls;
	enum MHD_Result ret;

	(void)url;
	(void)version;
	(void)upload_data;
	stage(s, conn, ANSWERING);
	ret = answer(s->x, conn, method, *where, *upload_size);
	stage(s, conn, SENDING);
	return ret;
}

/* "host:port", "[v6]:port" or ":port" (every address). */
static struct addrinfo *resolve(const char *listen)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	char host[256];
	const char *colon = strrchr(listen, ':');
	size_t n;
	int err;

	if (!colon || !colon[1])
		return NULL;
	n = (size_t)(colon - listen);
	if (n >= 2 && listen[0] == '[' && listen[n - 1] == ']') {
		listen++;
		n -= 2;
	}
	if (n >= sizeof(host))
		return NULL;
	memcpy(host, listen, n);
	host[n] = '\0';
	err = getaddrinfo(n ? host : NULL, colon + 1, &hints, &res);
	if (err) {
		say("--web.listen-address %s: %s", listen, gai_strerror(err));
		return NULL;
	}
	return res;
}

int serve(struct exporter *x)
{
	const struct options *o = x->opts;
	struct addrinfo *addr = resolve(o->listen);
	struct server s = {
		.x = x, .timeout_ns = (int64_t)o->request_timeout * 1000000000};
	const union MHD_DaemonInfo *info;
	unsigned long long nofile;
	unsigned int limit;
	struct MHD_Daemon *d;
	sigset_t stop;
	long held;
	int sig;

	if (!addr) {
		say("cannot listen on %s: want HOST:PORT", o->listen);
		return -1;
	}
	/* The cgroups there are now opened before the fds are counted. */
	pthread_mutex_lock(&x->lock);
	cgroups_refresh(x);
	pthread_mutex_unlock(&x->lock);
	limit = connection_limit(o, &held, &nofile);
	s.soft_limit = limit - (limit / 4 < SPARE ? limit / 4 : SPARE);
	/* Every thread leaves SIGINT and SIGTERM to sigwait below. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (guard_start(&s)) {
		freeaddrinfo(addr);
		return -1;
	}
	d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			MHD_USE_ERROR_LOG |
			(addr->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, handle, &s,
		/* first, or libmicrohttpd writes some to stderr itself */
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, &s, MHD_OPTION_SOCK_ADDR,
		addr->ai_addr,
		/* idle time only: the guard has the deadline */
		MHD_OPTION_CONNECTION_TIMEOUT, o->request_timeout,
		/* the guard cuts below it, in order; at it, new connections
		 * wait in the listen backlog */
		MHD_OPTION_CONNECTION_LIMIT, limit,
		/* a backstop for bursts the guard has not cut yet: past it
		 * libmicrohttpd refuses the new connection */
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		o->max_per_address ? 2 * o->max_per_address + SPARE : 0,
		MHD_OPTION_NOTIFY_CONNECTION, notify, &s,
		MHD_OPTION_NOTIFY_COMPLETED, completed, &s,
		MHD_OPTION_URI_LOG_CALLBACK, route, NULL, MHD_OPTION_END);
	freeaddrinfo(addr);
	if (!d) {
		say("cannot listen on %s: %s", o->listen, strerror(errno));
		guard_stop(&s);
		return -1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	say("listening on %s (port %u): /metrics", o->listen,
	    info ? info->port : 0);
	say("connections: at most %u (RLIMIT_NOFILE %llu, %ld fds held), %u "
	    "from one address, requests whole within %u s",
	    limit, nofile, held, o->max_per_address, o->request_timeout);
	while (sigwait(&stop, &sig))
		;
	say("signal %d: stopping", sig);
	MHD_stop_daemon(d);
	guard_stop(&s);
	return 0;
}
