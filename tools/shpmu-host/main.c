// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-host: the operator's view of host-scope sharing.
 *
 *   shpmu-host [--bpffs DIR] list            every domain, in brief
 *   shpmu-host [--bpffs DIR] show DOMAIN     its events, cgroups, users
 *   shpmu-host [--bpffs DIR] fsck DOMAIN     checks every pin and the
 *                                            books, and reclaims what
 *                                            dead users left
 *   shpmu-host [--bpffs DIR] remove DOMAIN   removes it if no live process
 *                                            uses it
 *
 * It reads the pinned books under the domain's lock, so it needs the
 * rights a member has (root, or the domain's uid with CAP_BPF).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h"
#include "host/host_inspect.h"
#include "names/names_generic.h"
#include "../plural.h"

static const char *bpffs = HOST_DEFAULT_DIR;

/* Why a domain was refused (a pin not what this build makes, say). */
static void to_stderr(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= SHPMU_LOG_WARN)
		fprintf(stderr, "shpmu-host: %s\n", msg);
}

struct name_search {
	const struct event_key *key;
	const char *found;
};

static int match_name(const char *name, const char *desc, void *arg)
{
	struct name_search *s = arg;
	struct perf_event_attr attr;

	(void)desc;
	memset(&attr, 0, sizeof(attr));
	if (names_generic_encode(name, &attr) || attr.type != s->key->type ||
	    attr.config != s->key->config)
		return 0;
	s->found = name;
	return 1;
}

/* The kernel's generic name of key, or its type and config. */
static void event_name(const struct event_key *key, char *buf, size_t len)
{
	struct name_search s = {.key = key};

	names_generic_list(match_name, &s);
	if (s.found) {
		snprintf(buf, len, "%s", s.found);
	} else {
		snprintf(buf, len, "type %u config %#llx", key->type,
			 (unsigned long long)key->config);
	}
}

static int show(const char *domain, void *arg)
{
	bool brief = arg != NULL;
	struct host_view v;
	uint32_t live = 0, alive = 0;
	char name[64];
	int err = host_view_read(bpffs, domain, to_stderr, &v);

	if (err) {
		fprintf(stderr, "shpmu-host: %s: %s\n", domain, strerror(-err));
		return err;
	}
	for (uint32_t i = 0; i < v.nusers; i++)
		alive += v.users[i].alive;
	for (int e = 0; e < MAX_EVENTS; e++)
		live += v.events[e].state == EVENT_LIVE;
	printf("domain %s: %s, %u attr%s, %u perf event%s, %u cgroup%s, %u "
	       "user%s (%u alive)\n",
	       domain, v.complete ? "complete" : "incomplete (a maker died)",
	       live, plural(live, "s"), v.perf_events,
	       plural(v.perf_events, "s"), v.nslots, plural(v.nslots, "s"),
	       v.nusers, plural(v.nusers, "s"), alive);
	if (brief) {
		host_view_free(&v);
		return 0;
	}
	for (int e = 0; e < MAX_EVENTS; e++) {
		if (v.events[e].state == EVENT_FREE)
			continue;
		event_name(&v.events[e].key, name, sizeof(name));
		printf("  event %d: %s, %u ref%s%s\n", e, name,
		       v.events[e].refs, plural(v.events[e].refs, "s"),
		       v.events[e].state == EVENT_MAKING ? " (being made)"
							 : "");
	}
	for (uint32_t s = 0; s < v.nslots; s++)
		printf("  cgroup id %llu: %u ref%s\n",
		       (unsigned long long)v.slots[s].id, v.slots[s].refs,
		       plural(v.slots[s].refs, "s"));
	for (uint32_t i = 0; i < v.nusers; i++)
		printf("  user %llu: pid %d (%.16s), started at tick %llu, "
		       "%u ref%s, %s\n",
		       (unsigned long long)v.users[i].id, v.users[i].pid,
		       v.users[i].comm,
		       (unsigned long long)v.users[i].start_time,
		       v.users[i].refs, plural(v.users[i].refs, "s"),
		       v.users[i].alive ? "alive" : "dead");
	host_view_free(&v);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: shpmu-host [--bpffs DIR] list | show DOMAIN | "
			"fsck DOMAIN | remove DOMAIN\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"bpffs", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int opt, err;

	while ((opt = getopt_long(argc, argv, "b:h", longs, NULL)) != -1) {
		if (opt != 'b')
			return usage();
		bpffs = optarg;
	}
	if (optind >= argc)
		return usage();
	if (!strcmp(argv[optind], "list") && optind + 1 == argc) {
		err = host_list_domains(bpffs, show, (void *)1);
	} else if (!strcmp(argv[optind], "show") && optind + 2 == argc) {
		err = show(argv[optind + 1], NULL);
	} else if (!strcmp(argv[optind], "fsck") && optind + 2 == argc) {
		err = host_repair(bpffs, argv[optind + 1], to_stderr);
		if (err)
			fprintf(stderr, "shpmu-host: %s: %s\n",
				argv[optind + 1], strerror(-err));
		else
			printf("%s checks out\n", argv[optind + 1]);
	} else if (!strcmp(argv[optind], "remove") && optind + 2 == argc) {
		err = host_remove(bpffs, argv[optind + 1], to_stderr);
		if (err == -EBUSY)
			fprintf(stderr,
				"shpmu-host: %s has live users: it goes "
				"when the last one leaves\n",
				argv[optind + 1]);
		else if (err)
			fprintf(stderr, "shpmu-host: %s: %s\n",
				argv[optind + 1], strerror(-err));
		else
			printf("removed %s\n", argv[optind + 1]);
	} else {
		return usage();
	}
	return err ? 1 : 0;
}
