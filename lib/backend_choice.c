// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one place that knows every backend: which counts each new kernel
 * event (declared for the core in core/backend.h), and the BPF backend's
 * state for one context.
 */
#include "backend_choice.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto_rule.h"
#include "bpf/backend_bpf.h"
#include "core/context.h"
#include "core/cpus.h"
#include "core/kevent.h"
#include "core/log.h"
#include "host/host.h"
#include "perf/backend_perf.h"

struct backend_choice {
	/* Guards state and bpf while it is made: taken before pmu->lock,
	 * never inside it, since loading the program takes tens of ms. */
	pthread_mutex_t lock;
	/* How cgroup targets are counted: undecided while AUTO counts
	 * them classic below its crossover (auto_rule.h). bpf is the BPF
	 * backend while it is BPF. */
	enum cgroup_counting {
		CGROUPS_UNDECIDED,
		CGROUPS_BY_BPF,
		CGROUPS_CLASSIC,
	} counting;
	struct backend *bpf;
	/* AUTO's classic cgroup events (auto_classic) open now, and their
	 * fds: under the context's create lock, as every open and close of
	 * a kernel event. */
	uint32_t classic_events;
	uint64_t classic_fds;
	/* Whether AUTO has said it counts cgroups classic, by BPF (tell). */
	bool told_classic, told_bpf;
	char *domain, *bpffs_dir; /* host scope's */
};

/* What this context counts with the BPF backend, of what it can count
 * (one attr: groups stay classic). Process scope: cgroups, and tasks and
 * processes when sharing (only once the program runs: see
 * backend_prepare). Host scope: all of it, a cgroup only on cgroup2,
 * whose ids the program sees; a host context without sharing counts
 * classic events. */
static bool bpf_counts(const struct shpmu *pmu, const struct share_key *key)
{
	uint32_t kind = key->target.kind;
	bool sharing = !(pmu->flags & SHPMU_F_NO_SHARING);

	if (!bpf_backend_counts(key))
		return false;
	if (pmu->scope == SHPMU_SCOPE_PROCESS)
		return kind == SHPMU_TARGET_CGROUP ||
		       (target_is_task(&key->target) && sharing);
	if (!sharing)
		return false;
	return kind != SHPMU_TARGET_CGROUP || pmu->cgroups.v2;
}

/* AUTO's classic cgroup events: classic events that keep count of
 * themselves, so that its rule weighs what the context holds now. */
static int auto_open(struct shpmu *pmu, struct kevent *ev, int cgroup_fd,
		     struct backend_cost *cost)
{
	int err = backend_perf.ops->open(pmu, ev, cgroup_fd, cost);

	if (!err) {
		pmu->choice->classic_events++;
		pmu->choice->classic_fds += ev->nfds;
	}
	return err;
}

static void auto_close(struct shpmu *pmu, struct kevent *ev,
		       struct backend_cost *cost)
{
	backend_perf.ops->close(pmu, ev, cost);
	pmu->choice->classic_events--;
	pmu->choice->classic_fds -= ev->nfds;
}

static int auto_enable(struct shpmu *pmu, struct kevent *ev, bool on)
{
	return backend_perf.ops->enable(pmu, ev, on);
}

static int auto_revive(struct shpmu *pmu, struct kevent *ev)
{
	return backend_perf.ops->revive(pmu, ev);
}

static int auto_read(struct shpmu *pmu, const struct kevent *ev, uint32_t first,
		     uint32_t n, bool fresh, uint64_t *vals)
{
	return backend_perf.ops->read(pmu, ev, first, n, fresh, vals);
}

static const struct backend_ops auto_classic_ops = {
	.open = auto_open,
	.close = auto_close,
	.enable = auto_enable,
	.revive = auto_revive,
	.read = auto_read,
};

static struct backend auto_classic = {.ops = &auto_classic_ops};

/* Decides (backend_lock held, or at shpmu_new) to count cgroups by BPF,
 * if its program loads. */
static int load_bpf(struct shpmu *pmu)
{
	int err;

	if (!pmu->cgroups.root || !pmu->cgroups.v2) {
		pr_info(pmu, "the BPF cgroup backend needs cgroup2: BPF sees "
			     "cgroup2 ids only");
		err = -EOPNOTSUPP;
	} else {
		err = bpf_backend_new(pmu, &pmu->choice->bpf);
	}
	pmu->choice->counting = err ? CGROUPS_CLASSIC : CGROUPS_BY_BPF;
	return err;
}

/* Host scope joins its domain at shpmu_new, or shpmu_new fails. */
static int join_host(struct shpmu *pmu)
{
	struct backend_choice *c = pmu->choice;
	int err = bpf_backend_join(pmu, c->bpffs_dir, c->domain, &c->bpf);

	if (err) {
		pr_err(pmu,
		       "shpmu_new: cannot join host domain %s under %s "
		       "(see above)",
		       pmu->choice->domain, pmu->choice->bpffs_dir);
		return err;
	}
	pmu->choice->counting = CGROUPS_BY_BPF;
	if (!pmu->cgroups.v2)
		pr_info(pmu, "host scope: cgroups here are not on cgroup2: "
			     "they are counted by classic events in this "
			     "process");
	return 0;
}

