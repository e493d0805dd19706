// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Every bad input gets its errno, a log line, and changes nothing. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "helpers.h"

static struct shpmu *pmu;
static int live, closed;

static void setup(void)
{
	SHPMU_OPTS(opts, .log = record_log);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target t = self_target();

	pmu = shpmu_new(&opts);
	cr_assert(pmu);
	live = shpmu_open(pmu, &a, &t);
	closed = shpmu_open(pmu, &a, &t);
	cr_assert_geq(live, 0);
	cr_assert_eq(shpmu_close(pmu, closed), 0);
	log_count = 0;
	last_log[0] = '\0';
}

static void teardown(void)
{
	shpmu_free(pmu);
}

static struct perf_event_attr good_attr(void)
{
	return sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
}

static int open_with(struct perf_event_attr a, struct shpmu_target t)
{
	return shpmu_open(pmu, &a, &t);
}

static int open_null_pmu(void)
{
	struct perf_event_attr a = good_attr();
	struct shpmu_target t = self_target();

	return shpmu_open(NULL, &a, &t);
}

static int open_null_attr(void)
{
	struct shpmu_target t = self_target();

	return shpmu_open(pmu, NULL, &t);
}

static int open_null_target(void)
{
	struct perf_event_attr a = good_attr();

	return shpmu_open(pmu, &a, NULL);
}

static int open_tiny_size(void)
{
	struct perf_event_attr a = good_attr();

	a.size = 8;
	return open_with(a, self_target());
}

static int open_unknown_tail(void)
{
	unsigned char buf[256] = {0};
	struct perf_event_attr a = good_attr();
	struct shpmu_target t = self_target();

	a.size = sizeof(buf);
	memcpy(buf, &a, sizeof(a));
	buf[200] = 1;
	return shpmu_open(pmu, (struct perf_event_attr *)buf, &t);
}

static int open_sampling(void)
{
	struct perf_event_attr a = good_attr();

	a.sample_period = 100000;
	return open_with(a, self_target());
}

static int open_freq(void)
{
	struct perf_event_attr a = good_attr();

	a.freq = 1;
	a.sample_freq = 1000;
	return open_with(a, self_target());
}

static int open_sigtrap(void)
{
	struct perf_event_attr a = good_attr();

	a.sigtrap = 1;
	return open_with(a, self_target());
}

static int open_unknown_kind(void)
{
	struct shpmu_target t = {.kind = (enum shpmu_target_kind)42};

	return open_with(good_attr(), t);
}

static int open_negative_pid(void)
{
	struct shpmu_target t = {
		.kind = SHPMU_TARGET_TASK, .pid = -3, .cpu = -1};

	return open_with(good_attr(), t);
}

static int open_task_bad_cpu(void)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_TASK, .cpu = -2};

	return open_with(good_attr(), t);
}

static int open_cpu_bad_cpu(void)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_CPU, .cpu = -5};

	return open_with(good_attr(), t);
}

static int open_cpu_out_of_range(void)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_CPU,
				 .cpu = 100000,
				 .flags = SHPMU_TARGET_BIND_CPU};

	return open_with(good_attr(), t);
}

static int open_cgroup(uint64_t id, const char *path, int cpu)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = cpu,
				 .cgroup_id = id,
				 .cgroup_path = path};

	return open_with(good_attr(), t);
}

static int open_cgroup_unnamed(void)
{
	return open_cgroup(0, NULL, SHPMU_ALL_CPUS);
}

static int open_cgroup_outside_root(void)
{
	return open_cgroup(0, "/tmp", SHPMU_ALL_CPUS);
}

static int open_cgroup_dotdot(void)
{
	return open_cgroup(0, "a/../..", SHPMU_ALL_CPUS);
}

static int open_cgroup_missing_path(void)
{
	return open_cgroup(0, "no/such/cgroup", SHPMU_ALL_CPUS);
}

static int open_cgroup_missing_id(void)
{
	return open_cgroup(0xdeadbeefull, NULL, SHPMU_ALL_CPUS);
}

