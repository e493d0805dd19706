// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What the BPF programs on the switch path cost: their run time and runs
 * from the kernel's bpf stats, over a ping-pong's round trips. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

const char *const library_prog[] = {"on_trigger", "on_switch", NULL};

#ifdef HAVE_HOST_SCOPE
#include <bpf/bpf.h>

static bool named(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(name, *names))
			return true;
	return false;
}

/* Whether this process holds program id: another process on the machine
 * may have loaded one of the same name (the tests do). */
static bool held_here(uint32_t id)
{
	DIR *d = opendir("/proc/self/fdinfo");
	char path[300], line[128];
	struct dirent *de;
	bool held = false;

	while (d && !held && (de = readdir(d))) {
		unsigned int v;
		FILE *fi;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s",
			 de->d_name);
		fi = fopen(path, "re");
		if (!fi)
			continue;
		while (fgets(line, sizeof(line), fi))
			if (sscanf(line, "prog_id: %u", &v) == 1 && v == id)
				held = true;
		fclose(fi);
	}
	if (d)
		closedir(d);
	return held;
}

/* An fd of the program named one of names, this process's first, the
 * newest of them first; -1 if none. */
static int find_prog(const char *const *names, char *name)
{
	uint32_t id = 0, best = 0;
	bool best_held = false;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {0};
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);
		bool ok, held = false;

		if (fd < 0)
			continue;
		ok = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
		     named(info.name, names);
		close(fd); /* before held_here, which would see it */
		if (ok && ((held = held_here(id)) || !best_held)) {
			best = id;
			best_held = held;
			snprintf(name, 16, "%s", info.name);
		}
	}
	return best ? bpf_prog_get_fd_by_id(best) : -1;
}

static bool prog_stats(int fd, uint64_t *ns, uint64_t *runs)
{
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return false;
	*ns = info.run_time_ns;
	*runs = info.run_cnt;
	return true;
}

void prog_cost_start(struct prog_cost *c, const char *const *names)
{
	c->prog = find_prog(names, c->name);
	c->stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (c->prog >= 0 && c->stats >= 0 &&
	    !prog_stats(c->prog, &c->ns0, &c->runs0))
		c->runs0 = UINT64_MAX;
}

void prog_cost_stop(struct prog_cost *c, int rep)
{
	uint64_t ns = 0, runs = 0;

	c->ns[rep] = c->runs[rep] = -1;
	if (c->prog >= 0 && c->stats >= 0 && c->runs0 != UINT64_MAX &&
	    prog_stats(c->prog, &ns, &runs)) {
		c->runs[rep] = (double)(runs - c->runs0) / ROUND_TRIPS;
		c->ns[rep] = runs > c->runs0 ? (double)(ns - c->ns0) /
						       (double)(runs - c->runs0)
					     : 0;
	}
	if (c->stats >= 0)
		close(c->stats); /* stats off again when no one holds them */
	if (c->prog >= 0)
		close(c->prog);
}
#else
void prog_cost_start(struct prog_cost *c, const char *const *names)
{
}

void prog_cost_stop(struct prog_cost *c, int rep)
{
	c->ns[rep] = c->runs[rep] = -1;
}
#endif

void prog_cost_pair(struct prog_cost *c, int rep, const char *const *names,
		    const char *ping_cgroup, const char *pong_cgroup)
{
	struct pair p;

	pair_start(&p, ping_cgroup, pong_cgroup);
	prog_cost_start(c, names);
	if (pair_run(&p) < 0)
		c->runs0 = UINT64_MAX;
	prog_cost_stop(c, rep);
}

void prog_cost_note(struct figure *f, const struct prog_cost *c)
{
	struct figure ns, runs;
	size_t len = strlen(f->note);

	figure_set(&ns, c->ns, REPS);
	figure_set(&runs, c->runs, REPS);
	if (ns.min < 0) {
		snprintf(f->note + len, sizeof(f->note) - len,
			 "%sno run time of the program (bpf stats)",
			 len ? "; " : "");
		return;
	}
	if (runs.median == 0) {
		snprintf(f->note + len, sizeof(f->note) - len,
			 "%s%s did not run", len ? "; " : "", c->name);
		return;
	}
	f->ns_per_run = ns.median;
	snprintf(f->note + len, sizeof(f->note) - len,
		 "%s%s %.0f ns/run (%.0f-%.0f), %.3g runs a round trip",
		 len ? "; " : "", c->name, ns.median, ns.min, ns.max,
		 runs.median);
}
