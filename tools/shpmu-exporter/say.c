// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The exporter's messages: one line each on stderr, named. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exporter.h"

void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("shpmu-exporter: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

const char *explain(struct exporter *x, int h, int err, char *buf, size_t len)
{
	if (!x->pmu || shpmu_explain(x->pmu, h, err, buf, len))
		snprintf(buf, len, "%s", strerror(-err));
	return buf;
}

/* The library's advice in its C caller's terms, and the exporter's flag
 * that does the same. */
static const struct {
	const char *library, *exporter;
} options_as_flags[] = {
	{"set opts.bpffs_dir", "pass --bpffs=DIR"},
};

void say_library(const char *msg)
{
	for (size_t i = 0;
	     i < sizeof(options_as_flags) / sizeof(options_as_flags[0]); i++) {
		const char *from = options_as_flags[i].library;
		const char *at = strstr(msg, from);

		if (at) {
			say("%.*s%s%s", (int)(at - msg), msg,
			    options_as_flags[i].exporter, at + strlen(from));
			return;
		}
	}
	say("%s", msg);
}
