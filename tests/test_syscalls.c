// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Through the syscall boundary: EINTR is retried, a failing kernel call
 * leaves everything as it was, and the library never resets a shared fd. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/ioctl.h>

#include "fault_sys.h"
#include "helpers.h"

static struct shpmu *pmu;

static void setup(void)
{
	fault_reset();
	pmu = shpmu_new(NULL);
	cr_assert(pmu);
	shpmu__set_sys_ops(pmu, &fault_sys);
}

static void teardown(void)
{
	shpmu_free(pmu);
	cr_expect_eq(count_perf_fds(), 0);
	cr_expect_eq(fault.resets, 0, "the library reset a kernel event");
	cr_expect_eq(fault.opens_without_cloexec, 0);
}

TestSuite(syscalls, .init = setup, .fini = teardown);

static struct shpmu_stats stats(void)
{
	struct shpmu_stats st;

	shpmu_get_stats(pmu, &st);
	return st;
}

Test(syscalls, eintr_is_retried_never_reported)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct shpmu_count c;
	int h;

	fault.eintr_first = true;
	h = shpmu_open(pmu, &a, &all);
	cr_assert_geq(h, 0, "%s", strerror(-h));
	cr_expect_eq(shpmu_enable(pmu, h), 0);
	burn_cpu_ns(5000000);
	cr_expect_eq(shpmu_read(pmu, h, &c), 0);
	cr_expect_gt(c.value, 0);
	cr_expect_eq(shpmu_disable(pmu, h), 0);
	cr_expect_eq(shpmu_reset(pmu, h), 0);
	cr_expect_eq(shpmu_close(pmu, h), 0);
}

Test(syscalls, a_failed_open_on_the_last_cpu_leaks_nothing)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, false);
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct shpmu_stats before = stats();
	int fds = count_fds();

	fault_fail(FAULT_OPEN, online_cpus(), EMFILE);
	cr_expect_eq(shpmu_open(pmu, &a, &all), -EMFILE);
	cr_expect_eq(count_fds(), fds);
	struct shpmu_stats now = stats();

	cr_expect_eq(memcmp(&before, &now, sizeof(before)), 0);
	fault_fail(FAULT_OPENAT, 1, EACCES);
	cr_expect_eq(shpmu_open(pmu, &a, &all), -EACCES,
		     "the online-CPU list could not be read");
	cr_expect_eq(count_fds(), fds);
	fault_stop();
	cr_expect_geq(shpmu_open(pmu, &a, &all), 0, "works once faults stop");
}

Test(syscalls, a_failed_enable_leaves_the_handle_disabled)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	struct shpmu_target self = self_target();
	struct shpmu_count c;
	int h = shpmu_open(pmu, &a, &self);

	cr_assert_geq(h, 0);
	fault_fail(FAULT_IOCTL, 1, EBUSY);
	cr_expect_eq(shpmu_enable(pmu, h), -EBUSY);
	burn_cpu_ns(5000000);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	cr_expect_eq(c.value, 0, "a handle whose enable failed counted");
	fault_fail(FAULT_READ, 1, EIO);
	cr_expect_eq(shpmu_enable(pmu, h), -EIO, "base reading failed");
	fault_stop();
	cr_expect_eq(shpmu_enable(pmu, h), 0);
	burn_cpu_ns(5000000);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	/* One-sided: the burn is 5 ms of CLOCK_THREAD_CPUTIME_ID, which
	 * task-clock (it also counts stolen time) never falls below; 1 ms
	 * off for the clock's granularity at the window's edges. */
	cr_expect_gt(c.value, 4000000);
}

