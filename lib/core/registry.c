// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/registry.h"

#include <errno.h>
#include <stdlib.h>

#include "core/kevent.h"

#define REGISTRY_MIN_BUCKETS 64

int registry_init(struct registry *reg)
{
	reg->buckets = calloc(REGISTRY_MIN_BUCKETS, sizeof(*reg->buckets));
	if (!reg->buckets)
		return -ENOMEM;
	reg->nbuckets = REGISTRY_MIN_BUCKETS;
	reg->count = 0;
	return 0;
}

void registry_fini(struct registry *reg)
{
	free(reg->buckets);
	reg->buckets = NULL;
}

struct kevent *registry_find(const struct registry *reg,
			     const struct share_key *key, uint64_t hash)
{
	struct kevent *ev = reg->buckets[hash & (reg->nbuckets - 1)];

	for (; ev; ev = ev->next)
		if (ev->hash == hash && share_key_equal(&ev->key, key))
			return ev;
	return NULL;
}

static void grow(struct registry *reg)
{
	size_t n = reg->nbuckets * 2;
	struct kevent **b = calloc(n, sizeof(*b));

	if (!b)
		return;
	for (size_t i = 0; i < reg->nbuckets; i++) {
		while (reg->buckets[i]) {
			struct kevent *ev = reg->buckets[i];

			reg->buckets[i] = ev->next;
			ev->next = b[ev->hash & (n - 1)];
			b[ev->hash & (n - 1)] = ev;
		}
	}
	free(reg->buckets);
	reg->buckets = b;
	reg->nbuckets = n;
}

void registry_insert(struct registry *reg, struct kevent *ev)
{
	struct kevent **head;

	if (reg->count >= reg->nbuckets)
		grow(reg);
	head = &reg->buckets[ev->hash & (reg->nbuckets - 1)];
	ev->next = *head;
	*head = ev;
	ev->registered = true;
	reg->count++;
}

void registry_remove(struct registry *reg, struct kevent *ev)
{
	struct kevent **p = &reg->buckets[ev->hash & (reg->nbuckets - 1)];

	while (*p != ev)
		p = &(*p)->next;
	*p = ev->next;
	ev->next = NULL;
	ev->registered = false;
	reg->count--;
}
