// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The model's spec: "key=value,..." parsed strictly, for fuzzers: an
 * unknown or repeated key, an empty field, a value out of range, a sign,
 * junk after a number or a number that overflows is -EINVAL. */
#include <errno.h>
#include <string.h>

#include "sys/pmu_model_int.h"

#define ROTATE_MS_MAX 60000u

/* A decimal number in [lo, hi] that ends at *end, the text after it set
 * in *end. */
static int number(const char *s, const char **end, uint64_t lo, uint64_t hi,
		  uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');

		/* Past hi, checked before it could overflow. */
		if (v > hi / 10 || hi - v * 10 < d)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (p == s || v < lo)
		return -EINVAL;
	*end = p;
	*out = v;
	return 0;
}

/* A whole field's value: a number and nothing after it. */
static int whole(const char *s, size_t len, uint64_t lo, uint64_t hi,
		 uint64_t *out)
{
	const char *end;

	if (number(s, &end, lo, hi, out))
		return -EINVAL;
	return end == s + len ? 0 : -EINVAL;
}

static bool is(const char *s, size_t len, const char *word)
{
	return len == strlen(word) && !memcmp(s, word, len);
}

/* "core:K1+atom:K2" */
static int hybrid(const char *s, size_t len, struct pm_config *cfg)
{
	static const char *const names[] = {"core:", "atom:"};
	const char *p = s, *stop = s + len, *end;
	uint64_t k;

	for (unsigned int i = 0; i < 2; i++) {
		size_t n = strlen(names[i]);

		if ((size_t)(stop - p) < n || memcmp(p, names[i], n))
			return -EINVAL;
		p += n;
		if (number(p, &end, 1, PMU_MODEL_MAX_COUNTERS, &k) ||
		    end > stop)
			return -EINVAL;
		cfg->counters[i] = (unsigned int)k;
		p = end;
		if (i == 0) {
			if (p == stop || *p != '+')
				return -EINVAL;
			p++;
		}
	}
	if (p != stop)
		return -EINVAL;
	cfg->npmus = 2;
	return 0;
}

enum { K_COUNTERS, K_FIXED, K_ROTATE, K_WATCHDOG, K_CLOCK, K_HYBRID, K_N };

static int field(const char *key, size_t klen, const char *val, size_t vlen,
		 struct pm_config *cfg, unsigned int *seen)
{
	static const char *const keys[K_N] = {"counters", "fixed", "rotate_ms",
					      "watchdog", "clock", "hybrid"};
	uint64_t v;
	int k;

	for (k = 0; k < K_N && !is(key, klen, keys[k]); k++)
		;
	if (k == K_N || (*seen & (1u << k)))
		return -EINVAL;
	*seen |= 1u << k;
	switch (k) {
	case K_COUNTERS:
		if (whole(val, vlen, 1, PMU_MODEL_MAX_COUNTERS, &v))
			return -EINVAL;
		cfg->counters[0] = (unsigned int)v;
		return 0;
	case K_FIXED:
		if (whole(val, vlen, 0, PMU_MODEL_MAX_FIXED, &v))
			return -EINVAL;
		cfg->fixed = (unsigned int)v;
		return 0;
	case K_ROTATE:
		if (whole(val, vlen, 1, ROTATE_MS_MAX, &v))
			return -EINVAL;
		cfg->rotate_ns = v * 1000000;
		return 0;
	case K_WATCHDOG:
		if (whole(val, vlen, 0, 1, &v))
			return -EINVAL;
		cfg->watchdog = v;
		return 0;
	case K_CLOCK:
		if (is(val, vlen, "real") || is(val, vlen, "manual")) {
			cfg->manual = is(val, vlen, "manual");
			return 0;
		}
		return -EINVAL;
	default:
		return hybrid(val, vlen, cfg);
	}
}

int pm_spec_parse(const char *spec, struct pm_config *out)
{
	struct pm_config cfg = {
		.npmus = 1,
		.counters = {4, 0},
		.fixed = 3,
		.rotate_ns = 4000000,
	};
	unsigned int seen = 0;
	const char *p = spec;

	if (!spec)
		return -EINVAL;
	while (*p) {
		const char *comma = strchr(p, ','), *eq;
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		eq = memchr(p, '=', len);
		if (!eq || field(p, (size_t)(eq - p), eq + 1,
				 len - (size_t)(eq - p) - 1, &cfg, &seen))
			return -EINVAL;
		p += len;
		if (comma && !*++p)
			return -EINVAL; /* a trailing comma */
	}
	/* counters= and hybrid= both say how many general counters. */
	if ((seen & (1u << K_COUNTERS)) && (seen & (1u << K_HYBRID)))
		return -EINVAL;
	*out = cfg;
	return 0;
}
