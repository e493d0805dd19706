// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* shpmu-stat's command line, spelled as perf stat spells it. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "stat.h"

static const char *default_events[] = {"task-clock", "context-switches",
				       "cpu-migrations", "page-faults"};

void usage(FILE *f)
{
	fprintf(f,
		"usage: shpmu-stat [options] [-- command [args]]\n"
		"  -e, --event LIST     events: names, or groups in {a,b}\n"
		"  -a, --all-cpus       count every CPU\n"
		"  -C, --cpu LIST       count these CPUs (0,2-3)\n"
		"  -p, --pid PID        count a process: its threads, present "
		"and future,\n"
		"                       and what it forks, until ^C or the "
		"command ends\n"
		"      --per-thread     with -p: a row per thread there at the "
		"start; threads\n"
		"                       started later count in their starter's "
		"row\n"
		"  -G, --cgroup LIST    count these cgroups (paths), per "
		"cgroup\n"
		"      --cgroup-id LIST count these cgroups, by id\n"
		"  -I, --interval-print MS  print every MS milliseconds\n"
		"  -x, --field-separator SEP  CSV output, perf's field order\n"
		"  -j, --json           JSON output, one object per line\n"
		"  -v, --verbose        add a sharing summary\n"
		"  -l, --list           list this machine's events\n"
		"      --budget         open the events (on -a, -C, -G, -p\n"
		"                       or this process) and print the core\n"
		"                       PMUs' counter budget per CPU\n");
}

/* Splits a -e list at commas outside braces into units. */
static int add_events(struct options *o, char *list)
{
	char *p = list;

	while (*p) {
		bool group = *p == '{';
		size_t first = o->nevents;
		char *end;

		if (group)
			p++;
		for (;;) {
			size_t len = strcspn(p, group ? ",}" : ",");

			if (len == 0 || o->nevents == MAX_EVENTS) {
				fprintf(stderr,
					"shpmu-stat: bad event list "
					"near '%s'\n",
					p);
				return -1;
			}
			end = p + len;
			o->events[o->nevents] = strndup(p, len);
			if (!o->events[o->nevents++])
				return -1;
			p = end;
			if (group && *p == '}') {
				p++;
				break;
			}
			if (!group || !*p) {
				if (group) {
					fprintf(stderr, "shpmu-stat: missing "
							"'}'\n");
					return -1;
				}
				break;
			}
			p++; /* the comma inside a group */
		}
		o->units[o->nunits++] =
			(struct unit){first, o->nevents - first};
		if (group && *p && *p != ',') {
			fprintf(stderr,
				"shpmu-stat: modifiers after a group "
				"('}%s') are not supported: put them on "
				"each member\n",
				p);
			return -1;
		}
		if (*p == ',')
			p++;
	}
	return 0;
}

/* "0,2-3": each CPU once, in range, or the whole list is refused. */
static int parse_cpus(struct options *o, const char *list)
{
	static bool seen[MAX_CPUS];
	const char *p = list;

	o->ncpus = 0;
	memset(seen, 0, sizeof(seen));
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0 || lo >= MAX_CPUS)
			return -1;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo || hi >= MAX_CPUS)
				return -1;
		}
		for (long c = lo; c <= hi; c++)
			if (!seen[c]) {
				seen[c] = true;
				o->cpus[o->ncpus++] = (int)c;
			}
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return o->ncpus ? 0 : -1;
}

static int add_cgroups(struct options *o, char *list, bool by_id)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->ncgroups == MAX_CGROUPS)
			return -1;
		/* As in perf, "/" names the root cgroup, not the file
		 * system's root. */
		o->cgroups[o->ncgroups] = strcmp(tok, "/") ? tok : "";
		o->cgroup_ids[o->ncgroups] = 0;
		if (by_id) {
			char *end;

			o->cgroup_ids[o->ncgroups] = strtoull(tok, &end, 0);
			if (*end || !o->cgroup_ids[o->ncgroups]) {
				fprintf(stderr,
					"shpmu-stat: '%s' is not a "
					"cgroup id\n",
					tok);
				return -1;
			}
		}
		o->ncgroups++;
	}
	return 0;
}

