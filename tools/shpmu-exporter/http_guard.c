// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The connection guard (see http_guard.h): a list of the connections,
 * oldest stage first, kept by libmicrohttpd's notify callbacks; a reaper
 * thread that cuts those past their deadline; the limits per address and
 * in all, enforced as each connection starts.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "exporter.h"
#include "http_guard.h"

/* Fds the scrape may open besides those it holds at start: a walk's
 * directories, libmicrohttpd's own, cgroups made later. */
#define FD_HEADROOM	64
#define MIN_CONNECTIONS 4

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

void guard_stage(struct server *s, struct MHD_Connection *mc, enum stage st)
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

void guard_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
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
void guard_completed(void *cls, struct MHD_Connection *mc, void **req,
		     enum MHD_RequestTerminationCode toe)
{
	(void)req;
	(void)toe;
	guard_stage(cls, mc, WAITING);
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

int guard_start(struct server *s)
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
void guard_stop(struct server *s)
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
void guard_log(void *cls, const char *fmt, va_list ap)
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
unsigned int guard_connection_limit(const struct options *o, long *held,
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