static int open_cgroup_bad_cpu(void)
{
	return open_cgroup(0, "", -2);
}

/* A CPU that does not exist, opened disabled so that nothing but the open
 * could notice (the BPF backend reads no CPU until enabled). */
static int open_cgroup_offline_cpu(void)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = 5000,
				 .flags = SHPMU_TARGET_BIND_CPU,
				 .cgroup_path = ""};

	return open_with(a, t);
}

static int open_cpu_offline_cpu(void)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_CPU,
				 .cpu = 5000,
				 .flags = SHPMU_TARGET_BIND_CPU};

	return open_with(good_attr(), t);
}

static int open_task_offline_cpu(void)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_TASK,
				 .cpu = 5000,
				 .flags = SHPMU_TARGET_BIND_CPU};

	return open_with(good_attr(), t);
}

static int read_many_huge_n(void)
{
	struct shpmu_count c;

	return shpmu_read_many(pmu, &live, SIZE_MAX / sizeof(c) + 2, &c);
}

/* The cgroup root's cgroup.procs: a file, with an id of its own. */
static int cgroup_id_of_a_file(void)
{
	uint64_t id;

	return shpmu_cgroup_id(pmu, "cgroup.procs", &id);
}

static int cgroup_path_of_a_files_id(void)
{
	char root[PATH_MAX], path[PATH_MAX + 16], buf[PATH_MAX];
	struct stat st;

	cr_assert_eq(shpmu_cgroup_root(pmu, root, sizeof(root)), 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", root);
	cr_assert_eq(stat(path, &st), 0);
	return shpmu_cgroup_path(pmu, st.st_ino, buf, sizeof(buf));
}

static int cgroup_id_too_long(void)
{
	static char path[PATH_MAX + 100];
	uint64_t id;

	memset(path, 'a', sizeof(path) - 1);
	return shpmu_cgroup_id(pmu, path, &id);
}

static int cgroup_id_dotdot(void)
{
	uint64_t id;

	return shpmu_cgroup_id(pmu, "..", &id);
}

static int cgroup_id_null(void)
{
	return shpmu_cgroup_id(pmu, "", NULL);
}

static int cgroup_path_small_buffer(void)
{
	char buf[4];
	uint64_t id;

	cr_assert_eq(shpmu_cgroup_id(pmu, "", &id), 0);
	return shpmu_cgroup_path(pmu, id, buf, sizeof(buf));
}

static int cgroup_path_unknown_id(void)
{
	char buf[256];

	return shpmu_cgroup_path(pmu, 0xdeadbeefull, buf, sizeof(buf));
}

static int cgroup_root_small_buffer(void)
{
	char buf[2];

	return shpmu_cgroup_root(pmu, buf, sizeof(buf));
}

static int open_unknown_event(void)
{
	struct perf_event_attr a = good_attr();

	a.config = 1000; /* past PERF_COUNT_SW_MAX */
	return open_with(a, self_target());
}

static int open_no_such_task(void)
{
	struct shpmu_target t = {
		.kind = SHPMU_TARGET_TASK, .pid = 4000000, .cpu = -1};

	return open_with(good_attr(), t);
}

static int enable_made_up(void)
{
	return shpmu_enable(pmu, 12345);
}

static int enable_negative(void)
{
	return shpmu_enable(pmu, -1);
}

static int disable_closed(void)
{
	return shpmu_disable(pmu, closed);
}

static int reset_closed(void)
{
	return shpmu_reset(pmu, closed);
}

static int close_closed(void)
{
	return shpmu_close(pmu, closed);
}

static int read_closed(void)
{
	struct shpmu_count c;

	return shpmu_read(pmu, closed, &c);
}

static int read_huge_handle(void)
{
	struct shpmu_count c;

	return shpmu_read(pmu, 0x7fffffff, &c);
}

static int read_null_out(void)
{
	return shpmu_read(pmu, live, NULL);
}

static int read_cpu_null_out(void)
{
	return shpmu_read_cpu(pmu, live, -1, NULL);
}

static int read_cpu_not_spanned(void)
{
	struct shpmu_count c;

	return shpmu_read_cpu(pmu, live, 1, &c);
}

static int read_null_pmu(void)
{
	struct shpmu_count c;

	return shpmu_read(NULL, live, &c);
}

static int stats_null_out(void)
{
	return shpmu_get_stats(pmu, NULL);
}

static int close_null_pmu(void)
{
	return shpmu_close(NULL, live);
}

struct bad_case {
	int (*call)(void);
	int err;
	bool logs; /* whether a log line is due (no context: nowhere to log) */
};

static const struct bad_case cases[] = {
	{open_null_pmu, EINVAL, false},
	{open_null_attr, EINVAL, true},
	{open_null_target, EINVAL, true},
	{open_tiny_size, EINVAL, true},
	{open_unknown_tail, E2BIG, true},
	{open_sampling, EOPNOTSUPP, true},
	{open_freq, EOPNOTSUPP, true},
	{open_sigtrap, EOPNOTSUPP, true},
	{open_unknown_kind, EINVAL, true},
	{open_negative_pid, EINVAL, true},
	{open_task_bad_cpu, EINVAL, true},
	{open_cpu_bad_cpu, EINVAL, true},
	{open_cpu_out_of_range, EINVAL, true},
	{open_cgroup_unnamed, EINVAL, true},
	{open_cgroup_outside_root, EXDEV, true},
	{open_cgroup_dotdot, EINVAL, true},
	{open_cgroup_missing_path, ENOENT, true},
	{open_cgroup_missing_id, ENOENT, true},
	{open_cgroup_bad_cpu, EINVAL, true},
	{open_cgroup_offline_cpu, EINVAL, true},
	{open_cpu_offline_cpu, EINVAL, true},
	{open_task_offline_cpu, EINVAL, true},
	{read_many_huge_n, ENOMEM, true},
	{cgroup_id_of_a_file, ENOTDIR, true},
	{cgroup_path_of_a_files_id, ENOENT, true},
	{cgroup_id_too_long, ENAMETOOLONG, true},
	{cgroup_id_dotdot, EINVAL, true},
	{cgroup_id_null, EINVAL, true},
	{cgroup_path_small_buffer, ERANGE, true},
	{cgroup_path_unknown_id, ENOENT, true},
	{cgroup_root_small_buffer, ERANGE, true},
	{open_unknown_event, ENOENT, true},
	{open_no_such_task, ESRCH, true},
	{enable_made_up, EBADF, true},
	{enable_negative, EBADF, true},
	{disable_closed, EBADF, true},
	{reset_closed, EBADF, true},
	{close_closed, EBADF, true},
	{read_closed, EBADF, true},
	{read_huge_handle, EBADF, true},
	{read_null_out, EINVAL, true},
	{read_cpu_null_out, EINVAL, true},
	{read_cpu_not_spanned, ENOENT, true},
	{read_null_pmu, EINVAL, false},
	{stats_null_out, EINVAL, true},
	{close_null_pmu, EINVAL, false},
};

/* Case numbers, not pointers, cross into the test workers. */
ParameterizedTestParameters(bad_input, changes_nothing)
{
	static int idx[sizeof(cases) / sizeof(cases[0])];

	for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++)
		idx[i] = (int)i;
	return cr_make_param_array(int, idx, sizeof(idx) / sizeof(idx[0]));
}

