/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A BPF filesystem of the test's own, for host-scope tests and walks. */
#ifndef SHPMU_TEST_BPFFS_MOUNT_H
#define SHPMU_TEST_BPFFS_MOUNT_H

/* Moves the test into a mount namespace of its own and mounts a BPF
 * filesystem there (its processes share it; nothing outside sees it).
 * host_bpffs() is the directory the helpers use, under that mount. */
void host_fs_setup(void);
/* Raises the default bound on lock waits where SHPMU_TEST_VALGRIND says
 * every process runs under valgrind (host_fs_setup calls it). */
void host_slow_locks_under_valgrind(void);
/* Asserts that nothing is left under host_bpffs(), then unmounts. */
void host_fs_teardown(void);
const char *host_bpffs(void);
/* Every path under host_bpffs(), one per line ("" when empty). */
const char *host_residue(void);

#endif
