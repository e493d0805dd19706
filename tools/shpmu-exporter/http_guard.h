/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The guard beside libmicrohttpd's thread: it keeps clients that hold
 * connections (slowloris) from taking the slots of others:
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
#ifndef SHPMU_EXPORTER_HTTP_GUARD_H
#define SHPMU_EXPORTER_HTTP_GUARD_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <microhttpd.h>

struct exporter;
struct options;
struct conn; /* one a tracked connection: http_guard.c's own */

/* Slots kept free below the limit: libmicrohttpd accepts up to 10
 * connections a turn before it closes those the guard cut. */
#define SPARE 16

/* Where a connection is in its current request. */
enum stage {
	WAITING,   /* for its request, whole: the deadline runs */
	ANSWERING, /* in handle(): a scrape has no deadline here */
	SENDING,   /* its answer queued: the deadline runs again */
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
	int64_t logged; /* guard_log(): when it last wrote */
	unsigned long unlogged;
};

/* The connection limit: o->max_connections, or less where RLIMIT_NOFILE
 * leaves the connections less beside the scrape's fds. *held: the fds
 * open now (-1: no /proc); *nofile: the soft RLIMIT_NOFILE (0: unknown).
 * Called once the scrape holds its fds. */
unsigned int guard_connection_limit(const struct options *o, long *held,
				    unsigned long long *nofile);

/* Starts the reaper: 0 or -errno (logged). */
int guard_start(struct server *s);
/* After MHD_stop_daemon(): every connection is gone. */
void guard_stop(struct server *s);

/* mc's request has moved to st: its deadline runs from now. */
void guard_stage(struct server *s, struct MHD_Connection *mc, enum stage st);

/* MHD_OPTION_NOTIFY_CONNECTION, cls s: tracks each connection. */
void guard_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		  enum MHD_ConnectionNotificationCode e);
/* MHD_OPTION_NOTIFY_COMPLETED, cls s: the next request is WAITING. */
void guard_completed(void *cls, struct MHD_Connection *mc, void **req,
		     enum MHD_RequestTerminationCode toe);
/* MHD_OPTION_EXTERNAL_LOGGER, cls s: libmicrohttpd's messages,
 * rate-limited. */
void guard_log(void *cls, const char *fmt, va_list ap);

#endif
