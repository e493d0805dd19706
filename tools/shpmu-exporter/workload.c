// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The layouts, as their makers name them:
 *
 * - The kubelet (pkg/kubelet/cm) puts a pod in kubepods[/<qos>]/pod<uid>,
 *   qos "burstable" or "besteffort", none for a guaranteed pod. The
 *   cgroupfs driver uses that path as it is. The systemd driver makes each
 *   level a slice named after the whole path, levels joined by '-' and
 *   each '-' within a level (a uid's) written '_':
 *   kubepods.slice/kubepods-burstable.slice/
 *   kubepods-burstable-pod<uid, '_' for '-'>.slice. Its --cgroup-root
 *   adds slices above (kubelet.slice/kubelet-kubepods.slice/...). A
 *   static pod's uid is the 32 hex digits of an MD5 hash
 *   (pkg/kubelet/config), any other pod's a UUID.
 * - The runtimes name a container's cgroup within its pod's: containerd
 *   cri-containerd-<id>.scope (systemd) or <id> (cgroupfs); CRI-O
 *   crio-<id>.scope or crio-<id>, and its monitor crio-conmon-<id>.scope
 *   or crio-conmon-<id>; Docker through cri-dockerd docker-<id>.scope or
 *   <id>. A pod's sandbox (pause) container is named like the others.
 * - Outside Kubernetes: Docker docker-<id>.scope in a slice
 *   (system.slice) or docker/<id>; Podman libpod-<id>.scope in a slice
 *   (machine.slice, a pod's machine-libpod_pod_<pod id>.slice, a user
 *   manager's user.slice when rootless), its monitor
 *   libpod-conmon-<id>.scope, or libpod_parent/libpod-<id>.
 * - systemd: a service or scope in a chain of slices, each inside the one
 *   above it (system.slice/nginx.service,
 *   user.slice/user-1000.slice/session-3.scope), or in the slices of a
 *   user's manager (.../user@1000.service/app.slice/dbus.service).
 *
 * What lies below a container's cgroup (crun's "container" sub-cgroup, a
 * runtime nested in the container) is the container's own, and so are
 * its names: other. So is a slice that is not inside the one above it:
 * systemd makes none, and only root can make one by hand.
 */
#include <stddef.h>
#include <string.h>

#include "workload.h"

/* Deeper than any layout: a rootless Podman pod's container is 6 levels
 * down, 7 where the root of the walk is one above. */
#define MAX_PARTS 16
#define NAME_MAX_ 255 /* one path component, as the kernel bounds it */

struct span {
	const char *s;
	size_t n;
};

static const struct span none = {"", 0};

static bool is(struct span p, const char *lit)
{
	return p.n == strlen(lit) && !memcmp(p.s, lit, p.n);
}

static bool starts(struct span p, const char *lit)
{
	size_t n = strlen(lit);

	return p.n >= n && !memcmp(p.s, lit, n);
}

static bool ends(struct span p, const char *lit)
{
	size_t n = strlen(lit);

	return p.n >= n && !memcmp(p.s + p.n - n, lit, n);
}

/* p less head bytes at its start and tail at its end. */
static struct span cut(struct span p, size_t head, size_t tail)
{
	return (struct span){p.s + head, p.n - head - tail};
}

static bool is_hex(struct span p)
{
	for (size_t i = 0; i < p.n; i++)
		if (!((p.s[i] >= '0' && p.s[i] <= '9') ||
		      (p.s[i] >= 'a' && p.s[i] <= 'f')))
			return false;
	return p.n > 0;
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static void copy(char *dst, struct span p)
{
	memcpy(dst, p.s, p.n);
	dst[p.n] = '\0';
}

static bool container_id(struct span p, char *out)
{
	if (p.n != CONTAINER_ID_LEN || !is_hex(p))
		return false;
	copy(out, p);
	return true;
}

/* A pod uid written with sep for each '-' (the systemd driver's '_'),
 * given back as the API writes it: a UUID in lowercase, or a static
 * pod's 32 hex digits. */
static bool pod_uid(struct span p, char sep, char *out)
{
	static const size_t dashes[] = {8, 13, 18, 23};
	size_t d = 0;

	if (p.n == 32 && is_hex(p)) {
		copy(out, p);
		return true;
	}
	if (p.n != POD_UID_LEN)
		return false;
	for (size_t i = 0; i < p.n; i++) {
		if (d < 4 && i == dashes[d]) {
			if (p.s[i] != sep)
				return false;
			out[i] = '-';
			d++;
		} else if (is_hex((struct span){p.s + i, 1})) {
			out[i] = p.s[i];
		} else {
			return false;
		}
	}
	out[p.n] = '\0';
	return true;
}

/* systemd's unit name characters ('@' for templates, '\\' for its
 * escapes), and its bound. */
static bool unit_name(struct span p)
{
	if (!p.n || p.n > UNIT_NAME_MAX)
		return false;
	for (size_t i = 0; i < p.n; i++)
		if (!is_alnum(p.s[i]) && !strchr(":-_.\\@", p.s[i]))
			return false;
	return true;
}

/* Whether p is a slice inside the one whose name less ".slice" is parent
 * (systemd's rule: a-b.slice lies in a.slice), or a top-level one where
 * parent is empty; its name less ".slice" in *stem. */
static bool slice_in(struct span p, struct span parent, struct span *stem)
{
	struct span s;

	if (!ends(p, ".slice") || p.n == strlen(".slice") || !unit_name(p))
		return false;
	s = cut(p, 0, strlen(".slice"));
	if (parent.n ? s.n <= parent.n + 1 || memcmp(s.s, parent.s, parent.n) ||
			       s.s[parent.n] != '-'
		     : memchr(s.s, '-', s.n) != NULL)
		return false;
	*stem = s;
	return true;
}

/* The level a slice's stem adds to its parent's: "burstable" of
 * "kubepods-burstable" in "kubepods". */
static struct span level(struct span stem, struct span parent)
{
	return parent.n ? cut(stem, parent.n + 1, 0) : stem;
}

/* user.slice/user-<uid>.slice/user@<uid>.service, the same uid. */
static bool user_manager(const struct span *parts)
{
	struct span slice = parts[1], manager = parts[2], uid;

	if (!is(parts[0], "user.slice") || !starts(slice, "user-") ||
	    !ends(slice, ".slice") || !starts(manager, "user@") ||
	    !ends(manager, ".service"))
		return false;
	uid = cut(slice, strlen("user-"), strlen(".slice"));
	if (!uid.n || uid.n > 10 ||
	    uid.n != manager.n - strlen("user@") - strlen(".service") ||
	    memcmp(uid.s, manager.s + strlen("user@"), uid.n))
		return false;
	for (size_t i = 0; i < uid.n; i++)
		if (uid.s[i] < '0' || uid.s[i] > '9')
			return false;
	return true;
}

/* Whether parts[0..n) are where systemd puts units: slices, each inside
 * the one above, or a user's manager in its own and then slices of its
 * own, each inside the one above. */
static bool unit_parent(const struct span *parts, int n)
{
	struct span stem = none;
	int i = 0;

	while (i < n && slice_in(parts[i], stem, &stem))
		i++;
	if (i == n)
		return true;
	if (i != 2 || n < 3 || !user_manager(parts))
		return false;
	stem = none;
	for (i = 3; i < n; i++)
		if (!slice_in(parts[i], stem, &stem))
			return false;
	return true;
}

/* The scopes the runtimes make with systemd: <prefix><id>.scope. Longer
 * prefixes first (crio-conmon- before crio-). in_pod: the kubelet's
 * runtimes, found in a pod's slice. */
static const struct {
	const char *prefix;
	enum workload_kind kind;
	enum workload_runtime runtime;
	bool in_pod;
} scopes[] = {
	{"cri-containerd-", WORKLOAD_CONTAINER, RUNTIME_CONTAINERD, true},
	{"crio-conmon-", WORKLOAD_CONMON, RUNTIME_CRIO, true},
	{"crio-", WORKLOAD_CONTAINER, RUNTIME_CRIO, true},
	{"docker-", WORKLOAD_CONTAINER, RUNTIME_DOCKER, true},
	{"libpod-conmon-", WORKLOAD_CONMON, RUNTIME_PODMAN, false},
	{"libpod-", WORKLOAD_CONTAINER, RUNTIME_PODMAN, false},
};

/* A runtime's scope: 1 (w's kind, runtime and id set), 0 where p is no
 * runtime's, -1 where it is named as one but its id is not valid (or the
 * runtime has none in a pod). */
static int runtime_scope(struct span p, bool in_pod, struct workload *w)
{
	if (!ends(p, ".scope"))
		return 0;
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		size_t n = strlen(scopes[i].prefix);

		if (!starts(p, scopes[i].prefix))
			continue;
		if ((in_pod && !scopes[i].in_pod) ||
		    !container_id(cut(p, n, strlen(".scope")), w->container_id))
			return -1;
		w->kind = scopes[i].kind;
		w->runtime = scopes[i].runtime;
		return 1;
	}
	return 0;
}

/* What the kubelet's cgroupfs driver puts in a pod: the runtime's id,
 * CRI-O's crio-<id> or its monitor's crio-conmon-<id>. */
static bool cgroupfs_child(struct span p, struct workload *w)
{
	if (starts(p, "crio-conmon-")) {
		w->kind = WORKLOAD_CONMON;
		w->runtime = RUNTIME_CRIO;
		p = cut(p, strlen("crio-conmon-"), 0);
	} else if (starts(p, "crio-")) {
		w->kind = WORKLOAD_CONTAINER;
		w->runtime = RUNTIME_CRIO;
		p = cut(p, strlen("crio-"), 0);
	} else {
		w->kind = WORKLOAD_CONTAINER;
	}
	return container_id(p, w->container_id);
}

static bool qos_level(struct span p, enum workload_qos *qos)
{
	if (is(p, "burstable"))
		*qos = QOS_BURSTABLE;
	else if (is(p, "besteffort"))
		*qos = QOS_BESTEFFORT;
	else
		return false;
	return true;
}

/* The kubelet's cgroupfs driver: kubepods[/<qos>]/pod<uid>[/<child>]. */
static bool kube_cgroupfs(const struct span *parts, int n, struct workload *w)
{
	int p = 1;

	w->qos = QOS_GUARANTEED;
	if (n > p && qos_level(parts[p], &w->qos))
		p++;
	if (n <= p || !starts(parts[p], "pod") ||
	    !pod_uid(cut(parts[p], 3, 0), '-', w->pod_uid))
		return false;
	if (n == p + 1) {
		w->kind = WORKLOAD_POD;
		return true;
	}
	return n == p + 2 && cgroupfs_child(parts[p + 1], w);
}

/*
 * The kubelet's systemd driver: the slices from the top down to a
 * kubepods slice (kubepods.slice, or <root>-kubepods.slice in its
 * --cgroup-root's), its QoS slices, the pods in them and what the
 * runtimes put there. Whether path lies in a kubepods slice, whatever it
 * is there; w set where it is a pod or in one.
 */
static bool kube_systemd(const struct span *parts, int n, struct workload *w)
{
	struct span stem = none, parent, pods, uid;
	int k, p;

	for (k = 0; k < n; k++) {
		parent = stem;
		if (!slice_in(parts[k], parent, &stem))
			return false;
		if (is(level(stem, parent), "kubepods"))
			break;
	}
	if (k == n)
		return false;
	/* In kubepods from here: a pod, what it holds, or nothing. */
	pods = stem;
	p = k + 1;
	w->qos = QOS_GUARANTEED;
	if (n > p && slice_in(parts[p], pods, &stem) &&
	    qos_level(level(stem, pods), &w->qos)) {
		pods = stem;
		p++;
	}
	if (n <= p || !slice_in(parts[p], pods, &stem))
		return true;
	uid = level(stem, pods);
	if (!starts(uid, "pod") || !pod_uid(cut(uid, 3, 0), '_', w->pod_uid))
		return true;
	if (n == p + 1)
		w->kind = WORKLOAD_POD;
	else if (n == p + 2)
		runtime_scope(parts[p + 1], true, w);
	return true;
}

/* The rest of systemd's: a runtime's scope or a unit in slices. */
static void systemd_unit(const struct span *parts, int n, struct workload *w)
{
	struct span last = parts[n - 1];

	if (!unit_parent(parts, n - 1) || runtime_scope(last, false, w))
		return;
	if ((ends(last, ".service") && last.n > strlen(".service")) ||
	    (ends(last, ".scope") && last.n > strlen(".scope"))) {
		if (!unit_name(last))
			return;
		copy(w->unit, last);
		w->kind = WORKLOAD_UNIT;
	}
}

/* path's components; -1 past the bounds, or for an empty one, "." or
 * "..": no layout has them. */
static int split(const char *path, struct span *parts)
{
	size_t len = strnlen(path, WORKLOAD_PATH_MAX + 1);
	const char *p = path + (path[0] == '/'), *end = path + len;
	int n = 0;

	if (len > WORKLOAD_PATH_MAX)
		return -1;
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		struct span part = {p, (size_t)((slash ? slash : end) - p)};

		if (n == MAX_PARTS || !part.n || part.n > NAME_MAX_ ||
		    is(part, ".") || is(part, ".."))
			return -1;
		parts[n++] = part;
		if (!slash)
			break;
		p = slash + 1;
		if (p == end) /* a trailing '/' */
			return -1;
	}
	return n;
}