static void choice_free(struct backend_choice *c)
{
	pthread_mutex_destroy(&c->lock);
	free(c->domain);
	free(c->bpffs_dir);
	free(c);
}

static int choice_new(const struct shpmu_opts *o, struct backend_choice **out)
{
	struct backend_choice *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (pthread_mutex_init(&c->lock, NULL)) {
		free(c);
		return -ENOMEM;
	}
	if (o->scope == SHPMU_SCOPE_HOST) {
		c->domain = strdup(o->domain ? o->domain : HOST_DEFAULT_DOMAIN);
		c->bpffs_dir =
			strdup(o->bpffs_dir ? o->bpffs_dir : HOST_DEFAULT_DIR);
		if (!c->domain || !c->bpffs_dir) {
			choice_free(c);
			return -ENOMEM;
		}
	}
	*out = c;
	return 0;
}

/* Decides how cgroups are counted as shpmu_new asked. */
static int choose_at_new(struct shpmu *pmu)
{
	int err;

	if (pmu->scope == SHPMU_SCOPE_HOST)
		return join_host(pmu);
	switch (pmu->cgroup_backend) {
	case SHPMU_CGROUP_BACKEND_AUTO:
		/* SHPMU_F_NO_SHARING is the one-event-per-request
		 * baseline: AUTO means classic cgroup events there. */
		pmu->choice->counting = pmu->flags & SHPMU_F_NO_SHARING
						? CGROUPS_CLASSIC
						: CGROUPS_UNDECIDED;
		return 0;
	case SHPMU_CGROUP_BACKEND_PERF:
		pmu->choice->counting = CGROUPS_CLASSIC;
		return 0;
	case SHPMU_CGROUP_BACKEND_BPF:
		break;
	}
	err = load_bpf(pmu);
	if (err)
		pr_err(pmu,
		       "shpmu_new: the BPF cgroup backend cannot work "
		       "here (see above); use SHPMU_CGROUP_BACKEND_AUTO or "
		       "_PERF");
	return err;
}

int backend_choice_init(struct shpmu *pmu, const struct shpmu_opts *o)
{
	int err = choice_new(o, &pmu->choice);

	if (err)
		return err;
	err = choose_at_new(pmu);
	if (err) {
		choice_free(pmu->choice);
		pmu->choice = NULL;
	}
	return err;
}

void backend_choice_fini(struct shpmu *pmu)
{
	bpf_backend_free(pmu, pmu->choice->bpf);
	choice_free(pmu->choice);
	pmu->choice = NULL;
}

/* How many CPUs are online, for AUTO's rule; those of the event if they
 * cannot be read (its rule then compares as if all were). */
static uint32_t online_or(struct shpmu *pmu, uint32_t ncpus)
{
	int *cpus, n = cpus_online(pmu, &cpus);

	if (n < 0)
		return ncpus;
	free(cpus);
	return (uint32_t)n;
}

/* Says which backend AUTO counts a cgroup with, and why: the first time
 * this context counts one with that backend at SHPMU_LOG_WARN, the level
 * a log callback that shows only what matters shows (the tools', the
 * examples'); with each set, every later one at SHPMU_LOG_INFO. */
static void tell(struct shpmu *pmu, bool by_bpf, bool each, const char *why)
{
	struct backend_choice *c = pmu->choice;
	bool *told = by_bpf ? &c->told_bpf : &c->told_classic;
	bool first = !__atomic_exchange_n(told, true, __ATOMIC_RELAXED);

	if (!first && !each)
		return;
	shpmu_log(pmu, first ? SHPMU_LOG_WARN : SHPMU_LOG_INFO,
		  "counting cgroups with %s (AUTO: %s)",
		  by_bpf ? "the BPF backend" : "classic perf events", why);
}

/* AUTO's backend for a new cgroup kernel event on ncpus CPUs (the
 * choice's lock held): classic below the crossover, else the BPF
 * program, loaded now, from this one on (auto_rule.h). */
static struct backend *auto_cgroup_backend(struct shpmu *pmu, uint32_t ncpus)
{
	struct backend_choice *c = pmu->choice;
	uint32_t online = online_or(pmu, ncpus);
	uint32_t crossover = auto_crossover(online);
	char why[160];
	int err;

	if (auto_stays_classic(c->classic_fds, ncpus, online)) {
		snprintf(why, sizeof(why),
			 "cgroup event %" PRIu32 ", below the BPF crossover "
			 "of %" PRIu32 " on %" PRIu32 " CPU%s",
			 c->classic_events + 1, crossover, online,
			 plural(online, "s"));
		tell(pmu, false, true, why);
		return &auto_classic;
	}
	err = load_bpf(pmu);
	if (err) {
		/* Its reason may have been logged below this level. */
		pr_warn(pmu,
			"AUTO: the BPF backend cannot work here (%s; the "
			"log at info level says why): classic perf events "
			"count every cgroup from now on",
			strerror(-err));
		return &backend_perf;
	}
	snprintf(why, sizeof(why),
		 "from now on, at the BPF crossover of %" PRIu32 " on %" PRIu32
		 " CPU%s (%" PRIu32 " classic cgroup event%s open, %" PRIu64
		 " fd%s)",
		 crossover, online, plural(online, "s"), c->classic_events,
		 plural(c->classic_events, "s"), c->classic_fds,
		 plural(c->classic_fds, "s"));
	tell(pmu, true, false, why);
	return c->bpf;
}

