// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "model_twin.h"

#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"
#include "sys/sys.h"

struct model_open model_opens[MODEL_MAX_OPENS];
int model_nopens;
static struct shpmu_sys_ops recorder;

static int record_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		       int group_fd, unsigned long flags, void *arg)
{
	int fd = pmu_model_ops()->perf_event_open(attr, pid, cpu, group_fd,
						  flags, arg);

	if (fd >= 0 && model_nopens < MODEL_MAX_OPENS)
		model_opens[model_nopens++] =
			(struct model_open){.fd = fd,
					    .cpu = cpu,
					    .group_fd = group_fd,
					    .attr = *attr};
	return fd;
}

struct shpmu *model_context(const char *spec, unsigned int flags)
{
	SHPMU_OPTS(opts, .log = record_log, .flags = flags);
	struct shpmu *pmu;
	int err = shpmu__pmu_model_configure(spec);

	cr_assert_eq(err, 0, "model spec %s: %s", spec, strerror(-err));
	cr_assert(pmu_model_ops(), "the model is configured");
	recorder = *pmu_model_ops();
	recorder.perf_event_open = record_open;
	model_nopens = 0;
	shpmu__sys_ops_at_new = &recorder;
	pmu = shpmu_new(&opts);
	cr_assert(pmu, "shpmu_new on the model: %s", strerror(errno));
	log_count = 0;
	return pmu;
}

void model_context_free(struct shpmu *pmu)
{
	shpmu_free(pmu);
	shpmu__sys_ops_at_new = NULL;
	cr_expect_eq(shpmu__pmu_model_events_open(), 0,
		     "every model event closed with the context");
	cr_expect_eq(shpmu__pmu_model_off(), 0);
}

struct perf_event_attr hw_attr(uint64_t config, bool disabled)
{
	return (struct perf_event_attr){
		.size = sizeof(struct perf_event_attr),
		.type = PERF_TYPE_HARDWARE,
		.config = config,
		.disabled = disabled,
	};
}

struct pmu_model_truth model_truth(int fd)
{
	struct pmu_model_truth t;
	struct perf_event_attr a = {.config = 0};

	cr_assert_eq(shpmu__pmu_model_truth(fd, &t), 0,
		     "fd %d is a model "
		     "event",
		     fd);
	for (int i = 0; i < model_nopens; i++)
		if (model_opens[i].fd == fd)
			a = model_opens[i].attr;
	cr_assert_eq(t.value, pmu_model_rate(&a) * t.time_running,
		     "the model's law on fd %d: %llu events in %llu ns", fd,
		     (unsigned long long)t.value,
		     (unsigned long long)t.time_running);
	return t;
}

struct twin twin_of(struct shpmu *pmu, int h, int fd, bool on)
{
	struct twin t = {.pmu = pmu, .h = h, .fd = fd, .on = on};

	cr_assert_geq(h, 0, "open: %s", strerror(-h));
	t.base = model_truth(fd);
	return t;
}

static void add_delta(struct shpmu_count *c, const struct pmu_model_truth *a,
		      const struct pmu_model_truth *b)
{
	c->value += b->value - a->value;
	c->time_enabled += b->time_enabled - a->time_enabled;
	c->time_running += b->time_running - a->time_running;
}

void twin_enable(struct twin *t)
{
	cr_assert_eq(shpmu_enable(t->pmu, t->h), 0);
	if (!t->on)
		t->base = model_truth(t->fd);
	t->on = true;
}

void twin_disable(struct twin *t)
{
	struct pmu_model_truth now;

	cr_assert_eq(shpmu_disable(t->pmu, t->h), 0);
	if (t->on) {
		now = model_truth(t->fd);
		add_delta(&t->acc, &t->base, &now);
	}
	t->on = false;
}

void twin_reset(struct twin *t)
{
	cr_assert_eq(shpmu_reset(t->pmu, t->h), 0);
	t->acc = (struct shpmu_count){0};
	t->base = model_truth(t->fd);
}

struct shpmu_count twin_expect(const struct twin *t)
{
	struct shpmu_count c = t->acc;
	struct pmu_model_truth now;

	if (t->on) {
		now = model_truth(t->fd);
		add_delta(&c, &t->base, &now);
	}
	return c;
}

void expect_count(const struct shpmu_count *got, const struct shpmu_count *want,
		  const char *what, int step)
{
	cr_expect(got->value == want->value &&
			  got->time_enabled == want->time_enabled &&
			  got->time_running == want->time_running,
		  "%s at %d ms: got %llu events, %llu/%llu ns (running/"
		  "enabled), want %llu, %llu/%llu",
		  what, step, (unsigned long long)got->value,
		  (unsigned long long)got->time_running,
		  (unsigned long long)got->time_enabled,
		  (unsigned long long)want->value,
		  (unsigned long long)want->time_running,
		  (unsigned long long)want->time_enabled);
}