void workload_parse(const char *path, struct workload *w)
{
	struct span parts[MAX_PARTS];
	struct workload got = {0};
	int n = split(path, parts);

	*w = (struct workload){0};
	if (n <= 0)
		return;
	if (is(parts[0], "kubepods")) {
		if (!kube_cgroupfs(parts, n, &got))
			return;
	} else if (is(parts[0], "docker")) {
		if (n != 2 || !container_id(parts[1], got.container_id))
			return;
		got.kind = WORKLOAD_CONTAINER;
		got.runtime = RUNTIME_DOCKER;
	} else if (is(parts[0], "libpod_parent")) {
		if (n != 2 || !starts(parts[1], "libpod-") ||
		    !container_id(cut(parts[1], strlen("libpod-"), 0),
				  got.container_id))
			return;
		got.kind = WORKLOAD_CONTAINER;
		got.runtime = RUNTIME_PODMAN;
	} else if (!kube_systemd(parts, n, &got)) {
		systemd_unit(parts, n, &got);
	}
	/* Whole or nothing: never a label of a half-matched path. */
	if (got.kind != WORKLOAD_OTHER)
		*w = got;
}

const char *workload_qos_name(enum workload_qos q)
{
	static const char *const names[] = {
		[QOS_GUARANTEED] = "guaranteed",
		[QOS_BURSTABLE] = "burstable",
		[QOS_BESTEFFORT] = "besteffort",
	};

	return q > QOS_NONE && q <= QOS_BESTEFFORT ? names[q] : NULL;
}

