// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The process's PMU model: configuring it, and the syscall table whose
 * calls on model fds and model files it serves (everything else goes to
 * the kernel's table). One model per process, guarded by one mutex
 * (lock): every call of the table and of the test hooks takes it, so the
 * model's state (pm) is only ever touched under it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cpus.h"
#include "sys/pmu_model_int.h"
#include "sys/sys.h"

struct pm_model pm;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Set once a call configured or switched off the model: the
 * environment is not read after that. */
static bool configured_by_call;
static struct shpmu_sys_ops ops;

/* The online CPUs, and which PMU each belongs to. 0 or -errno. */
static int set_cpus(struct pm_model *m)
{
	int *online, n = cpus_online(NULL, &online), first;

	if (n < 0)
		return n;
	if (n == 0) {
		free(online);
		return -ENODEV;
	}
	m->ncpus = online[n - 1] + 1;
	m->online = calloc((size_t)m->ncpus, sizeof(*m->online));
	m->pmu_of_cpu = calloc((size_t)m->ncpus, sizeof(*m->pmu_of_cpu));
	if (!m->online || !m->pmu_of_cpu) {
		free(online);
		return -ENOMEM;
	}
	/* Hybrid: the first half of the online CPUs (at least one) are
	 * cores, the rest atoms; offline CPUs count as the PMU of the
	 * online CPU before them. */
	first = n / 2 ? n / 2 : 1;
	for (int i = 0; i < n; i++)
		m->online[online[i]] = true;
	for (int c = 0, below = 0; c < m->ncpus; c++) {
		bool atom = m->online[c] ? below++ >= first : below > first;

		m->pmu_of_cpu[c] = m->cfg.npmus > 1 && atom;
	}
	free(online);
	return 0;
}

static void drop(struct pm_model *m)
{
	free(m->online);
	free(m->pmu_of_cpu);
	free(m->domains);
	free(m->by_fd);
	memset(m, 0, sizeof(*m));
}

/* A new model from a config, replacing pm (no events are open). */
static int start(const struct pm_config *cfg)
{
	struct pm_model m = {.on = true, .cfg = *cfg};
	struct timespec ts;
	size_t n;
	int err = set_cpus(&m);

	if (err) {
		drop(&m);
		return err;
	}
	n = (size_t)cfg->npmus * (size_t)(m.ncpus + 1);
	m.domains = calloc(n, sizeof(*m.domains));
	if (!m.domains) {
		drop(&m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		m.domains[i].pmu = (unsigned int)(i / (size_t)(m.ncpus + 1));
		m.domains[i].cpu = (int)(i % (size_t)(m.ncpus + 1)) - 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	m.epoch = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	drop(&pm);
	pm = m;
	/* The watchdog's counter, taken before any event opens. */
	for (size_t i = 0; i < n; i++)
		pm_domain_schedule(&pm.domains[i]);
	return 0;
}

int shpmu__pmu_model_configure(const char *spec)
{
	struct pm_config cfg;
	int err = pm_spec_parse(spec, &cfg);

	if (err)
		return err;
	pthread_mutex_lock(&lock);
	err = pm.nevents ? -EBUSY : start(&cfg);
	if (!err)
		configured_by_call = true;
	pthread_mutex_unlock(&lock);
	return err;
}

int shpmu__pmu_model_off(void)
{
	int err = 0;

	pthread_mutex_lock(&lock);
	if (pm.nevents) {
		err = -EBUSY;
	} else {
		drop(&pm);
		configured_by_call = true;
	}
	pthread_mutex_unlock(&lock);
	return err;
}

void shpmu__pmu_model_advance(uint64_t ns)
{
	pthread_mutex_lock(&lock);
	if (pm.on && pm.cfg.manual) {
		pm.manual_now = ns > UINT64_MAX - pm.manual_now
					? UINT64_MAX
					: pm.manual_now + ns;
		pm_catch_up();
	}
	pthread_mutex_unlock(&lock);
}

int shpmu__pmu_model_truth(int fd, struct pmu_model_truth *t)
{
	struct pm_event *e;
	int err = -EBADF;

	pthread_mutex_lock(&lock);
	e = pm.on ? pm_event_of_fd(fd) : NULL;
	if (e) {
		pm_catch_up();
		t->value = e->value;
		t->time_enabled = e->time_enabled;
		t->time_running = e->time_running;
		t->state = e->st == PM_ERROR ? PMU_MODEL_ERROR
			   : e->st == PM_OFF ? PMU_MODEL_OFF
			   : e->on	     ? PMU_MODEL_RUNNING
					     : PMU_MODEL_WAITING;
		t->pmu_type = PMU_MODEL_TYPE_FIRST + e->dom->pmu;
		t->cpu = e->dom->cpu;
		err = 0;
	}
	pthread_mutex_unlock(&lock);
	return err;
}

int shpmu__pmu_model_counters_in_use(uint32_t type, int cpu)
{
	int ret = -EINVAL;

	pthread_mutex_lock(&lock);
	if (pm.on && pm_is_model_type(type) && cpu >= -1 && cpu < pm.ncpus &&
	    (cpu < 0 || (pm.online[cpu] &&
			 pm.pmu_of_cpu[cpu] == type - PMU_MODEL_TYPE_FIRST))) {
		pm_catch_up();
		ret = (int)pm_domain_in_use(
			pm_domain_of(type - PMU_MODEL_TYPE_FIRST, cpu));
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

unsigned int shpmu__pmu_model_events_open(void)
{
	unsigned int n;

	pthread_mutex_lock(&lock);
	n = pm.nevents;
	pthread_mutex_unlock(&lock);
	return n;
}

/* The table ----------------------------------------------------------- */

static int model_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				 int cpu, int group_fd, unsigned long flags,
				 void *arg)
{
	int ret;

	(void)arg;
	if (!attr) {
		errno = EFAULT;
		return -1;
	}
	pthread_mutex_lock(&lock);
	ret = pm.on ? pm_event_open(attr, pid, cpu, group_fd, flags)
		    : shpmu_sys_kernel.perf_event_open(attr, pid, cpu, group_fd,
						       flags, NULL);
	pthread_mutex_unlock(&lock);
	return ret;
}

static ssize_t model_read(int fd, void *buf, size_t len, void *arg)
{
	struct pm_event *e;
	ssize_t ret;

	pthread_mutex_lock(&lock);
	e = pm_event_of_fd(fd);
	if (e) {
		pm_catch_up();
		ret = pm_event_read(e, buf, len);
	}
	pthread_mutex_unlock(&lock);
	return e ? ret : shpmu_sys_kernel.read(fd, buf, len, arg);
}

static int model_ioctl(int fd, unsigned long request, unsigned long val,
		       void *arg)
{
	struct pm_event *e;
	int ret;

	pthread_mutex_lock(&lock);
	e = pm_event_of_fd(fd);
	if (e)
		ret = pm_event_ioctl(e, request, val);
	pthread_mutex_unlock(&lock);
	return e ? ret : shpmu_sys_kernel.ioctl(fd, request, val, arg);
}

static int model_close(int fd, void *arg)
{
	struct pm_event *e;
	int ret;

	pthread_mutex_lock(&lock);
	e = pm_event_of_fd(fd);
	if (e)
		pm_event_close(e);
	/* Still under the lock: the number must not be reused for a new
	 * model event before it is free. */
	ret = shpmu_sys_kernel.close(fd, arg);
	pthread_mutex_unlock(&lock);
	return ret;
}

/* path's model file opened, or the kernel's answer. */
static int open_path(int dirfd, const char *path, int flags, bool *served)
{
	int fd = -1, ret = 0;

	*served = false;
	if (path && path[0] == '/') {
		pthread_mutex_lock(&lock);
		if (pm.on)
			ret = pm_fs_open(path, flags, &fd);
		pthread_mutex_unlock(&lock);
	}
	(void)dirfd;
	if (ret == 0)
		return 0;
	*served = true;
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return fd;
}

static int model_openat(int dirfd, const char *path, int flags, void *arg)
{
	bool served;
	int fd = open_path(dirfd, path, flags, &served);

	return served ? fd : shpmu_sys_kernel.openat(dirfd, path, flags, arg);
}

static int model_openat2(int dirfd, const char *path, struct open_how *how,
			 size_t size, void *arg)
{
	bool served = false;
	int fd = how ? open_path(dirfd, path, (int)how->flags, &served) : 0;

	return served ? fd
		      : shpmu_sys_kernel.openat2(dirfd, path, how, size, arg);
}

static int model_fstatat(int dirfd, const char *path, struct stat *st,
			 int flags, void *arg)
{
	int ret = 0;

	if (path && path[0] == '/') {
		pthread_mutex_lock(&lock);
		if (pm.on)
			ret = pm_fs_stat(path, st);
		pthread_mutex_unlock(&lock);
	}
	return ret ? 0 : shpmu_sys_kernel.fstatat(dirfd, path, st, flags, arg);
}

static int model_statx(int dirfd, const char *path, int flags,
		       unsigned int mask, struct statx *stx, void *arg)
{
	int ret = 0;

	if (path && path[0] == '/') {
		pthread_mutex_lock(&lock);
		if (pm.on)
			ret = pm_fs_statx(path, mask, stx);
		pthread_mutex_unlock(&lock);
	}
	return ret ? 0
		   : shpmu_sys_kernel.statx(dirfd, path, flags, mask, stx, arg);
}

/* The kernel's table with the model's calls in it. */
static void fill_ops(void)
{
	ops = shpmu_sys_kernel;
	ops.perf_event_open = model_perf_event_open;
	ops.read = model_read;
	ops.ioctl = model_ioctl;
	ops.close = model_close;
	ops.openat = model_openat;
	ops.openat2 = model_openat2;
	ops.fstatat = model_fstatat;
	ops.statx = model_statx;
	ops.arg = NULL;
}

/* SHPMU_PMU_MODEL, read once, unless a call configured the model first.
 * A bad spec there leaves the model off, and says so. */
static void from_env(void)
{
	const char *spec = secure_getenv("SHPMU_PMU_MODEL");
	struct pm_config cfg;

	fill_ops();
	pthread_mutex_lock(&lock);
	if (spec && !configured_by_call) {
		int err = pm_spec_parse(spec, &cfg);

		if (!err)
			err = start(&cfg);
		if (err)
			fprintf(stderr,
				"libshpmu: SHPMU_PMU_MODEL='%s': %s; the "
				"model stays off\n",
				spec, strerror(-err));
	}
	pthread_mutex_unlock(&lock);
}

const struct shpmu_sys_ops *pmu_model_ops(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	bool on;

	pthread_once(&once, from_env);
	pthread_mutex_lock(&lock);
	on = pm.on;
	pthread_mutex_unlock(&lock);
	return on ? &ops : NULL;
}
