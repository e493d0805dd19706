/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text written into one growable buffer: the /metrics page, and the label
 * sets it is made of. Numbers are written without printf (a scrape of
 * 1000 cgroups x 8 events writes 8000 of them); printf is kept for the
 * few headers and gauges. Out of memory, a page stops growing and is
 * marked failed, so that writers need not check each write.
 *
 * A scrape's page is taken from a pool and given back once HTTP has sent
 * it: the buffer, grown to the page's size, is reused by the next scrape
 * instead of being allocated (and faulted in) again.
 */
#ifndef SHPMU_EXPORTER_PAGE_H
#define SHPMU_EXPORTER_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct pages;

struct page {
	char *buf;
	size_t len, cap;
	bool failed;	    /* out of memory: the text is not whole */
	struct pages *pool; /* where it goes back to; NULL: none */
};

/* The pool: the buffer of the page sent last, kept for the next. */
struct pages {
	struct page *spare;
};

/* A page with nothing written, its buffer the spare one where there is
 * one; NULL where there is no memory. */
struct page *page_take(struct pages *pool);
/* Gives p back once it is sent: kept as the spare, or freed. */
void page_give_back(struct page *p);
/* Frees the spare (at exit). */
void pages_fini(struct pages *pool);

/* Room for n more bytes and a NUL; false (the page failed) where there
 * is no memory. */
bool page_grow(struct page *p, size_t n);

static inline void page_put(struct page *p, const char *s, size_t n)
{
	if (p->cap - p->len <= n && !page_grow(p, n))
		return;
	memcpy(p->buf + p->len, s, n);
	p->len += n;
}

void page_puts(struct page *p, const char *s);
void page_putc(struct page *p, char c);
void page_printf(struct page *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* v in decimal. */
void page_u64(struct page *p, uint64_t v);
/* ns as seconds, S.NNNNNNNNN (to the ns). */
void page_seconds(struct page *p, uint64_t ns);

/* s as a label value: backslash, double quote and newline escaped as the
 * text formats say, and each byte that is not part of valid UTF-8 as the
 * four characters \xNN (the formats want UTF-8). */
void page_label_value(struct page *p, const char *s);

/* The text of a page made on the stack (struct page t = {0}): its
 * buffer, the caller's to free; NULL (and nothing to free) where it
 * failed. */
char *page_text(struct page *p);

#endif
