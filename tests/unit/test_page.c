// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools/shpmu-exporter/page.c: the exporter's page. Its numbers written
 * without printf read as printf writes them; label values escaped and
 * kept valid UTF-8; the buffer grows across any boundary and is reused
 * by the pool. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page.h"

/* The page's text so far, NUL-terminated, for comparing. */
static const char *text(struct page *p)
{
	cr_assert(!p->failed);
	cr_assert(page_grow(p, 0));
	p->buf[p->len] = '\0';
	return p->buf;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The edges (each power of ten and one below it, UINT64_MAX) and random
 * values of random widths, each beside the one before in one page. */
Test(page, numbers_as_printf)
{
	struct page p = {0}, want = {0};
	uint64_t s = 0x9e3779b97f4a7c15, pow = 1;

	for (int i = 0; i < 20; i++, pow *= 10) {
		page_u64(&p, pow);
		page_u64(&p, pow - 1);
		page_putc(&p, ' ');
		page_printf(&want, "%" PRIu64 "%" PRIu64 " ", pow, pow - 1);
	}
	page_u64(&p, UINT64_MAX);
	page_printf(&want, "%" PRIu64, UINT64_MAX);
	for (int i = 0; i < 100000; i++) {
		uint64_t v = next(&s) >> (next(&s) % 64);

		page_u64(&p, v);
		page_putc(&p, ' ');
		page_seconds(&p, v);
		page_putc(&p, '\n');
		page_printf(&want, "%" PRIu64 " %" PRIu64 ".%09" PRIu64 "\n", v,
			    v / 1000000000, v % 1000000000);
	}
	cr_assert_str_eq(text(&p), text(&want));
	free(p.buf);
	free(want.buf);
}

Test(page, seconds_to_the_ns)
{
	static const struct {
		uint64_t ns;
		const char *s;
	} rows[] = {
		{0, "0.000000000"},
		{1, "0.000000001"},
		{999999999, "0.999999999"},
		{1000000000, "1.000000000"},
		{1234567890123, "1234.567890123"},
		{UINT64_MAX, "18446744073.709551615"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct page p = {0};

		page_seconds(&p, rows[i].ns);
		cr_expect_str_eq(text(&p), rows[i].s);
		free(p.buf);
	}
}

/* Escapes, each byte that is not UTF-8 as \xNN, valid UTF-8 as it is. */
Test(page, label_values)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{"plain", "plain"},
		{"we\"ird\\ na\nme", "we\\\"ird\\\\ na\\nme"},
		{"n\xc3\xa4me \xe2\x82\xac \xf0\x9f\x98\x80", /* ä € 😀 */
		 "n\xc3\xa4me \xe2\x82\xac \xf0\x9f\x98\x80"},
		{"bad\xff\xfe", "bad\\\\xff\\\\xfe"},
		{"\xc0\xaf", "\\\\xc0\\\\xaf"},		   /* overlong / */
		{"\xed\xa0\x80", "\\\\xed\\\\xa0\\\\x80"}, /* a surrogate */
		{"\xf4\x90\x80\x80", "\\\\xf4\\\\x90\\\\x80\\\\x80"},
		{"cut\xe2\x82", "cut\\\\xe2\\\\x82"}, /* ends mid-sequence */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct page p = {0};

		page_label_value(&p, rows[i].in);
		cr_expect_str_eq(text(&p), rows[i].out, "row %zu", i);
		free(p.buf);
	}
}

/* Writes of every size across the buffer's doublings, printf's too. */
Test(page, grows_across_boundaries)
{
	struct page p = {0};
	char piece[300], *want = malloc(1 << 20);
	size_t len = 0;

	cr_assert(want);
	memset(piece, 'x', sizeof(piece));
	for (size_t n = 0; len + 2 * sizeof(piece) < (1 << 20); n++) {
		size_t k = n % sizeof(piece);

		piece[0] = (char)('a' + n % 26);
		page_put(&p, piece, k);
		memcpy(want + len, piece, k);
		len += k;
		page_printf(&p, "%.*s", (int)k, piece);
		memcpy(want + len, piece, k);
		len += k;
	}
	cr_assert_eq(p.len, len);
	cr_assert(!memcmp(p.buf, want, len));
	cr_assert_lt(p.len, p.cap);
	free(p.buf);
	free(want);
}

/* page_text() gives the text or NULL, and a failed page stays failed. */
Test(page, text_and_failure)
{
	struct page p = {0}, bad = {0};
	char *s;

	page_puts(&p, "cgroup=\"");
	page_label_value(&p, "/a");
	page_putc(&p, '"');
	s = page_text(&p);
	cr_assert_str_eq(s, "cgroup=\"/a\"");
	free(s);
	bad.failed = true;
	page_puts(&bad, "lost");
	cr_expect_eq(bad.len, 0);
	cr_expect_null(page_text(&bad));
}

/* A page given back is the next one taken, emptied: its buffer reused. */
Test(page, pool_reuses_the_buffer)
{
	struct pages pool = {0};
	struct page *a = page_take(&pool), *b;
	char *buf;

	cr_assert(a);
	page_puts(a, "first page");
	buf = a->buf;
	page_give_back(a);
	b = page_take(&pool);
	cr_assert_eq(b, a);
	cr_expect_eq(b->buf, buf);
	cr_expect_eq(b->len, 0);
	cr_expect(!b->failed);
	/* Two out at once (a scrape while one is sent): one kept. */
	a = page_take(&pool);
	cr_assert(a && a != b);
	page_give_back(b);
	page_give_back(a);
	cr_expect_eq(pool.spare, a);
	pages_fini(&pool);
	cr_expect_null(pool.spare);
}
