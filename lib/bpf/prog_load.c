// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Making the switch counter (bpf/prog/): its skeleton opened with maps
 * sized for this machine, the object loaded into the kernel (in load(),
 * the one place it is), the verifier's log of a load that fails passed to
 * the context's log, and the program attached to its tracepoints.
 */
#include "bpf/counter_prog.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "core/cpus.h"
#include "core/log.h"
#include "sys/sys.h"
#include "switch_counter.skel.h"

/* Room for the kernel's log of a failed load. Kernels from 6.4 keep the
 * end of a log that does not fit, where the error is; the buffer is
 * touched only when a load fails (libbpf then loads again with the log
 * on). */
#define LOAD_LOG_SIZE (1u << 20)
/* How many of its last lines go to the context's log. */
#define LOAD_LOG_LINES 24

uint32_t shpmu__bpf_skip_tid, shpmu__bpf_skip_every;

/* The program opened, not loaded, its maps sized for nr_cpus and
 * max_slots; opts as libbpf takes them (NULL: none). */
static int open_sized(uint32_t nr_cpus, uint32_t max_slots,
		      const struct bpf_object_open_opts *opts,
		      struct switch_counter **out)
{
	struct switch_counter *skel = switch_counter__open_opts(opts);
	int err = skel ? 0 : -errno;

	if (!err) {
		skel->rodata->nr_cpus = nr_cpus;
		skel->rodata->ns_per_tick =
			1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
		skel->rodata->skip_tid = shpmu__bpf_skip_tid;
		skel->rodata->skip_every = shpmu__bpf_skip_every;
		err = bpf_map__set_max_entries(skel->maps.totals,
					       max_slots * nr_cpus);
	}
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cpu_views, nr_cpus);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cgroup_slots,
					       max_slots);
	if (err)
		switch_counter__destroy(skel);
	else
		*out = skel;
	return err;
}

static void shape_of(const struct bpf_map *m, struct map_shape *out)
{
	out->type = bpf_map__type(m);
	out->key_size = bpf_map__key_size(m);
	out->value_size = bpf_map__value_size(m);
	out->max_entries = bpf_map__max_entries(m);
	out->flags = bpf_map__map_flags(m);
}

int counter_prog_shapes(uint32_t nr_cpus, uint32_t max_slots,
			struct map_shape shapes[N_PROG_FDS],
			uint32_t *prog_type)
{
	struct switch_counter *s;
	int err = open_sized(nr_cpus, max_slots, NULL, &s);

	if (err)
		return err;
	memset(shapes, 0, sizeof(shapes[0]) * N_PROG_FDS);
	*prog_type = bpf_program__type(s->progs.on_switch);
	shape_of(s->maps.events, &shapes[EVENTS_FD]);
	shape_of(s->maps.cgroup_slots, &shapes[SLOTS_FD]);
	shape_of(s->maps.bss, &shapes[BSS_FD]);
	shape_of(s->maps.cpu_views, &shapes[VIEWS_FD]);
	shape_of(s->maps.totals, &shapes[TOTALS_FD]);
	shape_of(s->maps.task_links, &shapes[LINKS_FD]);
	shape_of(s->maps.task_totals, &shapes[TASK_TOTALS_FD]);
	switch_counter__destroy(s);
	return 0;
}

void counter_prog_skel_fds(const struct switch_counter *s, int fds[N_PROG_FDS])
{
	fds[PROG_FD] = bpf_program__fd(s->progs.on_switch);
	fds[EVENTS_FD] = bpf_map__fd(s->maps.events);
	fds[SLOTS_FD] = bpf_map__fd(s->maps.cgroup_slots);
	fds[BSS_FD] = bpf_map__fd(s->maps.bss);
	fds[VIEWS_FD] = bpf_map__fd(s->maps.cpu_views);
	fds[TOTALS_FD] = bpf_map__fd(s->maps.totals);
	fds[LINKS_FD] = bpf_map__fd(s->maps.task_links);
	fds[TASK_TOTALS_FD] = bpf_map__fd(s->maps.task_totals);
}

