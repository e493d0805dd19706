// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/registry.h"

#include "core/kevent.h"

#define REGISTRY_MIN_BUCKETS 64

int registry_init(struct registry *reg)
{
	return hashtab_init(&reg->events, REGISTRY_MIN_BUCKETS);
}

void registry_fini(struct registry *reg)
{
	hashtab_fini(&reg->events);
}

struct kevent *registry_find(const struct registry *reg,
			     const struct share_key *key, uint64_t hash)
{
	for (struct hash_node *n = hashtab_first(&reg->events, hash); n;
	     n = hash_next(n->next, hash)) {
		struct kevent *ev = hash_entry(n, struct kevent, node);

		if (share_key_equal(&ev->key, key))
			return ev;
	}
	return NULL;
}

void registry_insert(struct registry *reg, struct kevent *ev)
{
	/* The table has its buckets from registry_init(): this cannot
	 * fail (a table that cannot grow gets longer chains). */
	(void)hashtab_insert(&reg->events, &ev->node, ev->node.hash);
	ev->registered = true;
}

void registry_remove(struct registry *reg, struct kevent *ev)
{
	hashtab_remove(&reg->events, &ev->node);
	ev->registered = false;
}
