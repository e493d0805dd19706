// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "counter_prog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup_counter.skel.h"
#include "cpus.h"
#include "log.h"

/* While a thread loads the program, libbpf's messages (the verifier's
 * reasons among them) go to that context's log at debug level; other
 * threads' go to the application's own printer. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct shpmu *loading;
static libbpf_print_fn_t app_printer;

__attribute__((format(printf, 2, 0))) static int
forward_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	if (!loading)
		return app_printer ? app_printer(level, fmt, ap) : 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	pr_debug(loading, "libbpf: %s", msg);
	return 0;
}

static int load(struct shpmu *pmu, uint32_t max_slots, struct counter_prog *p)
{
	int err;

	pthread_mutex_lock(&load_lock);
	loading = pmu;
	app_printer = libbpf_set_print(forward_libbpf);
	p->skel = cgroup_counter__open();
	err = p->skel ? 0 : -errno;
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.totals, max_slots);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.cgroup_slots,
					       max_slots);
	/* attach() picks the move hooks this kernel has. */
	if (!err) {
		bpf_program__set_autoattach(p->skel->progs.on_ipi, false);
		bpf_program__set_autoattach(p->skel->progs.on_attach, false);
	}
	if (!err)
		err = cgroup_counter__load(p->skel);
	libbpf_set_print(app_printer);
	loading = NULL;
	pthread_mutex_unlock(&load_lock);
	if (err == -EPERM)
		pr_info(pmu,
			"cannot load the BPF cgroup counter: %s (it needs "
			"CAP_BPF and CAP_PERFMON, or root)",
			strerror(-err));
	else if (err)
		pr_info(pmu,
			"cannot load the BPF cgroup counter: %s (the "
			"kernel refused it: it needs BTF, raw tracepoints, "
			"bpf_loop and bpf_rdonly_cast, from Linux 6.2; the "
			"debug log has the verifier's reasons)",
			strerror(-err));
	return err;
}

/* Moves of a running task are settled where perf's cgroup controller
 * runs a function on the task's CPU (csd_function_entry, Linux 6.4); on
 * older kernels only the moves a task makes itself are (cgroup_attach_task
 * runs in the writer's context), and the rest at the task's next switch. */
static int attach_move_hook(struct shpmu *pmu, struct cgroup_counter *s,
			    bool ipi_hook)
{
	if (ipi_hook) {
		s->links.on_ipi = bpf_program__attach(s->progs.on_ipi);
		if (s->links.on_ipi)
			return 0;
	}
	s->links.on_attach = bpf_program__attach(s->progs.on_attach);
	if (!s->links.on_attach)
		return -errno;
	pr_info(pmu, "no csd_function_entry tracepoint here (Linux 6.4 "
		     "has it): a running task moved to another cgroup by "
		     "another process is counted in its new cgroup until it "
		     "next leaves its CPU");
	return 0;
}

static int attach(struct shpmu *pmu, struct cgroup_counter *s, bool ipi_hook)
{
	int err = 0;

	s->links.on_switch = bpf_program__attach(s->progs.on_switch);
	if (!s->links.on_switch)
		err = -errno;
	if (!err)
		err = attach_move_hook(pmu, s, ipi_hook);
	if (err)
		pr_info(pmu,
			"cannot attach the BPF cgroup counter to its "
			"raw tracepoints: %s",
			strerror(-err));
	return err;
}

int counter_prog_load(struct shpmu *pmu, uint32_t max_slots, bool ipi_hook,
		      struct counter_prog *p)
{
	int err;

	memset(p, 0, sizeof(*p));
	err = -pthread_mutex_init(&p->flush_lock, NULL);
	if (err)
		return err;
	p->nonline = cpus_online(pmu, &p->online);
	if (p->nonline < 0) {
		err = p->nonline;
		p->online = NULL;
		goto fail;
	}
	if (load(pmu, max_slots, p) || attach(pmu, p->skel, ipi_hook)) {
		err = -EOPNOTSUPP;
		goto fail;
	}
	p->prog_fd = bpf_program__fd(p->skel->progs.on_switch);
	return 0;
fail:
	counter_prog_unload(p);
	return err;
}

void counter_prog_unload(struct counter_prog *p)
{
	cgroup_counter__destroy(p->skel);
	pthread_mutex_destroy(&p->flush_lock);
	free(p->online);
	memset(p, 0, sizeof(*p));
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
 * as they are. The caller holds flush_lock. */
static int flush_cpu_locked(struct shpmu *pmu, struct counter_prog *p, int cpu)
{
	uint64_t no_switch[4] = {0};
	LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU,
		    .cpu = (uint32_t)cpu, .ctx_in = no_switch,
		    .ctx_size_in = sizeof(no_switch));
	int err;

	if (!bpf_prog_test_run_opts(p->prog_fd, &run) || errno == ENXIO)
		return 0;
	err = -errno;
	pr_err(pmu, "BPF backend: flushing cpu %d: %s", cpu, strerror(-err));
	return err;
}

int counter_prog_flush_cpus(struct shpmu *pmu, struct counter_prog *p,
			    const int *cpus, uint32_t n)
{
	int err = 0;

	pthread_mutex_lock(&p->flush_lock);
	for (uint32_t i = 0; i < n && !err; i++)
		err = flush_cpu_locked(pmu, p, cpus[i]);
	pthread_mutex_unlock(&p->flush_lock);
	return err;
}

int counter_prog_flush(struct shpmu *pmu, struct counter_prog *p)
{
	int err = 0;

	pthread_mutex_lock(&p->flush_lock);
	for (int i = 0; i < p->nonline && !err; i++)
		err = flush_cpu_locked(pmu, p, p->online[i]);
	pthread_mutex_unlock(&p->flush_lock);
	return err;
}

uint64_t counter_prog_unseen(const struct counter_prog *p)
{
	return __atomic_load_n(&p->skel->bss->unseen_switches,
			       __ATOMIC_RELAXED);
}

uint64_t counter_prog_strays(const struct counter_prog *p)
{
	return __atomic_load_n(&p->skel->bss->unseen_strays, __ATOMIC_RELAXED);
}

uint64_t counter_prog_moves(const struct counter_prog *p)
{
	return __atomic_load_n(&p->skel->bss->moves_settled, __ATOMIC_RELAXED);
}

void counter_prog_tell_unseen(struct shpmu *pmu, struct counter_prog *p)
{
	uint64_t n = counter_prog_unseen(p);

	if (!n || __atomic_exchange_n(&p->told_unseen, true, __ATOMIC_RELAXED))
		return;
	pr_info(pmu,
		"the sched_switch tracepoint has missed %llu context "
		"switches on this machine (a kernel that hides some "
		"tasks from tracing?): %llu were a task coming back, "
		"counted as if it never left; what ran around %llu "
		"others may have gone to the wrong counted cgroup",
		(unsigned long long)n,
		(unsigned long long)__atomic_load_n(
			&p->skel->bss->unseen_returns, __ATOMIC_RELAXED),
		(unsigned long long)counter_prog_strays(p));
}
