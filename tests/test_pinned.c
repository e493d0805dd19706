// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Events that cannot go on, on the PMU model: a pinned event without a
 * counter is in error state (its read(2) returns 0 bytes) and its handle
 * says so with -ENODATA, never a zero, until an enable brings it back; an
 * exclusive group that cannot be alone stays off. And shpmu_explain.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "helpers.h"
#include "model_twin.h"

#define MS 1000000ull

static struct shpmu *pmu;

static void teardown(void)
{
	if (pmu)
		model_context_free(pmu);
	pmu = NULL;
}

TestSuite(pinned, .fini = teardown);

static struct perf_event_attr pinned_attr(uint64_t config)
{
	struct perf_event_attr a = hw_attr(config, false);

	a.pinned = 1;
	return a;
}

/* One counter: a second pinned event cannot have it. */
Test(pinned, error_state_is_enodata_until_an_enable_brings_it_back)
{
	struct perf_event_attr a = pinned_attr(0), b = pinned_attr(1);
	struct shpmu_target self = self_target();
	struct shpmu_count c = {.value = 12345}, many[2];
	struct pmu_model_truth truth;
	struct twin tb;
	char text[1024];
	int ha, hs[2];

	pmu = model_context("counters=1,fixed=0,clock=manual", 0);
	ha = shpmu_open(pmu, &a, &self);
	cr_assert_geq(ha, 0);
	shpmu__pmu_model_advance(2 * MS);
	hs[1] = shpmu_open(pmu, &b, &self);
	tb = twin_of(pmu, hs[1], model_opens[1].fd, true);
	truth = model_truth(tb.fd);
	cr_assert_eq(truth.state, PMU_MODEL_ERROR, "no counter for it");
	shpmu__pmu_model_advance(2 * MS);

	cr_expect_eq(shpmu_read(pmu, tb.h, &c), -ENODATA);
	cr_expect_eq(errno, ENODATA);
	cr_expect_eq(c.value, 12345, "out untouched");
	cr_expect(strstr(last_log, "error state") && strstr(last_log, "pinned"),
		  "the log says what happened: %s", last_log);
	cr_expect(strstr(last_log, "shpmu_enable"), "and what to do: %s",
		  last_log);
	cr_expect_eq(shpmu_read_cpu(pmu, tb.h, -1, &c), -ENODATA);
	hs[0] = ha, hs[1] = tb.h;
	cr_expect_eq(shpmu_read_many(pmu, hs, 2, many), -ENODATA);
	cr_expect_eq(shpmu_reset(pmu, tb.h), -ENODATA);
	cr_assert_eq(shpmu_read(pmu, ha, &c), 0, "the other event reads");
	cr_expect_eq(c.time_running, 4 * MS);

	cr_assert_eq(shpmu_explain(pmu, tb.h, -ENODATA, text, sizeof(text)), 0);
	cr_expect(strstr(text, "error state") && strstr(text, "pinned") &&
			  strstr(text, "shpmu_enable"),
		  "explained: %s", text);
	cr_expect(!strstr(text, "watchdog holds"), "no watchdog: %s", text);

	/* Counters still taken: the enable tries, and says so. */
	cr_expect_eq(shpmu_enable(pmu, tb.h), -ENODATA);
	cr_expect_eq(model_truth(tb.fd).state, PMU_MODEL_ERROR);
	/* Freed: the enable brings it back, and it counts from there. */
	cr_assert_eq(shpmu_close(pmu, ha), 0);
	shpmu__pmu_model_advance(MS);
	cr_expect_eq(model_truth(tb.fd).state, PMU_MODEL_ERROR,
		     "the kernel leaves it in error state by itself");
	cr_assert_eq(shpmu_enable(pmu, tb.h), 0);
	cr_expect_eq(model_truth(tb.fd).state, PMU_MODEL_RUNNING);
	shpmu__pmu_model_advance(3 * MS);
	cr_assert_eq(shpmu_read(pmu, tb.h, &c), 0);
	struct shpmu_count want = twin_expect(&tb);
	expect_count(&c, &want, "after the way back", 6);
	cr_expect_geq(c.time_running, 3 * MS, "counted since the enable");
	cr_expect_eq(shpmu_scale(&c), 2 * c.time_enabled);
}

