/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Pinned objects are input from whoever can write the domain's directory:
 * a pin is opened without following a symlink, must belong to the
 * domain's owner, and must be the kind of object this build pinned there
 * before anything reads it.
 */
#ifndef SHPMU_PIN_CHECK_H
#define SHPMU_PIN_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct shpmu;

/* What a pinned map must be: its type, sizes and flags as made. */
struct map_shape {
	uint32_t type; /* enum bpf_map_type */
	uint32_t key_size, value_size, max_entries, flags;
};

/* The BPF object pinned as name in the directory dir_fd (dir: its path,
 * for messages). A symlink, or anything that is not a BPF object owned by
 * owner, is refused. Returns its fd, or -errno with a message. */
int pin_get(struct shpmu *pmu, int dir_fd, const char *dir, const char *name,
	    uid_t owner);

/* 0 when fd is a map of shape want, else -EPROTO with a message naming
 * the pin (dir/name). */
int pin_check_map(struct shpmu *pmu, const char *dir, const char *name, int fd,
		  const struct map_shape *want);

/* 0 when fd is a program of type prog_type named prog_name that uses
 * each of the nmaps maps behind map_fds, else -EPROTO with a message
 * naming the pin. */
int pin_check_prog(struct shpmu *pmu, const char *dir, const char *name, int fd,
		   uint32_t prog_type, const char *prog_name,
		   const int *map_fds, size_t nmaps);

/* 0 when fd is a link of link_type that runs the program behind prog_fd
 * (-1: any program), else -EPROTO with a message naming the pin. */
int pin_check_link(struct shpmu *pmu, const char *dir, const char *name, int fd,
		   uint32_t link_type, int prog_fd);

#endif
