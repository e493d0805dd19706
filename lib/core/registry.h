/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The sharing registry: kernel events by sharing key, in O(1). All calls
 * are made under the context lock. */
#ifndef SHPMU_REGISTRY_H
#define SHPMU_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "core/hashtab.h"
#include "core/key.h"

struct kevent;

struct registry {
	struct hashtab events; /* kevents by share_key_hash() */
};

int registry_init(struct registry *reg);
/* Frees the table, not the events. */
void registry_fini(struct registry *reg);

struct kevent *registry_find(const struct registry *reg,
			     const struct share_key *key, uint64_t hash);
/* Never fails: when the table cannot grow, chains just get longer. */
void registry_insert(struct registry *reg, struct kevent *ev);
void registry_remove(struct registry *reg, struct kevent *ev);

#endif
