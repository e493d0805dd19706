/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names without the API server: the namespace and pod of a pod uid, and
 * the container of a container id, from the names the kubelet gives its
 * log directories (--kubernetes.logs-dir, /var/log/pods:
 * <namespace>_<pod>_<uid>/) and links (--kubernetes.container-logs-dir,
 * /var/log/containers: <pod>_<namespace>_<container>-<id>.log).
 *
 * Everything in those directories is hostile input. They are opened
 * O_NOFOLLOW and only listed: nothing in them is opened, followed or
 * read. An entry is taken only where its type is the kubelet's (a
 * directory, a link) and its name parses whole (workload.h); at most
 * LOG_ENTRIES_MAX are kept and LOG_SCAN_MAX listed a read; the refused
 * ones are said once, when what is refused changes. A key (a pod uid, a
 * container id) that two entries give different names is kept without
 * names: which one holds is not guessed, and a container so linked still
 * has a link (anyone who can write there could otherwise hide one). A
 * directory that is missing or unreadable costs a line when that
 * changes, never a scrape, and its names are those of its last good
 * read.
 *
 * A directory is read again only when a lookup misses (a pod uid or
 * container id the names do not hold) and it changed since it was read
 * (its inode or mtime; a read within LOG_RACY_NS of its mtime is done
 * again, as a change in the same clock tick leaves the mtime as it was),
 * and at most once a scrape.
 */
#ifndef SHPMU_EXPORTER_KUBELOGS_H
#define SHPMU_EXPORTER_KUBELOGS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "workload.h"

#define LOG_ENTRIES_MAX 8192
/* Entries listed a read, kept or refused: refused ones do not take the
 * place of those kept. */
#define LOG_SCAN_MAX (8 * LOG_ENTRIES_MAX)
#define LOG_RACY_NS  2000000000LL

struct log_entry {
	char key[CONTAINER_ID_LEN + 1]; /* a pod uid, or a container id */
	/* Offsets in the table's text; 0 is "". */
	uint32_t namespace, pod, container;
	uint32_t name; /* the entry's own name, for messages */
	bool conflict; /* the key has entries that disagree: no names */
};

struct logdir {
	const char *path; /* NULL: none */
	const char *flag; /* its flag, for messages */
	bool pods; /* /var/log/pods's layout, not /var/log/containers's */
	/* What its last good read found, sorted by key. */
	struct log_entry *entries;
	size_t n;
	char *text;
	bool read; /* once at least */
	bool ok;   /* its last look (stat or read) went well */
	/* The directory when it was read. */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	bool racy; /* read within LOG_RACY_NS of its mtime */
	/* What was said, so that it is said once. */
	int said;	    /* -errno of its trouble; 0: none */
	uint64_t refused;   /* a print of the names refused */
	bool full;	    /* past LOG_ENTRIES_MAX or LOG_SCAN_MAX */
	uint64_t conflicts; /* a print of the keys in conflict */
};

struct kubelogs {
	struct logdir pods, containers;
	uint64_t tried;	     /* the scrape of the last look */
	uint64_t generation; /* changes with each table read */
};

/* Names a lookup found; NULL where not known. Valid until the next
 * kubelogs call. */
struct kube_names {
	const char *namespace, *pod, *container;
	bool pod_known; /* the uid is in the pods' directory */
	bool linked;	/* the id has a link, named or not */
};

/* pods_dir, containers_dir: NULL for none. */
void kubelogs_init(struct kubelogs *k, const char *pods_dir,
		   const char *containers_dir);
void kubelogs_fini(struct kubelogs *k);

/* The names of pod uid, and of container id in it ("" for neither),
 * looking at the directories again first where a name is missing and
 * this scrape has not. A link whose pod and namespace are not the pod's
 * is not taken. */
void kubelogs_find(struct kubelogs *k, uint64_t scrape, const char *uid,
		   const char *id, struct kube_names *out);

/* Reads again the directories that changed, once a scrape. */
void kubelogs_refresh(struct kubelogs *k, uint64_t scrape);

/* Whether a container's log link not being there means it has none: the
 * containers' directory is read, was readable when last looked at, and
 * was read whole (not cut at LOG_ENTRIES_MAX or LOG_SCAN_MAX). */
bool kubelogs_knows_containers(const struct kubelogs *k);

#endif
