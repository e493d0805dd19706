// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Text in a growable buffer, and the pool that reuses a scrape's buffer
 * (page.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "page.h"

/* A buffer past twice what its page needed, and this big, is not kept:
 * a page that shrank (cgroups gone) does not hold its largest size. */
#define KEEP_SLACK (1 << 20)

struct page *page_take(struct pages *pool)
{
	/* HTTP gives pages back on its own thread: swapped atomically. */
	struct page *p =
		__atomic_exchange_n(&pool->spare, NULL, __ATOMIC_ACQ_REL);

	if (!p && !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->len = 0;
	p->failed = false;
	p->pool = pool;
	return p;
}

static void page_free(struct page *p)
{
	if (!p)
		return;
	free(p->buf);
	free(p);
}

void page_give_back(struct page *p)
{
	if (!p)
		return;
	if (!p->pool || p->failed ||
	    (p->cap > 2 * p->len && p->cap > KEEP_SLACK)) {
		page_free(p);
		return;
	}
	/* The one kept before it (a scrape while it was sent) goes. */
	page_free(__atomic_exchange_n(&p->pool->spare, p, __ATOMIC_ACQ_REL));
}

void pages_fini(struct pages *pool)
{
	page_free(__atomic_exchange_n(&pool->spare, NULL, __ATOMIC_ACQ_REL));
}

bool page_grow(struct page *p, size_t n)
{
	size_t cap = p->cap ? p->cap : 4096;
	char *more;

	if (p->failed)
		return false;
	if (p->cap - p->len > n)
		return true;
	while (cap - p->len <= n) {
		if (cap > SIZE_MAX / 2)
			goto fail;
		cap *= 2;
	}
	more = realloc(p->buf, cap);
	if (!more)
		goto fail;
	p->buf = more;
	p->cap = cap;
	return true;
fail:
	p->failed = true;
	return false;
}

void page_puts(struct page *p, const char *s)
{
	page_put(p, s, strlen(s));
}

void page_putc(struct page *p, char c)
{
	page_put(p, &c, 1);
}

void page_printf(struct page *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (int tries = 0; tries < 2; tries++) {
		size_t room = p->cap - p->len;

		va_start(ap, fmt);
		n = vsnprintf(room ? p->buf + p->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			p->failed = true;
			return;
		}
		if ((size_t)n < room) {
			p->len += (size_t)n;
			return;
		}
		if (!page_grow(p, (size_t)n))
			return;
	}
}

/* v's digits, written backwards from end: where they begin. Two digits
 * a step, from a table. */
static char *digits(char *end, uint64_t v)
{
	static const char pairs[201] = "00010203040506070809"
				       "10111213141516171819"
				       "20212223242526272829"
				       "30313233343536373839"
				       "40414243444546474849"
				       "50515253545556575859"
				       "60616263646566676869"
				       "70717273747576777879"
				       "80818283848586878889"
				       "90919293949596979899";
	char *s = end;

	while (v >= 100) {
		unsigned int i = (unsigned int)(v % 100) * 2;

		v /= 100;
		*--s = pairs[i + 1];
		*--s = pairs[i];
	}
	if (v >= 10) {
		*--s = pairs[v * 2 + 1];
		*--s = pairs[v * 2];
	} else {
		*--s = (char)('0' + v);
	}
	return s;
}

void page_u64(struct page *p, uint64_t v)
{
	char buf[20], *end = buf + sizeof(buf), *s = digits(end, v);

	page_put(p, s, (size_t)(end - s));
}

void page_seconds(struct page *p, uint64_t ns)
{
	/* 20 digits of seconds at most, the point and 9 of ns. */
	char buf[30], *end = buf + sizeof(buf),
		      *frac = digits(end, ns % 1000000000), *s;

	/* The ns zero-padded to 9 digits. */
	while (frac > end - 9)
		*--frac = '0';
	*--frac = '.';
	s = digits(frac, ns / 1000000000);
	page_put(p, s, (size_t)(end - s));
}

/* The length of the valid UTF-8 sequence that s starts, 0 if none:
 * overlong forms, surrogates and code points past U+10FFFF are not
 * valid, as Go's utf8.ValidString (Prometheus's check) has it. */
static size_t utf8_len(const unsigned char *s)
{
	/* The second byte's range: narrower after E0, ED, F0 and F4. */
	unsigned char lo = s[0] == 0xe0 ? 0xa0 : s[0] == 0xf0 ? 0x90 : 0x80;
	unsigned char hi = s[0] == 0xed ? 0x9f : s[0] == 0xf4 ? 0x8f : 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4 || s[1] < lo || s[1] > hi)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	/* A NUL is no continuation byte: nothing past the string is read. */
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void page_label_value(struct page *p, const char *s)
{
	const unsigned char *c = (const unsigned char *)s;

	while (*c) {
		size_t n = utf8_len(c);

		if (*c == '\\')
			page_put(p, "\\\\", 2);
		else if (*c == '"')
			page_put(p, "\\\"", 2);
		else if (*c == '\n')
			page_put(p, "\\n", 2);
		else if (!n) /* a cgroup's name is any bytes: kept readable */
			page_printf(p, "\\\\x%02x", *c);
		else
			page_put(p, (const char *)c, n);
		c += n ? n : 1;
	}
}

char *page_text(struct page *p)
{
	/* Room for the NUL, which page_grow() always leaves. */
	if (!page_grow(p, 0)) {
		free(p->buf);
		p->buf = NULL;
		return NULL;
	}
	p->buf[p->len] = '\0';
	return p->buf;
}