Test(syscalls, a_failed_enable_on_one_cpu_is_undone_on_the_others)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct timespec nap = {0, 5000000};
	struct shpmu_count c;
	int h = shpmu_open(pmu, &a, &all);

	if (online_cpus() < 2)
		cr_skip_test("needs two online CPUs, this machine has %d",
			     online_cpus());
	cr_assert_geq(h, 0);
	fault_fail(FAULT_IOCTL, 2, ENOMEM);
	cr_expect_eq(shpmu_enable(pmu, h), -ENOMEM);
	fault_stop();
	/* The first CPU's fd was enabled, then must have been disabled
	 * again: the kernel's own times for it stand still. */
	uint64_t v0[3], v1[3];
	int first = nth_perf_fd(0);
	cr_assert_geq(first, 0);
	raw_read(first, v0);
	nanosleep(&nap, NULL); /* (time passing is what is measured) */
	raw_read(first, v1);
	cr_expect_eq(v1[1], v0[1], "cpu %d's kernel event kept running", 0);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	cr_expect_eq(c.value, 0);
	cr_expect_eq(c.time_enabled, 0);
}

Test(syscalls, a_failed_disable_leaves_the_handle_enabled)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target self = self_target();
	struct shpmu_count c1, c2;
	int h = shpmu_open(pmu, &a, &self);

	cr_assert_geq(h, 0);
	fault_fail(FAULT_IOCTL, 1, EBUSY);
	cr_expect_eq(shpmu_disable(pmu, h), -EBUSY);
	fault_stop();
	cr_assert_eq(shpmu_read(pmu, h, &c1), 0);
	burn_cpu_ns(5000000);
	cr_assert_eq(shpmu_read(pmu, h, &c2), 0);
	/* One-sided, as above: 5 ms of the thread's own CPU clock. */
	cr_expect_gt(c2.value, c1.value + 4000000, "still counting");
	cr_expect_eq(shpmu_disable(pmu, h), 0);
}

Test(syscalls, failed_and_short_reads_are_errors_that_lose_nothing)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_PAGE_FAULTS, false);
	struct shpmu_target self = self_target();
	int raw = raw_open(PERF_COUNT_SW_PAGE_FAULTS, 0, -1);
	struct shpmu_count c, before;
	uint64_t v[3];
	int h;

	uint64_t r0[3];

	raw_enable(raw);
	h = shpmu_open(pmu, &a, &self);
	cr_assert_geq(h, 0);
	touch_pages(100);
	cr_assert_eq(shpmu_read(pmu, h, &before), 0);
	raw_read(raw, r0);
	touch_pages(100);
	fault_fail(FAULT_READ, 1, EIO);
	cr_expect_eq(shpmu_read(pmu, h, &c), -EIO);
	touch_pages(100);
	fault_stop();
	fault_fail(FAULT_READ, 1, FAULT_SHORT_READ);
	c.value = 12345;
	cr_expect_eq(shpmu_read(pmu, h, &c), -EIO);
	cr_expect_eq(c.value, 12345, "out untouched on failure");
	fault_stop();
	touch_pages(100);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	raw_read(raw, v);
	/* Both saw the same faults since their readings before the
	 * failures: none was lost or counted twice. */
	/* (valgrind faults too, translating code between the readings) */
	int64_t diff =
		(int64_t)(v[0] - r0[0]) - (int64_t)(c.value - before.value);
	cr_expect_leq(diff < 0 ? -diff : diff, under_valgrind ? 4 : 0,
		      "handle moved %llu, raw fd %llu",
		      (unsigned long long)(c.value - before.value),
		      (unsigned long long)(v[0] - r0[0]));
	/* 300 fresh pages touched: at least 300 faults (exact above). */
	cr_expect_geq(c.value - before.value, 300);
	close(raw);
}

Test(syscalls, a_failed_reset_changes_nothing)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_PAGE_FAULTS, false);
	struct shpmu_target self = self_target();
	struct shpmu_count c;
	int h = shpmu_open(pmu, &a, &self);

	cr_assert_geq(h, 0);
	touch_pages(100);
	fault_fail(FAULT_READ, 1, EIO);
	cr_expect_eq(shpmu_reset(pmu, h), -EIO);
	fault_stop();
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	/* 100 fresh pages: at least 100 faults, whatever else faulted. */
	cr_expect_geq(c.value, 100, "the failed reset dropped the count");
}