ParameterizedTest(int *i, bad_input, changes_nothing, .init = setup,
		  .fini = teardown)
{
	const struct bad_case *c = &cases[*i];
	struct shpmu_stats before, after;
	struct shpmu_count c1, c2;
	int fds = count_fds(), ret;

	cr_assert_eq(shpmu_get_stats(pmu, &before), 0);
	cr_assert_eq(shpmu_read(pmu, live, &c1), 0);
	errno = 0;
	ret = c->call();
	cr_expect_eq(ret, -c->err, "case %d: returned %d (%s), wanted -%s", *i,
		     ret, strerror(-ret), strerror(c->err));
	cr_expect_eq(errno, c->err, "case %d: errno %d", *i, errno);
	if (c->logs)
		cr_expect_gt(log_count, 0, "case %d logged nothing", *i);
	cr_assert_eq(shpmu_get_stats(pmu, &after), 0);
	cr_expect_eq(memcmp(&before, &after, sizeof(before)), 0,
		     "case %d changed the stats", *i);
	cr_expect_eq(count_fds(), fds, "case %d changed the fd count", *i);
	burn_cpu_ns(1000000);
	cr_assert_eq(shpmu_read(pmu, live, &c2), 0);
	cr_expect_gt(c2.value, c1.value, "case %d broke a live handle", *i);
}