/* A handle can always be disabled: in error state its window closes at
 * its last reading; enabled again later, it comes back. */
Test(pinned, a_handle_in_error_state_can_be_disabled_and_enabled)
{
	struct perf_event_attr a = pinned_attr(0), b = pinned_attr(1);
	struct shpmu_target self = self_target();
	struct shpmu_count c;
	int ha, hb;

	pmu = model_context("counters=1,fixed=0,clock=manual", 0);
	ha = shpmu_open(pmu, &a, &self);
	hb = shpmu_open(pmu, &b, &self);
	cr_assert(ha >= 0 && hb >= 0);
	shpmu__pmu_model_advance(MS);
	cr_expect_eq(shpmu_disable(pmu, hb), 0);
	cr_expect_eq(shpmu_read(pmu, hb, &c), 0, "a disabled handle reads");
	cr_expect_eq(c.value, 0);
	cr_expect_eq(shpmu_enable(pmu, hb), -ENODATA, "still no counter");
	cr_expect_eq(shpmu_read(pmu, hb, &c), 0, "and stays disabled");
	cr_assert_eq(shpmu_close(pmu, ha), 0);
	cr_assert_eq(shpmu_enable(pmu, hb), 0);
	shpmu__pmu_model_advance(MS);
	cr_assert_eq(shpmu_read(pmu, hb, &c), 0);
	cr_expect_eq(c.time_running, MS);
	cr_expect_eq(c.value, 2 * MS);
}

/* A pinned group that does not fit: its members are in error state with
 * it. */
Test(pinned, a_pinned_group_in_error_state)
{
	struct perf_event_attr g[2] = {pinned_attr(0), hw_attr(1, false)};
	struct perf_event_attr other = pinned_attr(3);
	struct shpmu_target self = self_target();
	struct shpmu_count out[2];
	int h;

	pmu = model_context("counters=2,fixed=0,clock=manual", 0);
	cr_assert_geq(shpmu_open(pmu, &other, &self), 0);
	h = shpmu_open_group(pmu, g, 2, &self);
	cr_assert_geq(h, 0);
	shpmu__pmu_model_advance(MS);
	cr_expect_eq(shpmu_read_group(pmu, h, out, 2), -ENODATA);
	cr_expect(strstr(last_log, "a group"), "log: %s", last_log);
}

/* The NMI watchdog holds the only counter. */
Test(pinned, the_explanation_names_the_watchdog)
{
	struct perf_event_attr a = pinned_attr(0);
	struct shpmu_target self = self_target();
	struct shpmu_count c;
	char text[1024];
	int h;

	pmu = model_context("counters=1,fixed=0,watchdog=1,clock=manual", 0);
	h = shpmu_open(pmu, &a, &self);
	cr_assert_geq(h, 0);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, -1),
		     1, "the watchdog's");
	cr_expect_eq(shpmu_read(pmu, h, &c), -ENODATA);
	cr_assert_eq(shpmu_explain(pmu, h, -ENODATA, text, sizeof(text)), 0);
	cr_expect(strstr(text, "NMI watchdog holds one") &&
			  strstr(text, "nmi_watchdog"),
		  "explained: %s", text);
}

/* An exclusive group goes on only alone: beside a pinned event it never
 * runs, and reads as enabled, not running, scaled to 0. */
