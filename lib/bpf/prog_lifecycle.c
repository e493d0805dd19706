// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The switch counter's life in one context: loaded for it alone (process
 * scope) or adopted from a domain's pins (host scope), flushed on the CPUs
 * it visits, those CPUs re-read when they come and go, and given back.
 */
#include "bpf/counter_prog.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/prog_maps.h"
#include "core/cpus.h"
#include "core/log.h"
#include "sys/sys.h"

static void close_if_open(struct shpmu *pmu, int fd)
{
	if (fd >= 0)
		sys_close(pmu, fd);
}

/* Takes the fds p keeps open (counter_prog_adopt's order). */
static void take_fds(struct counter_prog *p, const int fds[N_PROG_FDS])
{
	p->prog_fd = fds[PROG_FD];
	p->events_fd = fds[EVENTS_FD];
	p->slots_fd = fds[SLOTS_FD];
	p->links_fd = fds[LINKS_FD];
	p->task_totals_fd = fds[TASK_TOTALS_FD];
}

static int init_common(struct shpmu *pmu, struct counter_prog *p)
{
	int err = -pthread_mutex_init(&p->flush_lock, NULL);

	if (err)
		return err;
	p->pmu = pmu;
	p->nonline = cpus_online(pmu, &p->online);
	if (p->nonline < 0) {
		err = p->nonline;
		p->online = NULL;
		pthread_mutex_destroy(&p->flush_lock);
	}
	return err;
}

/* Gives back all p holds: its mappings, the skeleton (process scope) or
 * the fds it took (host scope), and what init_common made. */
static void release(struct counter_prog *p)
{
	prog_unmap_memory(p);
	if (p->skel) {
		counter_prog_destroy_skel(p->skel);
	} else {
		close_if_open(p->pmu, p->prog_fd);
		close_if_open(p->pmu, p->events_fd);
		close_if_open(p->pmu, p->slots_fd);
		close_if_open(p->pmu, p->links_fd);
		close_if_open(p->pmu, p->task_totals_fd);
	}
	if (p->online) {
		pthread_mutex_destroy(&p->flush_lock);
		free(p->online);
	}
	memset(p, 0, sizeof(*p));
}

int counter_prog_load(struct shpmu *pmu, uint32_t max_slots, bool ipi_hook,
		      struct counter_prog *p)
{
	int cpus = counter_prog_cpus(pmu), fds[N_PROG_FDS], err;

	memset(p, 0, sizeof(*p));
	p->prog_fd = p->events_fd = p->slots_fd = -1;
	p->links_fd = p->task_totals_fd = -1;
	if (cpus < 0)
		return cpus;
	err = init_common(pmu, p);
	if (err)
		return err;
	p->nr_cpus = (uint32_t)cpus;
	p->max_slots = max_slots;
	err = counter_prog_load_skel(pmu, p->nr_cpus, max_slots, ipi_hook,
				     &p->skel);
	if (err)
		goto fail;
	/* The skeleton keeps its fds and maps its globals itself. */
	counter_prog_skel_fds(p->skel, fds);
	take_fds(p, fds);
	p->bss = counter_prog_skel_bss(p->skel);
	err = prog_map_memory(pmu, p, -1, fds[VIEWS_FD], fds[TOTALS_FD]);
	if (err)
		goto fail;
	return 0;
fail:
	release(p);
	return err;
}

int counter_prog_adopt(struct shpmu *pmu, const int fds[N_PROG_FDS],
		       uint32_t nr_cpus, uint32_t max_slots,
		       struct counter_prog *p)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->pmu = pmu;
	take_fds(p, fds);
	p->nr_cpus = nr_cpus;
	p->max_slots = max_slots;
	err = init_common(pmu, p);
	if (!err)
		err = prog_map_memory(pmu, p, fds[BSS_FD], fds[VIEWS_FD],
				      fds[TOTALS_FD]);
	/* The mappings hold the maps now. */
	sys_close(pmu, fds[BSS_FD]);
	sys_close(pmu, fds[VIEWS_FD]);
	sys_close(pmu, fds[TOTALS_FD]);
	if (err)
		release(p);
	return err;
}