const char *workload_runtime_name(enum workload_runtime r)
{
	static const char *const names[] = {
		[RUNTIME_CONTAINERD] = "containerd",
		[RUNTIME_CRIO] = "cri-o",
		[RUNTIME_DOCKER] = "docker",
		[RUNTIME_PODMAN] = "podman",
	};

	return r > RUNTIME_NONE && r <= RUNTIME_PODMAN ? names[r] : NULL;
}

/* A DNS-1123 label: lowercase letters, digits and '-', a letter or digit
 * at each end. Kubernetes names namespaces and containers so. */
static bool dns_label(struct span p, size_t max)
{
	if (!p.n || p.n > max || p.s[0] == '-' || p.s[p.n - 1] == '-')
		return false;
	for (size_t i = 0; i < p.n; i++)
		if (!((p.s[i] >= 'a' && p.s[i] <= 'z') ||
		      (p.s[i] >= '0' && p.s[i] <= '9') || p.s[i] == '-'))
			return false;
	return true;
}

/* A DNS-1123 subdomain: labels joined by '.'. Pods are named so. */
static bool dns_subdomain(struct span p)
{
	const char *end = p.s + p.n, *s = p.s;

	if (!p.n || p.n > K8S_POD_MAX)
		return false;
	for (;;) {
		const char *dot = memchr(s, '.', (size_t)(end - s));
		struct span label = {s, (size_t)((dot ? dot : end) - s)};

		if (!dns_label(label, 63))
			return false;
		if (!dot)
			return true;
		s = dot + 1;
	}
}

