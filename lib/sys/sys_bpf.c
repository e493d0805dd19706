// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpf(2) through the syscall layer (sys.h): one op for every command, the
 * commands the library uses built on it, and libbpf's load of an object.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef HAVE_BPF
#include <bpf/libbpf.h>
#endif

#include "sys/sys.h"
#include "sys/sys_kernel.h"

int kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size, void *arg)
{
	(void)arg;
	return (int)syscall(SYS_bpf, cmd, attr, size);
}

int kernel_bpf_skeleton_load(struct bpf_object_skeleton *skel, void *arg)
{
	(void)arg;
#ifdef HAVE_BPF
	int err = bpf_object__load_skeleton(skel);

	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
#else
	(void)skel;
	errno = EOPNOTSUPP;
	return -1;
#endif
}

struct bpf_link *kernel_bpf_attach(struct bpf_program *prog, void *arg)
{
	(void)arg;
#ifdef HAVE_BPF
	return bpf_program__attach(prog);
#else
	(void)prog;
	errno = EOPNOTSUPP;
	return NULL;
#endif
}

int sys_bpf(struct shpmu *pmu, int cmd, union bpf_attr *attr, unsigned int size)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	int ret;

	do
		ret = ops->bpf(cmd, attr, size, ops->arg);
	while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

static uint64_t ptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

int sys_bpf_map_lookup(struct shpmu *pmu, int fd, const void *key, void *value)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = ptr(key);
	attr.value = ptr(value);
	return sys_bpf(pmu, BPF_MAP_LOOKUP_ELEM, &attr, sizeof(attr));
}

int sys_bpf_map_update(struct shpmu *pmu, int fd, const void *key,
		       const void *value, uint64_t flags)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = ptr(key);
	attr.value = ptr(value);
	attr.flags = flags;
	return sys_bpf(pmu, BPF_MAP_UPDATE_ELEM, &attr, sizeof(attr));
}

int sys_bpf_map_delete(struct shpmu *pmu, int fd, const void *key)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = ptr(key);
	return sys_bpf(pmu, BPF_MAP_DELETE_ELEM, &attr, sizeof(attr));
}

int sys_bpf_map_next_key(struct shpmu *pmu, int fd, const void *key, void *next)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = ptr(key);
	attr.next_key = ptr(next);
	return sys_bpf(pmu, BPF_MAP_GET_NEXT_KEY, &attr, sizeof(attr));
}

int sys_bpf_map_create(struct shpmu *pmu, uint32_t type, const char *name,
		       uint32_t key_size, uint32_t value_size,
		       uint32_t max_entries, uint32_t flags)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = type;
	attr.key_size = key_size;
	attr.value_size = value_size;
	attr.max_entries = max_entries;
	attr.map_flags = flags;
	if (name)
		strncpy(attr.map_name, name, sizeof(attr.map_name) - 1);
	return sys_bpf(pmu, BPF_MAP_CREATE, &attr, sizeof(attr));
}

int sys_bpf_obj_get(struct shpmu *pmu, const char *path)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = ptr(path);
	return sys_bpf(pmu, BPF_OBJ_GET, &attr, sizeof(attr));
}

int sys_bpf_obj_pin(struct shpmu *pmu, int fd, const char *path)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = ptr(path);
	attr.bpf_fd = (uint32_t)fd;
	return sys_bpf(pmu, BPF_OBJ_PIN, &attr, sizeof(attr));
}

int sys_bpf_obj_info(struct shpmu *pmu, int fd, void *info, uint32_t *len)
{
	union bpf_attr attr;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = *len;
	attr.info.info = ptr(info);
	err = sys_bpf(pmu, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr));
	if (!err)
		*len = attr.info.info_len;
	return err;
}

int sys_bpf_prog_test_run(struct shpmu *pmu, int prog_fd, uint32_t flags,
			  uint32_t cpu, const void *ctx_in, uint32_t ctx_size,
			  uint32_t *retval)
{
	union bpf_attr attr;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)prog_fd;
	attr.test.flags = flags;
	attr.test.cpu = cpu;
	attr.test.ctx_in = ptr(ctx_in);
	attr.test.ctx_size_in = ctx_size;
	err = sys_bpf(pmu, BPF_PROG_TEST_RUN, &attr, sizeof(attr));
	if (!err)
		*retval = attr.test.retval;
	return err;
}

int sys_bpf_raw_tp_open(struct shpmu *pmu, const char *name, int prog_fd)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.name = ptr(name);
	attr.raw_tracepoint.prog_fd = (uint32_t)prog_fd;
	return sys_bpf(pmu, BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr));
}

int sys_bpf_skeleton_load(struct shpmu *pmu, struct bpf_object_skeleton *skel)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	/* Not retried: libbpf retries what it can itself. */
	return ops->bpf_skeleton_load(skel, ops->arg) < 0 ? -errno : 0;
}

int sys_bpf_attach(struct shpmu *pmu, struct bpf_program *prog,
		   struct bpf_link **link)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	do
		*link = ops->bpf_attach(prog, ops->arg);
	while (!*link && errno == EINTR);
	return *link ? 0 : -errno;
}
