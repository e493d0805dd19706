// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-exporter: serves libshpmu's per-CPU and per-cgroup counters to
 * Prometheus. man/shpmu-exporter.8.scd.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "exporter.h"

/* Client connections and the scrape's perf events share RLIMIT_NOFILE:
 * take what the hard limit allows (serve() divides it). */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		say("RLIMIT_NOFILE: cannot raise it to %llu: %s",
		    (unsigned long long)rl.rlim_max, strerror(errno));
}

int main(int argc, char **argv)
{
	struct options o;
	struct exporter x;
	int ret = options_parse(&o, argc, argv);

	if (ret) {
		options_free(&o);
		return ret > 0 ? 0 : 2;
	}
	raise_nofile();
	ret = exporter_init(&x, &o) || serve(&x) ? 1 : 0;
	exporter_fini(&x);
	options_free(&o);
	return ret;
}
