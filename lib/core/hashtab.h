/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The hash table every lookup of the library uses: chained, intrusive (an
 * element embeds a struct hash_node and is found by its 64-bit hash), a
 * power of two of buckets, doubled once there are as many elements as
 * buckets. The caller compares keys: hashtab_first() and hash_next()
 * walk the elements whose hash matches.
 */
#ifndef SHPMU_HASHTAB_H
#define SHPMU_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

struct hash_node {
	struct hash_node *next;
	uint64_t hash;
};

struct hashtab {
	struct hash_node **buckets;
	size_t nbuckets; /* a power of two, or 0 before the first insert */
	size_t count;
};

/* An empty table with room for min_buckets (a power of two, or 0 to make
 * the buckets at the first insert): 0 or -ENOMEM. */
int hashtab_init(struct hashtab *t, size_t min_buckets);
/* Frees the buckets, not the elements. */
void hashtab_fini(struct hashtab *t);

/* Adds n with hash. 0, or -ENOMEM when a table with no buckets yet cannot
 * make them; a full table that cannot grow gets longer chains instead. */
int hashtab_insert(struct hashtab *t, struct hash_node *n, uint64_t hash);
/* Takes out n, which is in t. */
void hashtab_remove(struct hashtab *t, struct hash_node *n);

/* Empties t, handing each element to drop (which may free it). */
void hashtab_drain(struct hashtab *t, void (*drop)(struct hash_node *n));

/* The first element with hash, then the next with the same hash, or
 * NULL. */
static inline struct hash_node *hash_next(struct hash_node *n, uint64_t hash)
{
	while (n && n->hash != hash)
		n = n->next;
	return n;
}

static inline struct hash_node *hashtab_first(const struct hashtab *t,
					      uint64_t hash)
{
	if (!t->nbuckets)
		return NULL;
	return hash_next(t->buckets[hash & (t->nbuckets - 1)], hash);
}

/* The element of type, embedding its node as member, that n is in. */
#define hash_entry(n, type, member)                                            \
	((type *)((char *)(n)-offsetof(type, member)))

#endif