/* name split at its '_' into exactly three parts; false where its length
 * passes NAME_MAX or it has not two '_'. As Kubernetes names have no
 * '_', the parts are what the kubelet joined. */
static bool three(struct span name, struct span *a, struct span *b,
		  struct span *c)
{
	const char *first = memchr(name.s, '_', name.n), *second;

	if (!first)
		return false;
	second = memchr(first + 1, '_', (size_t)(name.s + name.n - first - 1));
	if (!second ||
	    memchr(second + 1, '_', (size_t)(name.s + name.n - second - 1)))
		return false;
	*a = (struct span){name.s, (size_t)(first - name.s)};
	*b = (struct span){first + 1, (size_t)(second - first - 1)};
	*c = (struct span){second + 1, (size_t)(name.s + name.n - second - 1)};
	return true;
}

bool workload_pod_dir(const char *name, struct pod_dir *out)
{
	struct span all = {name, strnlen(name, NAME_MAX_ + 1)}, ns, pod, uid;
	struct pod_dir got;

	if (all.n > NAME_MAX_ || !three(all, &ns, &pod, &uid) ||
	    !dns_label(ns, K8S_NAMESPACE_MAX) || !dns_subdomain(pod) ||
	    !pod_uid(uid, '-', got.uid))
		return false;
	copy(got.namespace, ns);
	copy(got.pod, pod);
	*out = got;
	return true;
}

bool workload_log_link(const char *name, struct log_link *out)
{
	struct span all = {name, strnlen(name, NAME_MAX_ + 1)}, head, pod, ns,
		    container;
	struct log_link got;

	/* <pod>_<namespace>_<container>-<id>.log: the kubelet cuts a name
	 * past 255 bytes, id first, and such a one is no match here. */
	if (all.n > NAME_MAX_ || !ends(all, ".log") ||
	    all.n < strlen("a_b_c-.log") + CONTAINER_ID_LEN)
		return false;
	head = cut(all, 0, strlen(".log") + CONTAINER_ID_LEN + 1);
	if (head.s[head.n] != '-' ||
	    !container_id((struct span){head.s + head.n + 1, CONTAINER_ID_LEN},
			  got.id) ||
	    !three(head, &pod, &ns, &container) || !dns_subdomain(pod) ||
	    !dns_label(ns, K8S_NAMESPACE_MAX) ||
	    !dns_label(container, K8S_CONTAINER_MAX))
		return false;
	copy(got.pod, pod);
	copy(got.namespace, ns);
	copy(got.container, container);
	*out = got;
	return true;
}