Test(pinned, an_exclusive_group_that_cannot_be_alone_stays_off)
{
	struct perf_event_attr p = pinned_attr(0), e = hw_attr(1, false);
	struct shpmu_target self = self_target();
	struct shpmu_count c;
	int h;

	e.exclusive = 1;
	pmu = model_context("counters=4,fixed=0,rotate_ms=4,clock=manual", 0);
	cr_assert_geq(shpmu_open(pmu, &p, &self), 0);
	h = shpmu_open(pmu, &e, &self);
	cr_assert_geq(h, 0);
	for (int ms = 1; ms <= 20; ms++) {
		shpmu__pmu_model_advance(MS);
		cr_assert_eq(shpmu_read(pmu, h, &c), 0);
		cr_expect_eq(c.time_enabled, (uint64_t)ms * MS);
		cr_expect_eq(c.time_running, 0);
		cr_expect_eq(c.value, 0);
		cr_expect_eq(shpmu_scale(&c), 0);
	}
}

Test(pinned, explain_other_errors_and_bad_arguments)
{
	struct perf_event_attr a = hw_attr(0, false);
	struct shpmu_target self = self_target();
	char text[1024], small[8] = "keep";
	int h;

	pmu = model_context("counters=2,fixed=0,clock=manual", 0);
	h = shpmu_open(pmu, &a, &self);
	cr_assert_geq(h, 0);
	cr_assert_eq(shpmu_explain(pmu, -1, -EBUSY, text, sizeof(text)), 0);
	cr_expect(strstr(text, "SHPMU_OPEN_NO_MULTIPLEX"), "%s", text);
	cr_assert_eq(shpmu_explain(pmu, -1, -EACCES, text, sizeof(text)), 0);
	cr_expect(strstr(text, "perf_event_paranoid"), "%s", text);
	cr_assert_eq(shpmu_explain(pmu, -1, -EMFILE, text, sizeof(text)), 0);
	cr_expect(strstr(text, "RLIMIT_NOFILE"), "%s", text);
	cr_assert_eq(shpmu_explain(pmu, -1, -ENOENT, text, sizeof(text)), 0);
	cr_expect(strstr(text, "no such event"), "%s", text);
	cr_assert_eq(shpmu_explain(pmu, h, -ENOENT, text, sizeof(text)), 0);
	cr_expect(strstr(text, "does not count that CPU"), "%s", text);
	cr_assert_eq(shpmu_explain(pmu, -1, -ENOSYS, text, sizeof(text)), 0);
	cr_expect_str_eq(text, strerror(ENOSYS));

	cr_expect_eq(shpmu_explain(NULL, h, -ENODATA, text, sizeof(text)),
		     -EINVAL);
	cr_expect_eq(shpmu_explain(pmu, h, -ENODATA, NULL, 10), -EINVAL);
	cr_expect_eq(shpmu_explain(pmu, h, -ENODATA, text, 0), -EINVAL);
	cr_expect_eq(shpmu_explain(pmu, h, 0, text, sizeof(text)), -EINVAL);
	cr_expect_eq(shpmu_explain(pmu, h, ENODATA, text, sizeof(text)),
		     -EINVAL);
	cr_expect_eq(shpmu_explain(pmu, -2, -ENODATA, text, sizeof(text)),
		     -EINVAL);
	cr_expect_eq(shpmu_explain(pmu, h + 1, -ENODATA, text, sizeof(text)),
		     -EBADF);
	cr_expect_eq(shpmu_explain(pmu, h, -ENODATA, small, sizeof(small)),
		     -ERANGE);
	cr_expect_str_eq(small, "keep", "too small: nothing written");
	cr_expect_eq(errno, ERANGE);
	/* The text and its NUL exactly fit, one byte less does not. */
	cr_assert_eq(shpmu_explain(pmu, -1, -EBUSY, text, sizeof(text)), 0);
	size_t n = strlen(text);
	cr_expect_eq(shpmu_explain(pmu, -1, -EBUSY, text, n), -ERANGE);
	cr_expect_eq(shpmu_explain(pmu, -1, -EBUSY, text, n + 1), 0);
	cr_expect_eq(strlen(text), n);
}