Test(bad_input, open_errors_say_why, .init = setup, .fini = teardown)
{
	cr_assert_eq(open_sampling(), -EOPNOTSUPP);
	cr_expect(strstr(last_log, "sampling"), "log: %s", last_log);
	cr_assert_eq(open_unknown_event(), -ENOENT);
	cr_expect(strstr(last_log, "does not have that event"), "log: %s",
		  last_log);
	cr_assert_eq(enable_made_up(), -EBADF);
	cr_expect(strstr(last_log, "12345 is not an open handle"), "log: %s",
		  last_log);
}

Test(bad_input, a_stale_handle_stays_stale_after_its_slot_is_reused,
     .init = setup, .fini = teardown)
{
	struct perf_event_attr a = good_attr();
	struct shpmu_target t = self_target();
	struct shpmu_count c;

	/* Far more open/close cycles than there are slots in a chunk, so the
	 * stale handle's slot is handed out again under a new generation. */
	for (int i = 0; i < 5000; i++) {
		int h = shpmu_open(pmu, &a, &t);

		cr_assert_geq(h, 0);
		cr_assert_neq(h, closed);
		cr_assert_eq(shpmu_close(pmu, h), 0);
		cr_assert_eq(shpmu_read(pmu, closed, &c), -EBADF);
	}
}

static int new_errno(const struct shpmu_opts *o)
{
	struct shpmu *p;

	errno = 0;
	p = shpmu_new(o);
	if (p) {
		shpmu_free(p);
		return 0;
	}
	return errno;
}

Test(bad_input, shpmu_new_refuses_malformed_opts)
{
	SHPMU_OPTS(unknown_flag, .flags = 1u << 30);
	SHPMU_OPTS(unknown_backend, .cgroup_backend = 9);
	struct shpmu_opts zero_sz = {0};
	struct {
		struct shpmu_opts o;
		char future[16];
	} newer = {.o = {.sz = sizeof(newer)}};

	cr_expect_eq(new_errno(&unknown_flag), EINVAL);
	cr_expect_eq(new_errno(&unknown_backend), EINVAL);
	cr_expect_eq(new_errno(&zero_sz), EINVAL);
	/* A newer caller's extra fields are fine while zero... */
	cr_expect_eq(new_errno(&newer.o), 0);
	/* ...and refused once set: we cannot honour them. */
	newer.future[3] = 1;
	cr_expect_eq(new_errno(&newer.o), EINVAL);
	cr_expect_eq(new_errno(NULL), 0);
}

Test(bad_input, an_older_callers_smaller_opts_work)
{
	struct shpmu_opts old = {.sz = offsetof(struct shpmu_opts, cgroup_root),
				 .flags = SHPMU_F_NO_SHARING};
	struct perf_event_attr a = good_attr();
	struct shpmu_target t = self_target();
	struct shpmu_stats st;
	struct shpmu *p = shpmu_new(&old);

	cr_assert(p);
	cr_assert_geq(shpmu_open(p, &a, &t), 0);
	cr_assert_geq(shpmu_open(p, &a, &t), 0);
	shpmu_get_stats(p, &st);
	cr_expect_eq(st.kernel_events, 2, "the flag within sz was honoured");
	shpmu_free(p);
	shpmu_free(NULL);
}
