// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-exporter: serves libshpmu's per-CPU and per-cgroup counters to
 * Prometheus. README: "Running the exporter".
 */
#include <stdarg.h>
#include <stdlib.h>

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

int main(int argc, char **argv)
{
	struct options o;
	struct exporter x;
	int ret = options_parse(&o, argc, argv);

	if (ret)
		return ret > 0 ? 0 : 2;
	ret = exporter_init(&x, &o) || serve(&x) ? 1 : 0;
	exporter_fini(&x);
	return ret;
}
