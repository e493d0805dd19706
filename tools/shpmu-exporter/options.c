// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* shpmu-exporter's flags, spelled as node_exporter spells its own. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: shpmu-exporter [options]\n"
		"  --web.listen-address=HOST:PORT  where to serve /metrics "
		"(127.0.0.1:9817)\n"
		"  --web.request-timeout=S a request arrives whole within S "
		"seconds (10)\n"
		"  --web.max-connections=N at most N client connections (1024; "
		"fewer where\n"
		"                          RLIMIT_NOFILE leaves less room)\n"
		"  --web.max-connections-per-address=N  at most N from one "
		"address (16;\n"
		"                          0: no limit)\n"
		"  -e, --events=LIST       events by name (default: "
		"task-clock,\n"
		"                          context-switches,cpu-migrations,"
		"page-faults,\n"
		"                          and "
		"cycles,instructions,cache-misses "
		"where present)\n"
		"  --no-cpu                no per-CPU series\n"
		"  --no-cgroups            no per-cgroup series\n"
		"  --cgroup.root=PATH      count cgroups below PATH of the "
		"cgroup mount (/)\n"
		"  --cgroup.depth=N        that many levels below it (3)\n"
		"  --cgroup.match=GLOB     only cgroups whose path matches; "
		"repeatable\n"
		"  --cgroup.kind=LIST      only these: pod, container, "
		"sandbox,\n"
		"                          conmon, unit (6 levels deep unless\n"
		"                          --cgroup.depth says)\n"
		"  --max-cgroups=N         count at most N cgroups (1000)\n"
		"  --kubernetes.logs-dir=DIR  the kubelet's pod log "
		"directories, for pod\n"
		"                          names (/var/log/pods where it is; "
		"'': none)\n"
		"  --kubernetes.container-logs-dir=DIR  its container log "
		"links, for\n"
		"                          container names "
		"(/var/log/containers where it is)\n"
		"  --scope=process|host    share events with other processes "
		"(process)\n"
		"  --domain=NAME, --bpffs=DIR  the host scope's domain and "
		"BPF filesystem\n"
		"  -v, --verbose           log library decisions too\n");
}

/* Tokenised in a copy: strtok_r writes NULs, and argv is what ps
 * shows. */
static int add_events(struct options *o, const char *arg)
{
	char *list = strdup(arg);
	size_t n = 0;

	if (!list) {
		say("-e: %s", strerror(errno));
		return -1;
	}
	/* A later -e replaces an earlier one. */
	free(o->events_list);
	o->events_list = list;
	for (char *save, *e = strtok_r(list, ",", &save); e;
	     e = strtok_r(NULL, ",", &save)) {
		if (n == MAX_EVENTS - 1) {
			say("at most %d events", MAX_EVENTS - 1);
			return -1;
		}
		o->events[n++] = e;
	}
	o->events[n] = NULL;
	o->default_events = false;
	return n ? 0 : -1;
}

/* --cgroup.kind's list: KIND_* bits, 0 where it has an unknown word or
 * none. */
static unsigned int kinds(const char *arg)
{
	static const struct {
		const char *name;
		unsigned int kind;
	} words[] = {
		{"pod", KIND_POD},	   {"container", KIND_CONTAINER},
		{"sandbox", KIND_SANDBOX}, {"conmon", KIND_CONMON},
		{"unit", KIND_UNIT},
	};
	unsigned int got = 0;
	char *list = strdup(arg);

	if (!list) {
		say("--cgroup.kind: %s", strerror(errno));
		return 0;
	}
	for (char *save, *k = strtok_r(list, ",", &save); k;
	     k = strtok_r(NULL, ",", &save)) {
		size_t i = 0;

		while (i < sizeof(words) / sizeof(words[0]) &&
		       strcmp(k, words[i].name))
			i++;
		if (i == sizeof(words) / sizeof(words[0])) {
			say("--cgroup.kind: no kind %s (pod, container, "
			    "sandbox, conmon, unit)",
			    k);
			free(list);
			return 0;
		}
		got |= words[i].kind;
	}
	free(list);
	if (!got)
		say("--cgroup.kind wants kinds: pod, container, sandbox, "
		    "conmon, unit");
	return got;
}

static int number(const char *s, long min, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || *end || end == s || *out < min) {
		say("bad number: %s", s);
		return -1;
	}
	return 0;
}