/* Passes the last lines of the kernel's log of a load to pmu's log. */
static void log_tail(struct shpmu *pmu, char *log)
{
	size_t len = strnlen(log, LOAD_LOG_SIZE - 1), start = len;
	int lines = 0;
	char *line, *save = NULL;

	log[len] = '\0';
	while (len && log[len - 1] == '\n')
		log[--len] = '\0';
	for (start = len; start > 0; start--)
		if (log[start - 1] == '\n' && ++lines == LOAD_LOG_LINES)
			break;
	for (line = strtok_r(log + start, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		pr_info(pmu, "BPF load: %s", line);
}

/* Logs why a load failed, with the end of the kernel's log (if any). */
static void tell_failure(struct shpmu *pmu, int err, char *log)
{
	bool have_log = log && log[0];
	/* A log longer than the buffer makes the kernel answer -ENOSPC,
	 * whatever it refused. */
	const char *why = err == -ENOSPC && have_log ? "refused by the kernel"
						     : strerror(-err);
	const char *needs =
		err == -EPERM ? "it needs CAP_BPF and CAP_PERFMON, or root"
			      : "the kernel refused it: it needs BTF, raw "
				"tracepoints, bpf_loop and bpf_rdonly_cast, "
				"from Linux 6.2";

	pr_info(pmu, "cannot load the BPF switch counter: %s (%s)%s", why,
		needs, have_log ? "; the end of the kernel's log:" : "");
	if (have_log)
		log_tail(pmu, log);
}

/* Opens the program sized for nr_cpus and max_slots and loads it into
 * the kernel: 0, or -errno logged with why. */
static int load(struct shpmu *pmu, uint32_t nr_cpus, uint32_t max_slots,
		struct switch_counter **out)
{
	char *log = calloc(1, LOAD_LOG_SIZE);
	LIBBPF_OPTS(bpf_object_open_opts, opts, .kernel_log_buf = log,
		    .kernel_log_size = log ? LOAD_LOG_SIZE : 0);
	struct switch_counter *skel = NULL;
	int err = open_sized(nr_cpus, max_slots, &opts, &skel);

	/* attach() picks the move hooks this kernel has. */
	if (!err) {
		bpf_program__set_autoattach(skel->progs.on_ipi, false);
		bpf_program__set_autoattach(skel->progs.on_attach, false);
		bpf_program__set_autoattach(skel->progs.on_tick, false);
		bpf_program__set_autoattach(skel->progs.find_kernel_fns, false);
		err = sys_bpf_skeleton_load(pmu, skel->skeleton);
	}
	if (err)
		tell_failure(pmu, err, log);
	free(log);
	if (err)
		switch_counter__destroy(skel);
	else
		*out = skel;
	return err;
}

/* Has the program find the function a move's IPI runs, so that other
 * IPIs count as plain checks, and the scheduler tick's, where a counted
 * run is settled (find_kernel_fns). Where the kernel has no such symbol,
 * every IPI may be a move, and the tick is a timer like any other: counts
 * stay exact, bounds grow. */
static int find_kernel_fns(struct shpmu *pmu, struct switch_counter *s)
{
	uint32_t retval;
	int err = sys_bpf_prog_test_run(
		pmu, bpf_program__fd(s->progs.find_kernel_fns), 0, 0, NULL, 0,
		&retval);

	if (err)
		pr_info(pmu,
			"cannot run the BPF switch counter's lookup of kernel "
			"functions: %s",
			strerror(-err));
	if (!err && !s->bss->move_ipi_fn)
		pr_debug(pmu, "BPF switch counter: no remote_function in this "
			      "kernel: every IPI is taken as a move");
	if (!err && !s->bss->tick_fn)
		pr_debug(pmu, "BPF switch counter: the scheduler tick's "
			      "function (tick_sched_timer, tick_nohz_handler) "
			      "not found: the tick settles as any timer does, "
			      "once a jiffy");
	return err;
}

/* Moves of a running task are settled where perf's cgroup controller
 * runs a function on the task's CPU (csd_function_entry, Linux 6.4); on
 * older kernels only the moves a task makes itself are (cgroup_attach_task
 * runs in the writer's context), and the rest at the task's next switch. */
static int attach_move_hook(struct shpmu *pmu, struct switch_counter *s,
			    bool ipi_hook)
{
	int err;

	/* A kernel without the tracepoint says ENOENT: the fallback. */
	if (ipi_hook) {
		err = sys_bpf_attach(pmu, s->progs.on_ipi, &s->links.on_ipi);
		if (!err) {
			s->bss->sees_moves = 1;
			return 0;
		}
		if (err != -ENOENT)
			return err;
	}
	err = sys_bpf_attach(pmu, s->progs.on_attach, &s->links.on_attach);
	if (err)
		return err;
	pr_info(pmu, "no csd_function_entry tracepoint here (Linux 6.4 "
		     "has it): a running task moved to another cgroup by "
		     "another process is counted in its new cgroup until it "
		     "next leaves its CPU");
	return 0;
}

/* The check that finds, within a tick, a switch the kernel made without
 * running the program (on_tick). Without it such a switch is found at the
 * CPU's next settle, and what it leaves unattributed may be larger. */
static int attach_tick_hook(struct shpmu *pmu, struct switch_counter *s)
{
	int err = sys_bpf_attach(pmu, s->progs.on_tick, &s->links.on_tick);

	if (err != -ENOENT)
		return err;
	pr_info(pmu, "no hrtimer_expire_entry tracepoint here: a context "
		     "switch the kernel hides from BPF is found at the CPU's "
		     "next settle, not within a tick");
	return 0;
}

/* Each online CPU's switch sequence (SWITCH_SEQ_ROW): a counting
 * context-switches event, which the kernel counts at every switch,
 * whether it runs the program there or not. The map holds each event:
 * its fd is closed at once. */
static int put_switch_sequences(struct shpmu *pmu, struct switch_counter *s)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
	};
	int map_fd = bpf_map__fd(s->maps.events), *online, fd, err = 0;
	int n = cpus_online(pmu, &online);

	if (n < 0)
		return n;
	for (int i = 0; i < n && !err; i++) {
		uint32_t index =
			SWITCH_SEQ_ROW * MAX_CPUS + (uint32_t)online[i];

		fd = sys_perf_event_open(pmu, &attr, -1, online[i], -1,
					 PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = fd;
			break;
		}
		err = sys_bpf_map_update(pmu, map_fd, &index, &fd, BPF_ANY);
		sys_close(pmu, fd);
	}
	free(online);
	if (err)
		pr_info(pmu,
			"cannot count the CPUs' context switches, which the "
			"BPF switch counter checks its own against: %s",
			strerror(-err));
	return err;
}

