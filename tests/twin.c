// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "twin.h"

#include <criterion/criterion.h>
#include <unistd.h>

#include "helpers.h"

struct twin twin_open_attr(const struct perf_event_attr *attr, pid_t pid,
			   int cpu)
{
	struct perf_event_attr a = *attr;
	struct twin t = {0};

	a.disabled = 1;
	t.out = raw_open_attr(&a, pid, cpu, 0);
	t.in = raw_open_attr(&a, pid, cpu, 0);
	return t;
}

struct twin twin_open(uint64_t config, pid_t pid, int cpu)
{
	struct perf_event_attr a = sw_attr(config, true);

	return twin_open_attr(&a, pid, cpu);
}

void twin_close(struct twin *t)
{
	close(t->out);
	close(t->in);
}

void twin_before_open(struct twin *t)
{
	raw_enable(t->out);
}

void twin_after_open(struct twin *t)
{
	raw_enable(t->in);
}

void twin_before_close(struct twin *t, bool disable)
{
	if (disable)
		raw_disable(t->in);
	raw_read(t->in, t->i);
}

void twin_after_close(struct twin *t, bool disable)
{
	if (disable)
		raw_disable(t->out);
	raw_read(t->out, t->o);
}

uint64_t expect_twin_give(uint64_t got, const struct twin *t, int f,
			  uint64_t give, const char *what)
{
	uint64_t in = t->i[f], out = t->o[f];

	cr_log_info("%s: %llu in [%llu, %llu] give or take %llu", what,
		    (unsigned long long)got, (unsigned long long)in,
		    (unsigned long long)out, (unsigned long long)give);
	cr_expect(in <= got + give && got <= out + give,
		  "%s: %llu is outside [%llu, %llu] (give or take %llu)", what,
		  (unsigned long long)got, (unsigned long long)in,
		  (unsigned long long)out, (unsigned long long)give);
	return out > in ? out - in : 0;
}

uint64_t expect_twin(uint64_t got, const struct twin *t, int f,
		     const char *what)
{
	return expect_twin_give(got, t, f, 0, what);
}
