// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the PMU model (-Dpmu_model=true builds). The input's
 * first byte picks a spec (or, with its top bit, the rest up to a NUL is
 * a spec for the strict parser); then 3-byte ops open, close, enable,
 * disable, reset, read and advance the manual clock. After each op the
 * model must agree with itself: running <= enabled, count = rate x
 * running since the last reset, groups on whole or not at all, no more
 * counters in use than exist.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/pmu_model.h"
#include "sys/sys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FDS 48

struct ev {
	int fd, leader; /* leader: index, or -1 */
	uint64_t base;	/* running at the last reset */
	uint64_t rate;
};

static const struct shpmu_sys_ops *M;
static struct ev evs[MAX_FDS];
static int nev;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "pmu model: %s\n", what);
		abort();
	}
}

static struct pmu_model_truth truth(int i)
{
	struct pmu_model_truth t;

	check(shpmu__pmu_model_truth(evs[i].fd, &t) == 0, "truth");
	return t;
}

static void invariants(unsigned int slots)
{
	for (int i = 0; i < nev; i++) {
		struct pmu_model_truth t = truth(i), l;

		check(t.time_running <= t.time_enabled, "running > enabled");
		check(t.value == evs[i].rate * (t.time_running - evs[i].base),
		      "count != rate x running");
		if (evs[i].leader < 0)
			continue;
		l = truth(evs[i].leader);
		if (t.state == PMU_MODEL_RUNNING)
			check(l.state == PMU_MODEL_RUNNING,
			      "member without leader");
		if (l.state == PMU_MODEL_RUNNING && t.state != PMU_MODEL_OFF)
			check(t.state == PMU_MODEL_RUNNING, "group split");
	}
	for (uint32_t type = PMU_MODEL_TYPE_FIRST;
	     type < PMU_MODEL_TYPE_FIRST + PMU_MODEL_MAX_PMUS; type++)
		for (int cpu = -1; cpu < 4; cpu++) {
			int n = shpmu__pmu_model_counters_in_use(type, cpu);

			check(n == -EINVAL ||
				      (n >= 0 && (unsigned int)n <= slots),
			      "counters in use");
		}
}

static void forget(int i)
{
	check(M->close(evs[i].fd, M->arg) == 0, "close");
	for (int j = 0; j < nev; j++)
		if (evs[j].leader == i)
			evs[j].leader = -1; /* detached: a group of its own */
	for (int j = 0; j < nev; j++)
		if (evs[j].leader > i)
			evs[j].leader--;
	memmove(&evs[i], &evs[i + 1], (size_t)(nev - i - 1) * sizeof(evs[0]));
	nev--;
}

static void open_one(const uint8_t *op)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.read_format =
			PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING |
			(op[2] & 1 ? PERF_FORMAT_GROUP | PERF_FORMAT_ID : 0),
		.pinned = !!(op[2] & 0x40),
		.exclusive = !!(op[2] & 0x20),
		.disabled = !!(op[2] & 0x10),
	};
	int leader = -1, cpu = (op[1] >> 4) % 3 - 1, fd;

	if (op[0] & 0x10) {
		a.type = PERF_TYPE_HARDWARE;
		a.config = op[1] % 10;
	} else {
		a.type = PERF_TYPE_RAW;
		a.config = (uint64_t)(op[2] >> 1 & 3) << 32 | (op[1] & 7);
	}
	if (op[2] & 0x80 && nev) {
		leader = op[1] % nev;
		if (evs[leader].leader >= 0)
			leader = evs[leader].leader;
		a.pinned = a.exclusive = 0;
	}
	fd = M->perf_event_open(&a, cpu < 0 ? 0 : -1, cpu,
				leader < 0 ? -1 : evs[leader].fd,
				PERF_FLAG_FD_CLOEXEC, M->arg);
	if (fd < 0)
		return;
	evs[nev++] = (struct ev){
		.fd = fd, .leader = leader, .rate = pmu_model_rate(&a)};
}

static void one_op(const uint8_t *op)
{
	int i = nev ? op[1] % nev : -1;
	uint64_t buf[3 + 3 * 40];
	ssize_t n;

	switch (op[0] % 8) {
	case 0:
		if (nev < MAX_FDS)
			open_one(op);
		break;
	case 1:
		if (i >= 0)
			forget(i);
		break;
	case 2:
	case 3:
		if (i >= 0)
			M->ioctl(evs[i].fd,
				 op[0] % 8 == 2 ? PERF_EVENT_IOC_ENABLE
						: PERF_EVENT_IOC_DISABLE,
				 op[2] & 1 ? PERF_IOC_FLAG_GROUP : 0, M->arg);
		break;
	case 4:
		/* Resets only the fd's own count (no group flag). */
		if (i >= 0 &&
		    !M->ioctl(evs[i].fd, PERF_EVENT_IOC_RESET, 0, M->arg))
			evs[i].base = truth(i).time_running;
		break;
	case 5:
		if (i >= 0) {
			n = M->read(evs[i].fd, buf, (size_t)op[2] * 8, M->arg);
			check(n >= 0 || errno == ENOSPC, "read");
		}
		break;
	default:
		shpmu__pmu_model_advance((uint64_t)op[1] << (op[2] % 24));
	}
}

static const char *const specs[] = {
	"counters=2,fixed=0,rotate_ms=1,clock=manual",
	"counters=3,fixed=3,rotate_ms=2,clock=manual,watchdog=1",
	"hybrid=core:2+atom:1,fixed=1,rotate_ms=1,clock=manual",
	"counters=1,fixed=2,rotate_ms=3,clock=manual",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int slots;

	if (!size)
		return 0;
	if (data[0] & 0x80) {
		/* The parser alone: a spec it takes must configure. */
		char spec[256];
		size_t n = size - 1 < sizeof(spec) - 1 ? size - 1
						       : sizeof(spec) - 1;
		int err;

		memcpy(spec, data + 1, n);
		spec[n] = '\0';
		err = shpmu__pmu_model_configure(spec);

		check(err == 0 || err == -EINVAL, "configure");
		return 0;
	}
	check(shpmu__pmu_model_configure(specs[data[0] % 4]) == 0, "spec");
	M = pmu_model_ops();
	check(M != NULL, "ops");
	/* General plus fixed counters of the spec's biggest PMU. */
	slots = (unsigned int[]){2, 6, 3, 3}[data[0] % 4];
	for (size_t at = 1; at + 3 <= size; at += 3) {
		one_op(data + at);
		invariants(slots);
	}
	while (nev)
		forget(nev - 1);
	check(shpmu__pmu_model_events_open() == 0, "events left");
	return 0;
}
