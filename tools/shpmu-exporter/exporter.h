/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * shpmu-exporter: per-CPU and per-cgroup counters of libshpmu served to
 * Prometheus over HTTP (libmicrohttpd).
 */
#ifndef SHPMU_EXPORTER_H
#define SHPMU_EXPORTER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <shpmu/shpmu.h>

#include "kubelogs.h"
#include "page.h"
#include "workload.h"

#define MAX_EVENTS   32
#define MAX_PATTERNS 32

/* What --cgroup.kind asks for; naming.c tells each cgroup's. */
enum {
	KIND_POD = 1 << 0,	 /* a pod's own cgroup */
	KIND_CONTAINER = 1 << 1, /* a container's */
	KIND_SANDBOX = 1 << 2,	 /* a pod's container without a log: pause */
	KIND_CONMON = 1 << 3,	 /* CRI-O's or Podman's monitor */
	KIND_UNIT = 1 << 4,	 /* a systemd service's or scope's */
};

/* How deep a walk with --cgroup.kind goes without --cgroup.depth: the
 * deepest layout (a rootless Podman pod's container) and one more for a
 * kubelet's --cgroup-root. */
#define KIND_DEPTH 6

struct options {
	const char *listen;		/* host:port */
	const char *events[MAX_EVENTS]; /* NULL-terminated; default set */
	char *events_list; /* -e's words, a copy: argv stays as given */
	bool default_events;
	bool per_cpu;
	bool per_cgroup;
	const char *cgroup_root; /* under the cgroup mount: "/" */
	int cgroup_depth;	 /* levels below cgroup_root, 0: it alone */
	bool depth_set;		 /* --cgroup.depth given */
	const char *patterns[MAX_PATTERNS]; /* fnmatch on the label path */
	size_t npatterns;
	unsigned int kinds; /* KIND_*: only these; 0: every cgroup */
	/* The kubelet's log directories; NULL: the default where it is a
	 * directory, "": none. */
	const char *logs_dir, *container_logs_dir;
	size_t max_cgroups;
	enum shpmu_scope scope;
	const char *domain, *bpffs_dir;
	bool verbose;
	unsigned int request_timeout; /* s: a request arrives whole in it */
	unsigned int max_connections; /* at most; RLIMIT_NOFILE may say less */
	unsigned int max_per_address; /* connections from one address; 0: any */
};

/* Parses argv; returns 0, 1 (--help printed) or -1 (error printed). */
int options_parse(struct options *o, int argc, char **argv);
/* Frees what options_parse() copied (after either result). */
void options_free(struct options *o);

struct event {
	char name[64];
	char *label; /* event="name", escaped: written as it is */
	char *tail;  /* ,event="name"} : a sample's after a target's labels */
	size_t tail_len;
	bool clock;	  /* ns: exported in seconds */
	bool multiplexes; /* may be: neither software nor a tracepoint */
};

/* Why the exporter closed a client's connection
 * (shpmu_http_connections_cut_total). */
enum cut_reason {
	CUT_DEADLINE, /* request (or answer) not through in time */
	CUT_ADDRESS,  /* past --web.max-connections-per-address */
	CUT_LIMIT,    /* past the connection limit */
	CUT_REASONS
};

/* A counted cgroup: its handles, one per event. */
struct cgroup {
	uint64_t ino; /* its directory's inode: how the walk knows it */
	uint64_t id;  /* the library's id, which the handles count */
	char *label;  /* its path under the cgroup mount, "/" first */
	char *labels; /* its label set (cgroup="label",...), escaped once */
	size_t labels_len;
	int *handles;
	bool seen;	     /* found by the latest walk */
	bool unnamed;	     /* names it may have are not known yet */
	uint64_t generation; /* the kubelogs generation it was named at */
};

/* A scrape's readings, every handle's; kept for the next. */
struct reading {
	int *hs;
	struct shpmu_count *counts;
	bool *ok;
	size_t n, cap;
};

void reading_fini(struct reading *r);

