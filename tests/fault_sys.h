/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A syscall layer (shpmu__set_sys_ops) that does what the kernel does,
 * except that it fails the call a test names: the nth of one kind, or of
 * any kind, with an errno or a short read; and, on request, meets every
 * call once with EINTR first. It keeps a record of what it saw.
 */
#ifndef SHPMU_TEST_FAULT_SYS_H
#define SHPMU_TEST_FAULT_SYS_H

#include <stdbool.h>

#include "sys/sys.h"

enum fault_kind {
	FAULT_OPEN,	 /* perf_event_open */
	FAULT_READ,	 /* a read of a perf fd */
	FAULT_FILE_READ, /* a read of a /proc or /sys file */
	FAULT_IOCTL,
	FAULT_CLOSE,  /* fails after closing, as Linux does */
	FAULT_OPENAT, /* openat and openat2 */
	FAULT_HANDLE, /* name_to_handle_at and open_by_handle_at */
	FAULT_FS,     /* mkdirat, unlinkat, fstatat, statx, statfs, fstatfs,
			 fchmod, readlinkat, getdents64 */
	FAULT_LOCK,   /* flock and fcntl's locks */
	FAULT_UNLOCK, /* the same, letting go (LOCK_UN, F_UNLCK) */
	FAULT_MMAP,
	FAULT_MUNMAP,	/* fails after unmapping, as close does */
	FAULT_PROC,	/* pidfd_open, capget, getrlimit */
	FAULT_BPF,	/* bpf(2) */
	FAULT_BPF_LOAD, /* bpf_object__load_skeleton, bpf_program__attach */
	FAULT_ANY,	/* for fault_fail(): a call of any kind */
};

/* In place of an errno: the read returns half of what it read. */
#define FAULT_SHORT_READ (-1)
#define FAULT_MAX_CALLS	 512

struct fault_state {
	/* The plan. */
	enum fault_kind kind;
	int nth; /* 1-based, among calls of kind; 0: fail nothing */
	int err; /* an errno, or FAULT_SHORT_READ */
	bool eintr_first;
	/* The record. */
	int calls, calls_of[FAULT_ANY];
	enum fault_kind kinds[FAULT_MAX_CALLS + 1]; /* of each call */
	/* Whether each call looks something up (a path, a pin, a map
	 * entry, a tracepoint): the calls that can fail with ENOENT. */
	bool lookups[FAULT_MAX_CALLS + 1];
	bool fired;
	enum fault_kind fired_kind;
	bool fired_lookup;	   /* the failed call was a lookup */
	int resets;		   /* PERF_EVENT_IOC_RESET ioctls */
	int opens_without_cloexec; /* perf_event_open without the flag */
	bool eintr_pending;
};

extern struct fault_state fault;
extern const struct shpmu_sys_ops fault_sys;

/* Forgets plan and record. */
void fault_reset(void);
/* Fails the nth call of kind (FAULT_ANY: of any kind) from now on with
 * err, counting calls afresh. */
void fault_fail(enum fault_kind kind, int nth, int err);
/* Fails nothing more. */
void fault_stop(void);

#endif