/* The backend that counts key on ncpus CPUs, decided before its event is
 * made: AUTO loads the program here at its crossover (under the choice's
 * lock: the context lock is not held). */
static struct backend *backend_for(struct shpmu *pmu,
				   const struct share_key *key, uint32_t ncpus)
{
	struct backend_choice *c = pmu->choice;
	struct backend *b = &backend_perf;
	bool auto_cgroup = pmu->cgroup_backend == SHPMU_CGROUP_BACKEND_AUTO &&
			   pmu->scope == SHPMU_SCOPE_PROCESS &&
			   key->target.kind == SHPMU_TARGET_CGROUP;

	if (!bpf_counts(pmu, key)) {
		if (auto_cgroup)
			tell(pmu, false, false,
			     "the BPF backend does not count this event: a "
			     "group, a pinned or exclusive event, or a "
			     "build without the backend");
		return b;
	}
	pthread_mutex_lock(&c->lock);
	/* A task alone is cheaper as a classic task event: it is counted
	 * by the program only where the program runs anyway. */
	if (c->counting == CGROUPS_UNDECIDED && !target_is_task(&key->target))
		b = auto_cgroup_backend(pmu, ncpus);
	else if (c->counting == CGROUPS_BY_BPF)
		b = c->bpf;
	else if (auto_cgroup)
		/* Classic from the start: SHPMU_F_NO_SHARING. (Classic
		 * since BPF failed: told with the first cgroup, which AUTO
		 * always counts classic.) */
		tell(pmu, false, false,
		     "SHPMU_F_NO_SHARING: one classic event per request");
	pthread_mutex_unlock(&c->lock);
	return b;
}

int backend_new_event(struct shpmu *pmu, const struct share_key *key,
		      uint64_t hash, const int *cpus, uint32_t ncpus,
		      int cgroup_fd, struct kevent **out)
{
	struct backend *b = backend_for(pmu, key, ncpus);
	bool classic = b == &backend_perf || b == &auto_classic;
	int err;

	err = kevent_new(pmu, b, key, hash, cpus, ncpus, cgroup_fd, out);
	/* Out of room: AUTO counts this one the classic way. */
	if (err == -ENOSPC && !classic &&
	    pmu->cgroup_backend == SHPMU_CGROUP_BACKEND_AUTO) {
		pr_info(pmu, "counting this target with classic events "
			     "instead");
		err = kevent_new(pmu, &backend_perf, key, hash, cpus, ncpus,
				 cgroup_fd, out);
	}
	return err;
}

struct backend *backend_shared(struct shpmu *pmu)
{
	struct backend *b;

	pthread_mutex_lock(&pmu->choice->lock);
	b = pmu->choice->bpf;
	pthread_mutex_unlock(&pmu->choice->lock);
	return b;
}

/* For tests, through the static library. */

static struct bpf_backend_counters counters_of(const struct shpmu *pmu)
{
	struct shpmu *p = (struct shpmu *)pmu;
	struct bpf_backend_counters c = {0};

	pthread_mutex_lock(&p->choice->lock);
	if (p->choice->bpf)
		bpf_backend_counters(p->choice->bpf, &c);
	pthread_mutex_unlock(&p->choice->lock);
	return c;
}

uint64_t shpmu__bpf_unseen_switches(const struct shpmu *pmu)
{
	return counters_of(pmu).unseen;
}

uint64_t shpmu__bpf_unattributed_settles(const struct shpmu *pmu)
{
	struct shpmu *p = (struct shpmu *)pmu;

	/* Settle every CPU first: the program finds a switch the kernel
	 * hid only when it next runs on that CPU, which may be after the
	 * window the caller is judging has ended. */
	pthread_mutex_lock(&p->choice->lock);
	if (p->choice->bpf)
		(void)p->choice->bpf->ops->flush(p, p->choice->bpf);
	pthread_mutex_unlock(&p->choice->lock);
	return counters_of(pmu).unattributed_settles;
}

uint64_t shpmu__bpf_moves_settled(const struct shpmu *pmu)
{
	return counters_of(pmu).moves;
}

bool shpmu__bpf_sees_tick(const struct shpmu *pmu)
{
	return counters_of(pmu).sees_tick;
}

uint64_t shpmu__bpf_task_map_bytes(const struct shpmu *pmu)
{
	return counters_of(pmu).task_map_bytes;
}

uint64_t shpmu__bpf_children_lost(const struct shpmu *pmu)
{
	return counters_of(pmu).children_lost;
}
