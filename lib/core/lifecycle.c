// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Making and freeing a context, and its statistics. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/backend.h"
#include "core/hw_pmus.h"
#include "core/key.h"
#include "core/log.h"
#include "core/open.h"
#include "core/symver.h"
#include "core/task.h"
#include "sys/sys.h"
#ifdef HAVE_PMU_MODEL
#include "sys/pmu_model.h"
#endif

#define SHPMU_F_ALL SHPMU_F_NO_SHARING

/* Copies what the caller's (possibly older, smaller) opts holds. */
static int opts_copy(const struct shpmu_opts *in, struct shpmu_opts *out)
{
	memset(out, 0, sizeof(*out));
	if (!in)
		return 0;
	if (in->sz < offsetof(struct shpmu_opts, flags) + sizeof(in->flags))
		return -EINVAL;
	/* Set, the bytes past what we know ask for what we cannot do. */
	if (first_nonzero_byte(in, sizeof(*in), in->sz) < in->sz)
		return -EINVAL;
	memcpy(out, in, in->sz < sizeof(*out) ? in->sz : sizeof(*out));
	return 0;
}

static int scope_check(const struct shpmu_opts *o, struct shpmu *log_to)
{
	if (o->scope == SHPMU_SCOPE_PROCESS) {
		if (!o->domain && !o->bpffs_dir && !o->lock_timeout_ms)
			return 0;
		pr_err(log_to, "shpmu_new: domain, bpffs_dir and "
			       "lock_timeout_ms are for SHPMU_SCOPE_HOST");
		return -EINVAL;
	}
	if (o->scope != SHPMU_SCOPE_HOST) {
		pr_err(log_to, "shpmu_new: unknown scope %d", (int)o->scope);
		return -EINVAL;
	}
	if (o->cgroup_backend == SHPMU_CGROUP_BACKEND_PERF) {
		pr_err(log_to, "shpmu_new: host scope shares through the BPF "
			       "backend; SHPMU_CGROUP_BACKEND_PERF asks for "
			       "classic events");
		return -EINVAL;
	}
	return 0;
}

/* Rejects what opts asks that this version does not know, logging to
 * early (a context that is only its env, until the real one exists). */
static int opts_check(const struct shpmu_opts *opts, struct shpmu_opts *o,
		      struct shpmu_env *early)
{
	struct shpmu *log_to = (struct shpmu *)early;

	bool has_log =
		opts && opts->sz >= offsetof(struct shpmu_opts, log_arg) +
					    sizeof(opts->log_arg);

	early->log = has_log ? opts->log : NULL;
	early->log_arg = has_log ? opts->log_arg : NULL;
	if (opts_copy(opts, o)) {
		pr_err(log_to,
		       "shpmu_new: opts->sz %zu is not a size this "
		       "version understands, or fields past %zu bytes "
		       "are set",
		       opts->sz, sizeof(*o));
		return -EINVAL;
	}
	early->log = o->log;
	early->log_arg = o->log_arg;
	if (o->flags & ~SHPMU_F_ALL) {
		pr_err(log_to, "shpmu_new: unknown flags %#x",
		       o->flags & ~SHPMU_F_ALL);
		return -EINVAL;
	}
	switch (o->cgroup_backend) {
	case SHPMU_CGROUP_BACKEND_AUTO:
	case SHPMU_CGROUP_BACKEND_PERF:
	case SHPMU_CGROUP_BACKEND_BPF:
		break;
	default:
		pr_err(log_to, "shpmu_new: unknown cgroup backend %d",
		       (int)o->cgroup_backend);
		return -EINVAL;
	}
	return scope_check(o, log_to);
}

/* A dynamic PMU's type number into *type, -1 where there is no such PMU;
 * 0, or -errno when it cannot be told. */
static int pmu_type(struct shpmu *pmu, const char *name, int64_t *type)
{
	char path[128], text[32];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
		 name);
	n = sys_read_file(pmu, path, text, sizeof(text));
	*type = n > 0 ? strtol(text, NULL, 10) : -1;
	return n < 0 && n != -ENOENT ? (int)n : 0;
}

