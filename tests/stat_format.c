// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-stat's output code on rows given on the command line: a bound, or
 * switches the BPF backend did not see, cannot be had from a kernel on
 * demand (upstream kernels run the program at every switch), so
 * test_stat.py --formats checks how the tool shows them through this.
 *
 *   stat_format human|csv|json EVENT VALUE ENABLED RUNNING BOUND [CGROUP]
 *   stat_format footer SWITCHES_UNSEEN UNATTRIBUTED_NS
 */
#include <stdlib.h>
#include <string.h>

#include "stat.h"

static uint64_t number(const char *s)
{
	return strtoull(s, NULL, 10);
}

int main(int argc, char **argv)
{
	struct options o = {.sep = ",", .format = OUT_HUMAN};
	struct shpmu_stats st = {0};
	struct row r = {0};

	if (argc == 4 && !strcmp(argv[1], "footer")) {
		/* CSV: no elapsed line, the note alone (on stderr). */
		o.format = OUT_CSV;
		st.switches_unseen = number(argv[2]);
		st.unattributed_ns = number(argv[3]);
		print_footer(&o, 0, &st, 0);
		return 0;
	}
	if (argc != 7 && argc != 8) {
		fprintf(stderr, "usage: stat_format human|csv|json EVENT VALUE "
				"ENABLED RUNNING BOUND [CGROUP]\n"
				"       stat_format footer SWITCHES_UNSEEN "
				"UNATTRIBUTED_NS\n");
		return 2;
	}
	if (!strcmp(argv[1], "csv"))
		o.format = OUT_CSV;
	else if (!strcmp(argv[1], "json"))
		o.format = OUT_JSON;
	r.event = argv[2];
	r.count.value = number(argv[3]);
	r.count.time_enabled = number(argv[4]);
	r.count.time_running = number(argv[5]);
	r.bound = number(argv[6]);
	r.cgroup = argc == 8 ? argv[7] : NULL;
	print_row(&o, &r, 0);
	return 0;
}
