// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTTP side, on libmicrohttpd: /metrics (OpenMetrics when the Accept
 * header asks for it), / (a page linking to it). One internal epoll
 * thread serves; the guard beside it (http_guard.h) keeps clients that
 * hold connections (slowloris) from taking the slots of others.
 */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "exporter.h"
#include "http_guard.h"

#define TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define OM_TYPE	  "application/openmetrics-text; version=1.0.0; charset=utf-8"

static const char index_page[] =
	"<html><head><title>shpmu-exporter</title></head><body>\n"
	"<h1>shpmu-exporter</h1>\n"
	"<p>Per-CPU and per-cgroup performance counters through "
	"libshpmu.</p>\n"
	"<p><a href=\"/metrics\">Metrics</a></p>\n</body></html>\n";

/* Queues r (NULL: no memory) with its type. */
static enum MHD_Result queue(struct MHD_Connection *conn, unsigned int code,
			     const char *type, struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* A body that lives as long as the program. */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code,
			     const char *type, const char *body, size_t len)
{
	return queue(conn, code, type,
		     MHD_create_response_from_buffer(len, (void *)body,
						     MHD_RESPMEM_PERSISTENT));
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int code,
			    const char *msg)
{
	return reply(conn, code, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* libmicrohttpd is done with a page: its buffer serves the next. */
static void sent(void *page)
{
	page_give_back(page);
}

/* The page, sent from its own buffer (no copy). */
static enum MHD_Result reply_page(struct MHD_Connection *conn, const char *type,
				  struct page *p)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer_with_free_callback_cls(
			p->len, p->buf, sent, p);

	if (!r)
		page_give_back(p);
	return queue(conn, MHD_HTTP_OK, type, r);
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
	struct page *page;
	enum format fmt;
	int err;

	if (!head && strcmp(method, MHD_HTTP_METHOD_GET))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "GET /metrics\n");
	/* A GET has no body: answer once its headers are in. */
	if (upload_size)
		return MHD_NO;
	if (where == &index_route)
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
			     index_page, sizeof(index_page) - 1);
	if (where != &metrics_route)
		return text(conn, MHD_HTTP_NOT_FOUND, "see /metrics\n");
	fmt = wants_openmetrics(conn) ? OPENMETRICS_1_0 : TEXT_0_0_4;
	if (head)
		return headers_only(conn, fmt == OPENMETRICS_1_0 ? OM_TYPE
								 : TEXT_TYPE);
	err = scrape(x, fmt, &page);
	if (err) {
		say("scrape: %s", strerror(-err));
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "scrape failed: see the exporter's log\n");
	}
	return reply_page(conn, fmt == OPENMETRICS_1_0 ? OM_TYPE : TEXT_TYPE,
			  page);
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
	guard_stage(s, conn, ANSWERING);
	ret = answer(s->x, conn, method, *where, *upload_size);
	guard_stage(s, conn, SENDING);
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
	limit = guard_connection_limit(o, &held, &nofile);
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
		MHD_OPTION_EXTERNAL_LOGGER, guard_log, &s, MHD_OPTION_SOCK_ADDR,
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
		MHD_OPTION_NOTIFY_CONNECTION, guard_notify, &s,
		MHD_OPTION_NOTIFY_COMPLETED, guard_completed, &s,
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
