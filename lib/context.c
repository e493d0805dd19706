// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_backend.h"
#include "log.h"
#include "task.h"

#define SHPMU_F_ALL SHPMU_F_NO_SHARING

/* The bytes of opts a caller built against a newer header may have set:
 * they must be zero, or the caller asks for something we do not know. */
static bool opts_tail_is_zero(const struct shpmu_opts *opts)
{
	const unsigned char *p = (const unsigned char *)opts;

	for (size_t i = sizeof(*opts); i < opts->sz; i++)
		if (p[i])
			return false;
	return true;
}

/* Copies what the caller's (possibly older, smaller) opts holds. */
static int opts_copy(const struct shpmu_opts *in, struct shpmu_opts *out)
{
	memset(out, 0, sizeof(*out));
	if (!in)
		return 0;
	if (in->sz < offsetof(struct shpmu_opts, flags) + sizeof(in->flags))
		return -EINVAL;
	if (!opts_tail_is_zero(in))
		return -EINVAL;
	memcpy(out, in, in->sz < sizeof(*out) ? in->sz : sizeof(*out));
	return 0;
}

/* A dynamic PMU's type number, or -1 where there is no such PMU. */
static int64_t pmu_type(struct shpmu *pmu, const char *name)
{
	char path[128], text[32];

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
		 name);
	if (sys_read_file(pmu, path, text, sizeof(text)) <= 0)
		return -1;
	return strtol(text, NULL, 10);
}

static int context_init(struct shpmu *pmu, const struct shpmu_opts *o)
{
	int err;

	pmu->sys = &shpmu_sys_kernel;
	pmu->flags = o->flags;
	pmu->cgroup_backend = o->cgroup_backend;
	pmu->log = o->log;
	pmu->log_arg = o->log_arg;
	pmu->fork_generation = task_fork_generation();
	pmu->probe_types[0] = pmu_type(pmu, "kprobe");
	pmu->probe_types[1] = pmu_type(pmu, "uprobe");
	err = cgroups_init(pmu, &pmu->cgroups, o->cgroup_root);
	if (err)
		return err;
	err = -pthread_mutex_init(&pmu->lock, NULL);
	if (err)
		goto fini_cgroups;
	err = registry_init(&pmu->registry);
	if (err)
		goto destroy_lock;
	err = handles_init(&pmu->handles);
	if (err)
		goto fini_registry;
	return 0;

fini_registry:
	registry_fini(&pmu->registry);
destroy_lock:
	pthread_mutex_destroy(&pmu->lock);
fini_cgroups:
	cgroups_fini(pmu, &pmu->cgroups);
	return err;
}

struct shpmu *shpmu_new(const struct shpmu_opts *opts)
{
	struct shpmu_opts o;
	struct shpmu *pmu;
	int err;

	/* Until the context exists, log through the caller's callback. */
	struct shpmu early = { .log = opts && opts->sz >= sizeof(o) ? opts->log
								    : NULL,
			       .log_arg = opts && opts->sz >= sizeof(o)
						  ? opts->log_arg
						  : NULL };

	if (opts_copy(opts, &o)) {
		pr_err(&early, "shpmu_new: opts->sz %zu is not a size this "
			       "version understands, or fields past %zu bytes "
			       "are set",
		       opts->sz, sizeof(o));
		return shpmu_err_ptr(-EINVAL);
	}
	early.log = o.log;
	early.log_arg = o.log_arg;
	if (o.flags & ~SHPMU_F_ALL) {
		pr_err(&early, "shpmu_new: unknown flags %#x",
		       o.flags & ~SHPMU_F_ALL);
		return shpmu_err_ptr(-EINVAL);
	}
	switch (o.cgroup_backend) {
	case SHPMU_CGROUP_BACKEND_AUTO:
	case SHPMU_CGROUP_BACKEND_PERF:
	case SHPMU_CGROUP_BACKEND_BPF:
		break;
	default:
		pr_err(&early, "shpmu_new: unknown cgroup backend %d",
		       (int)o.cgroup_backend);
		return shpmu_err_ptr(-EINVAL);
	}

	pmu = calloc(1, sizeof(*pmu));
	if (!pmu)
		return shpmu_err_ptr(-ENOMEM);
	err = context_init(pmu, &o);
	if (err) {
		free(pmu);
		return shpmu_err_ptr(err);
	}
	if (o.cgroup_backend == SHPMU_CGROUP_BACKEND_BPF) {
		pmu->bpf_decided = true;
		err = bpf_backend_new(pmu, &pmu->bpf);
		if (err) {
			pr_err(pmu, "shpmu_new: the BPF cgroup backend cannot "
				    "work here (see above); use "
				    "SHPMU_CGROUP_BACKEND_AUTO or _PERF");
			shpmu_free(pmu);
			return shpmu_err_ptr(err);
		}
	}
	return pmu;
}

void shpmu_free(struct shpmu *pmu)
{
	int saved = errno;

	if (!pmu)
		return;
	/* In a forked child the fds are copies of the parent's: close the
	 * copies, but switch nothing off under the parent. */
	pmu->forked = pmu->fork_generation != task_fork_generation();
	pthread_mutex_lock(&pmu->lock);
	for (uint32_t i = 0; i < pmu->handles.nslots; i++) {
		struct handle *slot = handles_slot(&pmu->handles, i);
		int h;

		if (!slot->ev)
			continue;
		h = handle_of(slot, i);
		slot = handle_lock(&pmu->handles, h);
		context_close_handle(pmu, slot, h);
	}
	pthread_mutex_unlock(&pmu->lock);
	bpf_backend_free(pmu, pmu->bpf);
	handles_fini(&pmu->handles);
	registry_fini(&pmu->registry);
	pthread_mutex_destroy(&pmu->lock);
	cgroups_fini(pmu, &pmu->cgroups);
	free(pmu);
	errno = saved;
}

__thread int context_depth __attribute__((tls_model("initial-exec")));

int context_refuse(struct shpmu *pmu, const char *fn)
{
	/* No logging for re-entry: the log callback may be what re-entered. */
	if (context_depth > 0)
		return -EDEADLK;
	pr_err(pmu, "%s: this context belongs to the parent process; a "
		    "forked child must create its own",
	       fn);
	return -EPERM;
}

static int get_stats_checked(struct shpmu *pmu, struct shpmu_stats *out)
{
	if (!pmu || !out) {
		pr_err(pmu, "shpmu_get_stats: out is NULL");
		return shpmu_err(-EINVAL);
	}
	pthread_mutex_lock(&pmu->lock);
	*out = pmu->stats;
	pthread_mutex_unlock(&pmu->lock);
	return 0;
}

struct bpf_backend *context_bpf(struct shpmu *pmu)
{
	if (!pmu->bpf_decided) {
		pmu->bpf_decided = true;
		/* SHPMU_F_NO_SHARING is the one-event-per-request baseline:
		 * AUTO means classic cgroup events there. */
		if (pmu->cgroup_backend == SHPMU_CGROUP_BACKEND_AUTO &&
		    !(pmu->flags & SHPMU_F_NO_SHARING) &&
		    bpf_backend_new(pmu, &pmu->bpf))
			pr_info(pmu, "counting cgroups with classic cgroup "
				     "events: the BPF backend cannot work here "
				     "(see above)");
	}
	return pmu->bpf;
}

int shpmu_get_stats(struct shpmu *pmu, struct shpmu_stats *out)
{
	CONTEXT_CALL(pmu, get_stats_checked(pmu, out));
}