void counter_prog_unload(struct counter_prog *p)
{
	/* (Zeroed: never loaded, or given back already.) */
	if (!p->online && !p->skel && !p->bss)
		return;
	release(p);
}

int counter_prog_refresh_online(struct shpmu *pmu, struct counter_prog *p)
{
	int *online, n = cpus_online(pmu, &online);

	if (n < 0)
		return n;
	pthread_mutex_lock(&p->flush_lock);
	free(p->online);
	p->online = online;
	p->nonline = n;
	pthread_mutex_unlock(&p->flush_lock);
	return 0;
}

/* Runs the program on cpu with no outgoing task: the delta since the CPU's
 * last settle goes to what runs there now. On another CPU it runs in an
 * interrupt, so it also waits out any switch the program is handling
 * there. A CPU gone offline has nothing running to flush: its totals stand
 * as they are. The caller holds flush_lock; another process's flush may
 * still be running on cpu, with interrupts on: then the program returns 1
 * and we try again (that run is short and cannot be preempted). */
static int flush_cpu_locked(struct shpmu *pmu, struct counter_prog *p, int cpu)
{
	const uint64_t no_switch[4] = {0};
	uint32_t retval;
	int err;

	for (int tries = 0; tries < 100000; tries++) {
		retval = 0;
		err = prog_run_on_cpu(p, cpu, no_switch, sizeof(no_switch),
				      &retval);
		if (err == -ENXIO)
			return 0;
		if (err)
			goto fail;
		if (retval == 0)
			return 0;
		sched_yield();
	}
	err = -EBUSY;
fail:
	pr_err(pmu, "BPF backend: flushing cpu %d: %s", cpu, strerror(-err));
	return err;
}

/* Logs, once, that the kernel hides switches from the program: after a
 * flush, which is where the program has counted them up to now. */
static void tell_unseen(struct shpmu *pmu, struct counter_prog *p)
{
	uint64_t n, settles;

	if (__atomic_load_n(&p->told_unseen, __ATOMIC_RELAXED))
		return;
	n = counter_prog_unseen(p);
	if (!n || __atomic_exchange_n(&p->told_unseen, true, __ATOMIC_RELAXED))
		return;
	settles = counter_prog_unattributed_settles(p);
	pr_info(pmu,
		"this kernel made %llu context switch%s without running the "
		"BPF switch counter (some kernels hide certain tasks' "
		"switches from BPF): counts stay exact where the tasks on "
		"both sides count for the same targets; elsewhere what ran "
		"across such a switch goes unattributed, and "
		"shpmu_read_bound() says how much of it each handle may be "
		"missing (%llu settle%s so far)",
		(unsigned long long)n, plural(n, "es"),
		(unsigned long long)settles, plural(settles, "s"));
}

/* Flushes cpus[0 .. n), or with every set all the online CPUs. */
static int flush(struct shpmu *pmu, struct counter_prog *p, bool every,
		 const int *cpus, uint32_t n)
{
	int err = 0;

	pthread_mutex_lock(&p->flush_lock);
	if (every) {
		cpus = p->online;
		n = (uint32_t)p->nonline;
	}
	for (uint32_t i = 0; i < n && !err; i++)
		err = flush_cpu_locked(pmu, p, cpus[i]);
	pthread_mutex_unlock(&p->flush_lock);
	if (!err)
		tell_unseen(pmu, p);
	return err;
}

int counter_prog_flush_cpus(struct shpmu *pmu, struct counter_prog *p,
			    const int *cpus, uint32_t n)
{
	return flush(pmu, p, false, cpus, n);
}

int counter_prog_flush(struct shpmu *pmu, struct counter_prog *p)
{
	return flush(pmu, p, true, NULL, 0);
}
