// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTTP side, on libmicrohttpd: /metrics (OpenMetrics when the Accept
 * header asks for it), / (a page linking to it). One internal epoll
 * thread; slow or broken clients are timed out by the library and cost
 * others nothing but their connection slots.
 */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

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

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_size, void **state)
{
	struct exporter *x = cls;
	enum format fmt;
	size_t len;
	char *page;
	int err;

	(void)version;
	(void)upload_data;
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "GET /metrics\n");
	/* A GET has no body: answer once its headers are in. */
	if (*upload_size)
		return MHD_NO;
	(void)state;
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
			     (void *)index_page, sizeof(index_page) - 1,
			     MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/metrics"))
		return text(conn, MHD_HTTP_NOT_FOUND, "see /metrics\n");
	fmt = wants_openmetrics(conn) ? OPENMETRICS_1_0 : TEXT_0_0_4;
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
	struct addrinfo *addr = resolve(x->opts->listen);
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	sigset_t stop;
	int sig;

	if (!addr) {
		say("cannot listen on %s: want HOST:PORT", x->opts->listen);
		return -1;
	}
	/* Every thread leaves SIGINT and SIGTERM to sigwait below. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			MHD_USE_ERROR_LOG |
			(addr->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, handle, x, MHD_OPTION_SOCK_ADDR, addr->ai_addr,
		/* a request that never ends is dropped after 10 s */
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4000,
		MHD_OPTION_END);
	freeaddrinfo(addr);
	if (!d) {
		say("cannot listen on %s: %s", x->opts->listen,
		    strerror(errno));
		return -1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	say("listening on %s (port %u): /metrics", x->opts->listen,
	    info ? info->port : 0);
	while (sigwait(&stop, &sig))
		;
	say("signal %d: stopping", sig);
	MHD_stop_daemon(d);
	return 0;
}