int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_CGROUP_ID = 256, OPT_PER_THREAD, OPT_BUDGET };
	static const struct option longs[] = {
		{"event", required_argument, NULL, 'e'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"cpu", required_argument, NULL, 'C'},
		{"pid", required_argument, NULL, 'p'},
		{"cgroup", required_argument, NULL, 'G'},
		{"cgroup-id", required_argument, NULL, OPT_CGROUP_ID},
		{"per-thread", no_argument, NULL, OPT_PER_THREAD},
		{"interval-print", required_argument, NULL, 'I'},
		{"field-separator", required_argument, NULL, 'x'},
		{"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},
		{"list", no_argument, NULL, 'l'},
		{"budget", no_argument, NULL, OPT_BUDGET},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->format = OUT_HUMAN;
	/* "+": stop at the first non-option, the command. */
	while ((c = getopt_long(argc, argv, "+e:aC:p:G:I:x:jvlh", longs,
				NULL)) != -1) {
		switch (c) {
		case 'e':
			if (add_events(o, optarg))
				return -1;
			break;
		case 'a':
			o->all_cpus = true;
			break;
		case 'C':
			if (parse_cpus(o, optarg)) {
				fprintf(stderr, "shpmu-stat: bad CPU list\n");
				return -1;
			}
			o->cpu_list = optarg;
			break;
		case 'p':
			o->pid = atoi(optarg);
			/* 0 would name shpmu-stat itself to the library. */
			if (o->pid <= 0) {
				fprintf(stderr,
					"shpmu-stat: bad process id "
					"'%s'\n",
					optarg);
				return -1;
			}
			break;
		case OPT_PER_THREAD:
			o->per_thread = true;
			break;
		case 'G':
		case OPT_CGROUP_ID:
			if (add_cgroups(o, optarg, c == OPT_CGROUP_ID))
				return -1;
			break;
		case 'I':
			o->interval_ms = atoi(optarg);
			if (o->interval_ms < 10) {
				fprintf(stderr, "shpmu-stat: -I needs at "
						"least 10 ms\n");
				return -1;
			}
			break;
		case 'x':
			o->sep = optarg;
			o->format = OUT_CSV;
			break;
		case 'j':
			o->format = OUT_JSON;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'l':
			o->list = true;
			return 0;
		case OPT_BUDGET:
			o->budget = true;
			break;
		case 'h':
			usage(stdout);
			o->help = true;
			return 0;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	if (o->budget && o->command) {
		fprintf(stderr, "shpmu-stat: --budget runs no command: it "
				"opens the events and prints the budget\n");
		return -1;
	}
	if (!o->command && !o->pid && !o->all_cpus && !o->ncpus &&
	    !o->ncgroups && !o->budget) {
		fprintf(stderr, "shpmu-stat: say what to count: a command, "
				"-p, -a, -C or -G\n");
		usage(stderr);
		return -1;
	}
	if (o->pid && (o->all_cpus || o->ncpus || o->ncgroups)) {
		fprintf(stderr, "shpmu-stat: -p counts one process; it does "
				"not mix with -a, -C or -G\n");
		return -1;
	}
	if (o->per_thread && !o->pid) {
		fprintf(stderr, "shpmu-stat: --per-thread splits a process "
				"by thread: it needs -p\n");
		return -1;
	}
	/* After the checks: a usage error leaves nothing allocated. */
	if (!o->nevents && !o->budget) {
		for (size_t i = 0; i < 4; i++)
			o->events[i] = strdup(default_events[i]);
		o->nevents = 4;
		for (size_t i = 0; i < 4; i++)
			o->units[i] = (struct unit){i, 1};
		o->nunits = 4;
	}
	return 0;
}
