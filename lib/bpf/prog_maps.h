/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the switch counter's lifecycle (prog_lifecycle.c) asks of the file
 * that makes the backend's bpf(2) calls (prog_maps.c): the maps' memory
 * mapped and given back, and a test-run of the program on one CPU.
 */
#ifndef SHPMU_PROG_MAPS_H
#define SHPMU_PROG_MAPS_H

#include <stdint.h>

#include "bpf/counter_prog.h"

/* Maps the memory of the maps behind views_fd and totals_fd (and bss_fd
 * when >= 0) into p, and checks that it fits p->nr_cpus and
 * p->max_slots. 0, or -errno with p's mappings NULL. */
int prog_map_memory(struct shpmu *pmu, struct counter_prog *p, int bss_fd,
		    int views_fd, int totals_fd);
/* Gives back what prog_map_memory mapped. */
void prog_unmap_memory(struct counter_prog *p);

/* Test-runs the program behind p->prog_fd on cpu with the ctx_size bytes
 * at ctx as its arguments, its return value into *retval: 0, or -errno
 * (-ENXIO: cpu is offline). */
int prog_run_on_cpu(const struct counter_prog *p, int cpu, const void *ctx,
		    uint32_t ctx_size, uint32_t *retval);

#endif
