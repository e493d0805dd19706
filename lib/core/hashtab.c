// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/hashtab.h"

#include <errno.h>
#include <stdlib.h>

int hashtab_init(struct hashtab *t, size_t min_buckets)
{
	t->count = 0;
	t->nbuckets = min_buckets;
	t->buckets = NULL;
	if (!min_buckets)
		return 0;
	t->buckets = calloc(min_buckets, sizeof(*t->buckets));
	return t->buckets ? 0 : -ENOMEM;
}

void hashtab_fini(struct hashtab *t)
{
	free(t->buckets);
	t->buckets = NULL;
	t->nbuckets = t->count = 0;
}

/* Moves every element into twice the buckets (or the first 64). */
static int grow(struct hashtab *t)
{
	size_t n = t->nbuckets ? t->nbuckets * 2 : 64;
	struct hash_node **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < t->nbuckets; i++) {
		while (t->buckets[i]) {
			struct hash_node *e = t->buckets[i];

			t->buckets[i] = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
	return 0;
}

int hashtab_insert(struct hashtab *t, struct hash_node *n, uint64_t hash)
{
	struct hash_node **head;

	if (t->count >= t->nbuckets && grow(t) && !t->nbuckets)
		return -ENOMEM;
	n->hash = hash;
	head = &t->buckets[hash & (t->nbuckets - 1)];
	n->next = *head;
	*head = n;
	t->count++;
	return 0;
}

void hashtab_remove(struct hashtab *t, struct hash_node *n)
{
	struct hash_node **p = &t->buckets[n->hash & (t->nbuckets - 1)];

	while (*p != n)
		p = &(*p)->next;
	*p = n->next;
	n->next = NULL;
	t->count--;
}

void hashtab_drain(struct hashtab *t, void (*drop)(struct hash_node *n))
{
	for (size_t i = 0; i < t->nbuckets; i++) {
		while (t->buckets[i]) {
			struct hash_node *e = t->buckets[i];

			t->buckets[i] = e->next;
			t->count--;
			drop(e);
		}
	}
}