static int attach(struct shpmu *pmu, struct switch_counter *s, bool ipi_hook)
{
	/* The sequences first: the program counts by them from its first
	 * run. */
	int err = put_switch_sequences(pmu, s);

	if (!err)
		err = find_kernel_fns(pmu, s);
	if (err)
		return err; /* (each says why) */
	err = sys_bpf_attach(pmu, s->progs.on_switch, &s->links.on_switch);
	if (!err)
		err = sys_bpf_attach(pmu, s->progs.on_fork, &s->links.on_fork);
	if (!err)
		err = attach_move_hook(pmu, s, ipi_hook);
	if (!err)
		err = attach_tick_hook(pmu, s);
	if (err)
		pr_info(pmu,
			"cannot attach the BPF switch counter to its "
			"raw tracepoints: %s",
			strerror(-err));
	return err;
}

int counter_prog_cpus(struct shpmu *pmu)
{
	int n = cpus_possible_count(pmu);

	if (n > 0 && n <= MAX_CPUS)
		return n;
	pr_info(pmu,
		"the BPF backend handles up to %d CPUs, this machine may "
		"have %d",
		MAX_CPUS, n);
	return -EOPNOTSUPP;
}

int counter_prog_load_skel(struct shpmu *pmu, uint32_t nr_cpus,
			   uint32_t max_slots, bool ipi_hook,
			   struct switch_counter **skel)
{
	if (load(pmu, nr_cpus, max_slots, skel))
		return -EOPNOTSUPP;
	if (attach(pmu, *skel, ipi_hook)) {
		switch_counter__destroy(*skel);
		*skel = NULL;
		return -EOPNOTSUPP;
	}
	return 0;
}

void counter_prog_destroy_skel(struct switch_counter *skel)
{
	switch_counter__destroy(skel);
}

struct switch_counter__bss *
counter_prog_skel_bss(const struct switch_counter *skel)
{
	return skel->bss;
}
