/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What runs in a cgroup, told from names alone: the cgroup paths that the
 * kubelet (systemd and cgroupfs drivers), containerd, CRI-O, Docker,
 * Podman and systemd make, and the names of the kubelet's log
 * directories and links. Arithmetic on strings, no I/O: the exporter does
 * the reading, tests/unit/test_workload.c holds these to tables of real
 * and hostile names.
 *
 * Every name is validated whole. A path that does not match a layout to
 * its last component, an id that is not exactly 64 lowercase hex digits,
 * a pod uid that is neither a UUID nor the kubelet's 32-digit static pod
 * hash: WORKLOAD_OTHER, with no label at all, never part of one.
 */
#ifndef SHPMU_EXPORTER_WORKLOAD_H
#define SHPMU_EXPORTER_WORKLOAD_H

#include <stdbool.h>

enum workload_kind {
	WORKLOAD_OTHER,	    /* none of the layouts: no labels */
	WORKLOAD_POD,	    /* a pod's own cgroup */
	WORKLOAD_CONTAINER, /* a container's (a pod's sandbox too) */
	WORKLOAD_CONMON,    /* CRI-O's or Podman's monitor of one */
	WORKLOAD_UNIT,	    /* a systemd service's or scope's */
};

enum workload_qos { QOS_NONE, QOS_GUARANTEED, QOS_BURSTABLE, QOS_BESTEFFORT };

enum workload_runtime {
	RUNTIME_NONE, /* not told by the path (the kubelet's cgroupfs ids) */
	RUNTIME_CONTAINERD,
	RUNTIME_CRIO,
	RUNTIME_DOCKER,
	RUNTIME_PODMAN,
};

/* Longer paths are not looked at (the kernel's PATH_MAX). */
#define WORKLOAD_PATH_MAX 4095
#define POD_UID_LEN	  36 /* a UUID; a static pod's is 32 */
#define CONTAINER_ID_LEN  64
#define UNIT_NAME_MAX	  255 /* systemd's, less its NUL */

struct workload {
	enum workload_kind kind;
	enum workload_qos qos;	       /* a pod's, and of what it holds */
	enum workload_runtime runtime; /* containers and monitors */
	char pod_uid[POD_UID_LEN + 1]; /* as the API writes it, or "" */
	char container_id[CONTAINER_ID_LEN + 1]; /* or "": a monitor's too */
	char unit[UNIT_NAME_MAX + 1];		 /* or "" */
};

/* What path says runs there. path is relative to the root of the walk
 * ("/kubepods.slice/..."; the leading '/' may be left out): the layouts
 * are recognized from there down, nowhere else. Never fails: what it does
 * not recognize is WORKLOAD_OTHER with every field empty. */
void workload_parse(const char *path, struct workload *w);

/* Label values: "guaranteed", "burstable", "besteffort"; "containerd",
 * "cri-o", "docker", "podman"; NULL for QOS_NONE and RUNTIME_NONE. */
const char *workload_qos_name(enum workload_qos q);
const char *workload_runtime_name(enum workload_runtime r);

#define K8S_NAMESPACE_MAX 63  /* a DNS-1123 label */
#define K8S_POD_MAX	  253 /* a DNS-1123 subdomain */
#define K8S_CONTAINER_MAX 63  /* a DNS-1123 label */

/* A directory of the kubelet's pod logs: <namespace>_<pod>_<uid>. */
struct pod_dir {
	char namespace[K8S_NAMESPACE_MAX + 1];
	char pod[K8S_POD_MAX + 1];
	char uid[POD_UID_LEN + 1];
};

/* The kubelet's link to a container's log:
 * <pod>_<namespace>_<container>-<container id>.log. */
struct log_link {
	char pod[K8S_POD_MAX + 1];
	char namespace[K8S_NAMESPACE_MAX + 1];
	char container[K8S_CONTAINER_MAX + 1];
	char id[CONTAINER_ID_LEN + 1];
};

/* Whether name is such a directory's (or link's) name, every part valid;
 * *out filled only when it is. */
bool workload_pod_dir(const char *name, struct pod_dir *out);
bool workload_log_link(const char *name, struct log_link *out);

#endif