int options_parse(struct options *o, int argc, char **argv)
{
	enum {
		LISTEN = 256,
		NO_CPU,
		NO_CGROUPS,
		ROOT,
		DEPTH,
		MATCH,
		MAX,
		SCOPE,
		DOMAIN,
		BPFFS,
		TIMEOUT,
		CONNS,
		PER_ADDR,
		KIND,
		LOGS,
		CONTAINER_LOGS
	};
	static const struct option longs[] = {
		{"web.listen-address", required_argument, NULL, LISTEN},
		{"web.request-timeout", required_argument, NULL, TIMEOUT},
		{"web.max-connections", required_argument, NULL, CONNS},
		{"web.max-connections-per-address", required_argument, NULL,
		 PER_ADDR},
		{"events", required_argument, NULL, 'e'},
		{"no-cpu", no_argument, NULL, NO_CPU},
		{"no-cgroups", no_argument, NULL, NO_CGROUPS},
		{"cgroup.root", required_argument, NULL, ROOT},
		{"cgroup.depth", required_argument, NULL, DEPTH},
		{"cgroup.match", required_argument, NULL, MATCH},
		{"cgroup.kind", required_argument, NULL, KIND},
		{"kubernetes.logs-dir", required_argument, NULL, LOGS},
		{"kubernetes.container-logs-dir", required_argument, NULL,
		 CONTAINER_LOGS},
		{"max-cgroups", required_argument, NULL, MAX},
		{"scope", required_argument, NULL, SCOPE},
		{"domain", required_argument, NULL, DOMAIN},
		{"bpffs", required_argument, NULL, BPFFS},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	long n;
	int opt;

	*o = (struct options){.listen = "127.0.0.1:9817",
			      .default_events = true,
			      .per_cpu = true,
			      .per_cgroup = true,
			      .cgroup_root = "/",
			      .cgroup_depth = 3,
			      .max_cgroups = 1000,
			      .request_timeout = 10,
			      .max_connections = 1024,
			      .max_per_address = 16};
	while ((opt = getopt_long(argc, argv, "e:vh", longs, NULL)) != -1) {
		switch (opt) {
		case LISTEN:
			o->listen = optarg;
			break;
		case TIMEOUT:
			if (number(optarg, 1, &n))
				return -1;
			o->request_timeout = n > 3600 ? 3600 : (unsigned int)n;
			break;
		case CONNS:
			if (number(optarg, 1, &n))
				return -1;
			o->max_connections =
				n > 1 << 20 ? 1 << 20 : (unsigned int)n;
			break;
		case PER_ADDR:
			if (number(optarg, 0, &n))
				return -1;
			o->max_per_address =
				n > 1 << 20 ? 1 << 20 : (unsigned int)n;
			break;
		case 'e':
			if (add_events(o, optarg))
				return -1;
			break;
		case NO_CPU:
			o->per_cpu = false;
			break;
		case NO_CGROUPS:
			o->per_cgroup = false;
			break;
		case ROOT:
			o->cgroup_root = optarg;
			break;
		case DEPTH:
			if (number(optarg, 0, &n))
				return -1;
			o->cgroup_depth = n > 64 ? 64 : (int)n;
			o->depth_set = true;
			break;
		case KIND: {
			/* Given again, it adds to the kinds. */
			unsigned int more = kinds(optarg);

			if (!more)
				return -1;
			o->kinds |= more;
			break;
		}
		case LOGS:
			o->logs_dir = optarg;
			break;
		case CONTAINER_LOGS:
			o->container_logs_dir = optarg;
			break;
		case MATCH:
			if (o->npatterns == MAX_PATTERNS) {
				say("at most %d --cgroup.match", MAX_PATTERNS);
				return -1;
			}
			o->patterns[o->npatterns++] = optarg;
			break;
		case MAX:
			if (number(optarg, 0, &n))
				return -1;
			o->max_cgroups = (size_t)n;
			break;
		case SCOPE:
			if (!strcmp(optarg, "host")) {
				o->scope = SHPMU_SCOPE_HOST;
			} else if (strcmp(optarg, "process")) {
				say("--scope is process or host");
				return -1;
			}
			break;
		case DOMAIN:
			o->domain = optarg;
			break;
		case BPFFS:
			o->bpffs_dir = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return -1;
	}
	if (o->kinds && !o->per_cgroup) {
		say("--cgroup.kind chooses cgroups to count, and "
		    "--no-cgroups counts none: give one of them");
		return -1;
	}
	/* Deep enough for every layout, where the depth is not given. */
	if (o->kinds && !o->depth_set)
		o->cgroup_depth = KIND_DEPTH;
	return 0;
}

void options_free(struct options *o)
{
	free(o->events_list);
	o->events_list = NULL;
}
