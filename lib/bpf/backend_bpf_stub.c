// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The BPF backend where libshpmu was built without it. */
#include "bpf/backend_bpf.h"

#include <errno.h>
#include <stdbool.h>

#include "core/log.h"

uint32_t shpmu__bpf_max_slots;
bool shpmu__bpf_no_ipi_hook;

int bpf_backend_new(struct shpmu *pmu, struct backend **out)
{
	(void)out;
	pr_info(pmu, "the BPF cgroup backend was not built (no clang, "
		     "bpftool, libbpf or /sys/kernel/btf/vmlinux at build "
		     "time)");
	return -EOPNOTSUPP;
}

int bpf_backend_join(struct shpmu *pmu, const char *bpffs_dir,
		     const char *domain, struct backend **out)
{
	(void)bpffs_dir;
	(void)domain;
	return bpf_backend_new(pmu, out);
}

bool bpf_backend_counts(const struct share_key *key)
{
	(void)key;
	return false;
}

bool bpf_backend_is_host(const struct backend *b)
{
	(void)b;
	return false;
}

void bpf_backend_free(struct shpmu *pmu, struct backend *b)
{
	(void)pmu;
	(void)b;
}

void bpf_backend_counters(const struct backend *b,
			  struct bpf_backend_counters *out)
{
	(void)b;
	*out = (struct bpf_backend_counters){0};
}