static int context_init(struct shpmu *pmu, const struct shpmu_opts *o)
{
	int err;

	pmu->env.sys = shpmu__sys_ops_at_new ? shpmu__sys_ops_at_new
					     : &shpmu_sys_kernel;
#ifdef HAVE_PMU_MODEL
	/* A test build's model of hardware PMUs, when one is configured. */
	if (!shpmu__sys_ops_at_new && pmu_model_ops())
		pmu->env.sys = pmu_model_ops();
#endif
	pmu->env.log = o->log;
	pmu->env.log_arg = o->log_arg;
	pmu->env.lock_timeout_ms = o->lock_timeout_ms;
	pmu->flags = o->flags;
	pmu->cgroup_backend = o->cgroup_backend;
	pmu->scope = o->scope;
	pmu->fork_generation = task_fork_generation();
	err = pmu_type(pmu, "kprobe", &pmu->probe_types[0]);
	if (!err)
		err = pmu_type(pmu, "uprobe", &pmu->probe_types[1]);
	if (err)
		return err;
	err = cgroups_init(pmu, &pmu->cgroups, o->cgroup_root);
	if (err)
		return err;
	err = -pthread_mutex_init(&pmu->create_lock, NULL);
	if (err)
		goto fini_cgroups;
	err = -pthread_mutex_init(&pmu->lock, NULL);
	if (err)
		goto destroy_create_lock;
	err = registry_init(&pmu->registry);
	if (err)
		goto destroy_lock;
	err = handles_init(&pmu->handles);
	if (err)
		goto fini_registry;
	/* Last: it may load the BPF program, which wants the cgroups. */
	err = backend_choice_init(pmu, o);
	if (err)
		goto fini_handles;
	return 0;

fini_handles:
	handles_fini(&pmu->handles);
fini_registry:
	registry_fini(&pmu->registry);
destroy_lock:
	pthread_mutex_destroy(&pmu->lock);
destroy_create_lock:
	pthread_mutex_destroy(&pmu->create_lock);
fini_cgroups:
	cgroups_fini(pmu, &pmu->cgroups);
	return err;
}

struct shpmu *shpmu_new(const struct shpmu_opts *opts)
{
	struct shpmu_env early = {0};
	struct shpmu_opts o;
	struct shpmu *pmu;
	int err;

	err = opts_check(opts, &o, &early);
	if (err)
		return shpmu_err_ptr(err);
	pmu = calloc(1, sizeof(*pmu));
	if (!pmu)
		return shpmu_err_ptr(-ENOMEM);
	err = context_init(pmu, &o);
	if (err) {
		free(pmu);
		return shpmu_err_ptr(err);
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
	pmu->env.forked = pmu->fork_generation != task_fork_generation();
	close_all_handles(pmu);
	backend_choice_fini(pmu);
	hw_pmus_free(pmu->hw);
	handles_fini(&pmu->handles);
	registry_fini(&pmu->registry);
	pthread_mutex_destroy(&pmu->lock);
	pthread_mutex_destroy(&pmu->create_lock);
	cgroups_fini(pmu, &pmu->cgroups);
	free(pmu);
	errno = saved;
}

static int get_stats_checked(struct shpmu *pmu, struct shpmu_stats *out)
{
	int err = api_check(pmu, out, "shpmu_get_stats", "out");
	uint64_t unseen = 0, unattributed_ns = 0;
	struct backend *shared;

	if (err)
		return shpmu_err(err);
	/* (The shared backend's lock is never taken under the context's.) */
	shared = backend_shared(pmu);
	if (shared && shared->ops->unseen)
		shared->ops->unseen(shared, &unseen, &unattributed_ns);
	pthread_mutex_lock(&pmu->lock);
	*out = pmu->stats;
	pthread_mutex_unlock(&pmu->lock);
	out->switches_unseen = unseen;
	out->unattributed_ns = unattributed_ns;
	return 0;
}

int shpmu_get_stats_v0_2(struct shpmu *pmu, struct shpmu_stats *out)
{
	API_CALL(pmu, get_stats_checked(pmu, out));
}
SHPMU_DEFAULT_VERSION(shpmu_get_stats_v0_2, shpmu_get_stats, "LIBSHPMU_0.2");

unsigned int shpmu_version(void)
{
	return SHPMU_VERSION;
}