struct exporter {
	const struct options *opts;
	struct shpmu *pmu;
	pthread_mutex_t lock; /* one scrape at a time */
	struct event events[MAX_EVENTS];
	size_t nevents;
	int ncpus, *cpus;
	int *cpu_handles; /* [cpu index][event] */
	struct cgroup *cgroups;
	size_t ncgroups, cgroups_cap;
	char mount[4096];	/* the cgroup mount */
	uint64_t left_out;	/* cgroups not counted, latest walk */
	uint64_t target_errors; /* targets left out of a scrape */
	double last_scrape_s;
	bool probing; /* trying events: the library's errors are expected */
	char probe_said[1024]; /* the library's first error while probing */
	uint64_t scrapes;
	size_t too_long;	    /* of left_out, paths past PATH_MAX */
	uint64_t cuts[CUT_REASONS]; /* HTTP's thread adds, atomically */
	struct kubelogs logs;	    /* the kubelet's names */
	struct reading reading;	    /* the latest scrape's */
	struct pages pages;	    /* the buffer of the page sent last */
};

/* Opens the context and the per-CPU handles: 0 or -errno (logged). */
int exporter_init(struct exporter *x, const struct options *o);
void exporter_fini(struct exporter *x);

/* Brings the counted cgroups in step with the hierarchy: new ones opened,
 * removed ones closed. */
void cgroups_refresh(struct exporter *x);
void cgroups_close_all(struct exporter *x);

/* What a cgroup is: what its path says, with the kubelet's names. */
struct naming {
	struct workload w;
	struct kube_names names;
	unsigned int kind; /* KIND_*, 0 for none */
	bool unnamed;	   /* names it may have are not known */
};

/* What path says (relative to the root of the walk); no names yet. */
void naming_parse(struct naming *n, const char *path);
/* Whether a cgroup so named may be of kinds, before its names. */
bool naming_may_be(const struct naming *n, unsigned int kinds);
/* Its names from the kubelet's logs, and with them a container told
 * from a pod's sandbox. */
void naming_find(struct exporter *x, struct naming *n);
/* The label set of the cgroup labelled label, named n (malloc'd), or
 * NULL where there is no memory. */
char *naming_labels(const char *label, const struct naming *n);

enum format { TEXT_0_0_4, OPENMETRICS_1_0 };

/* One scrape: refresh, one shpmu_read_many, the page in *out (from
 * x->pages: page_give_back() it once sent). 0 or -errno. */
int scrape(struct exporter *x, enum format f, struct page **out);

/* name="value", value written as page_label_value() writes it, in a
 * string of its own (malloc'd); NULL where there is no memory. */
char *label_pair(const char *name, const char *value);

/* A counter family's header, name without shpmu_ and _total; unit
 * ("seconds") or NULL. */
void put_counter(struct page *p, enum format fmt, const char *name,
		 const char *unit, const char *help);

/* The per-CPU and per-cgroup families of r (series.c). */
void put_targets(struct page *p, struct exporter *x, enum format fmt,
		 const struct reading *r);

/* What the BPF backend could not attribute, per event and CPU, and the
 * switches it did not see (unattributed.c). */
void put_unattributed(struct page *p, struct exporter *x, enum format fmt);

/* The core PMUs' counter budget as gauges (shpmu_pmu_counters, ...);
 * nothing where there is no core PMU. */
void put_budget(struct page *p, struct exporter *x);

/* Serves x on o->listen until SIGINT or SIGTERM: 0, or -1 (logged). */
int serve(struct exporter *x);

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Room for explain()'s text. */
#define EXPLAIN_MAX 1024

/* What err, from a library call on handle h (-1: none), means, in the
 * library's words (shpmu_explain) so that an error reads the same in
 * every tool; strerror()'s where it has none. Gives buf. */
const char *explain(struct exporter *x, int h, int err, char *buf, size_t len);

/* Says a library log message, its option names (opts.bpffs_dir) for C
 * callers put as the exporter's flags. */
void say_library(const char *msg);

#endif
