// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a cgroup is and what its series are labelled with: the layout its
 * path has (workload.h), and the kubelet's names for its pod and
 * container (kubelogs.h). The labels are those of the kubelet's cAdvisor
 * metrics (namespace, pod, container) and what the path tells
 * (container_id, pod_uid, qos_class, runtime, unit), each only where it
 * applies; the cgroup label is the path, as it always was.
 *
 * A pod's sandbox (pause) container is named like the others in the
 * cgroup path. The kubelet links every container's log into
 * --kubernetes.container-logs-dir once it has started it, and never a
 * sandbox's: a container of a known pod (its uid in
 * --kubernetes.logs-dir) without a link, that directory read whole, is
 * taken for a sandbox (a container so new that its link is not
 * there yet is one until the next scrape that finds it). Without that
 * directory nothing tells them apart: every container counts as one.
 *
 * A monitor (conmon) gets no container_id label, the id in its name
 * being its container's: by container_id or container, a sum never
 * mixes a monitor with what it monitors.
 */
#include <stdlib.h>

#include "exporter.h"

static unsigned int path_kind(enum workload_kind k)
{
	switch (k) {
	case WORKLOAD_POD:
		return KIND_POD;
	case WORKLOAD_CONTAINER:
		return KIND_CONTAINER;
	case WORKLOAD_CONMON:
		return KIND_CONMON;
	case WORKLOAD_UNIT:
		return KIND_UNIT;
	default:
		return 0;
	}
}

void naming_parse(struct naming *n, const char *path)
{
	*n = (struct naming){0};
	workload_parse(path, &n->w);
	n->kind = path_kind(n->w.kind);
}

bool naming_may_be(const struct naming *n, unsigned int kinds)
{
	/* Only the names tell a pod's container from its sandbox. */
	if (n->kind == KIND_CONTAINER && n->w.pod_uid[0])
		return kinds & (KIND_CONTAINER | KIND_SANDBOX);
	return kinds & n->kind;
}

void naming_find(struct exporter *x, struct naming *n)
{
	const struct workload *w = &n->w;
	struct kubelogs *k = &x->logs;
	bool container = w->kind == WORKLOAD_CONTAINER;

	if (!w->pod_uid[0])
		return;
	kubelogs_find(k, x->scrapes, w->pod_uid,
		      container ? w->container_id : "", &n->names);
	n->unnamed = (k->pods.path && !n->names.pod) ||
		     (container && k->containers.path && !n->names.container);
	/* Without a pods directory, the links alone tell a sandbox. */
	if (container && !n->names.linked &&
	    (n->names.pod_known || !k->pods.path) &&
	    kubelogs_knows_containers(k))
		n->kind = KIND_SANDBOX;
}

/* ,name="value" where there is a value. */
static void pair(struct page *p, const char *name, const char *value)
{
	if (!value || !*value)
		return;
	page_printf(p, ",%s=\"", name);
	page_label_value(p, value);
	page_putc(p, '"');
}

char *naming_labels(const char *label, const struct naming *n)
{
	const struct workload *w = &n->w;
	struct page p = {0};

	page_puts(&p, "cgroup=\"");
	page_label_value(&p, label);
	page_putc(&p, '"');
	pair(&p, "namespace", n->names.namespace);
	pair(&p, "pod", n->names.pod);
	if (n->kind == KIND_CONTAINER)
		pair(&p, "container", n->names.container);
	if (w->kind == WORKLOAD_CONTAINER)
		pair(&p, "container_id", w->container_id);
	pair(&p, "pod_uid", w->pod_uid);
	pair(&p, "qos_class", workload_qos_name(w->qos));
	pair(&p, "runtime", workload_runtime_name(w->runtime));
	pair(&p, "unit", w->unit);
	return page_text(&p);
}

char *label_pair(const char *name, const char *value)
{
	struct page p = {0};

	page_printf(&p, "%s=\"", name);
	page_label_value(&p, value);
	page_putc(&p, '"');
	return page_text(&p);
}
