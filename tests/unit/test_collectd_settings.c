// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* plugins/collectd/settings.c: collectd's config tree (built here as
 * liboconfig builds it) into the plugin's settings, every bad option
 * refused with a message that names it; and CPU lists. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"

static oconfig_value_t str(const char *s)
{
	return (oconfig_value_t){.value.string = (char *)s,
				 .type = OCONFIG_TYPE_STRING};
}

static oconfig_value_t num(double n)
{
	return (oconfig_value_t){.value.number = n,
				 .type = OCONFIG_TYPE_NUMBER};
}

#define ITEM(KEY, ...)                                                         \
	((oconfig_item_t){.key = (char *)(KEY),                                \
			  .values = (oconfig_value_t[]){__VA_ARGS__},          \
			  .values_num =                                        \
				  sizeof((oconfig_value_t[]){__VA_ARGS__}) /   \
				  sizeof(oconfig_value_t)})
#define BLOCK(ITEM_, ...)                                                      \
	((oconfig_item_t){.key = (ITEM_).key,                                  \
			  .values = (ITEM_).values,                            \
			  .values_num = (ITEM_).values_num,                    \
			  .children = (oconfig_item_t[]){__VA_ARGS__},         \
			  .children_num =                                      \
				  sizeof((oconfig_item_t[]){__VA_ARGS__}) /    \
				  sizeof(oconfig_item_t)})

Test(collectd_settings, a_whole_config)
{
	oconfig_item_t top = BLOCK(
		ITEM("Plugin", str("shpmu")), ITEM("scope", str("Host")),
		ITEM("Domain", str("agents")), ITEM("BPFFS", str("/b")),
		ITEM("CgroupBackend", str("bpf")),
		BLOCK(ITEM("Instance", str("web")),
		      ITEM("Events", str("task-clock"), str("cs")),
		      ITEM("Events", str("cycles:u")),
		      ITEM("Cgroup", str("/system.slice/nginx.service")),
		      ITEM("CPUs", str("3,0-1,1")), ITEM("Process", num(42)),
		      ITEM("ProcessName", str("nginx"))),
		BLOCK(ITEM("Instance", str("node")), ITEM("Events", str("cs")),
		      ITEM("CPUs", str("ALL"))));
	struct settings s;
	char err[256] = "";

	cr_assert_eq(settings_parse(&top, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(s.scope, SHPMU_SCOPE_HOST);
	cr_expect_eq(s.cgroup_backend, SHPMU_CGROUP_BACKEND_BPF);
	cr_expect_str_eq(s.domain, "agents");
	cr_expect_str_eq(s.bpffs_dir, "/b");
	cr_assert_eq(s.ninstances, 2);
	struct instance_settings *web = &s.instances[0];

	cr_expect_str_eq(web->name, "web");
	cr_assert_eq(web->nevents, 3);
	cr_expect_str_eq(web->events[2], "cycles:u");
	/* the cgroup, CPUs 3, 0 and 1 (once), the pid, the name */
	cr_assert_eq(web->nwheres, 6);
	cr_expect_eq(web->wheres[0].kind, WHERE_CGROUP);
	cr_expect_str_eq(web->wheres[0].text, "/system.slice/nginx.service");
	cr_expect_eq(web->wheres[1].cpu, 3);
	cr_expect_eq(web->wheres[2].cpu, 0);
	cr_expect_eq(web->wheres[3].cpu, 1);
	cr_expect_eq(web->wheres[4].kind, WHERE_PROCESS);
	cr_expect_eq(web->wheres[4].pid, 42);
	cr_expect_eq(web->wheres[5].kind, WHERE_PROCESS_NAME);
	cr_expect_eq(s.instances[1].wheres[0].kind, WHERE_ALL_CPUS);
	settings_free(&s);
}

struct bad {
	oconfig_item_t *top;
	const char *said;
};

static void each_bad(struct bad *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct settings s;
		char err[256] = "";

		cr_expect_eq(settings_parse(cases[i].top, &s, err, sizeof(err)),
			     -1, "case %zu parsed", i);
		cr_expect(strstr(err, cases[i].said), "case %zu said \"%s\"", i,
			  err);
		cr_expect_eq(s.ninstances, 0, "case %zu kept settings", i);
	}
}

#define PLUGIN(...)	    BLOCK(ITEM("Plugin", str("shpmu")), __VA_ARGS__)
#define INSTANCE(NAME, ...) BLOCK(ITEM("Instance", str(NAME)), __VA_ARGS__)
#define GOOD_EVENTS	    ITEM("Events", str("task-clock"))
#define GOOD_CPUS	    ITEM("CPUs", str("all"))

Test(collectd_settings, each_bad_option_named)
{
	oconfig_item_t tops[] = {
		PLUGIN(ITEM("Colour", str("blue"))),
		PLUGIN(ITEM("Scope", str("galaxy"))),
		PLUGIN(ITEM("Scope", num(1))),
		PLUGIN(ITEM("Domain", str("d")),
		       INSTANCE("a", GOOD_EVENTS, GOOD_CPUS)),
		PLUGIN(ITEM("CgroupBackend", str("ebpf"))),
		PLUGIN(ITEM("Instance", str("lonely"))),
		PLUGIN(INSTANCE("a/b", GOOD_EVENTS, GOOD_CPUS)),
		PLUGIN(INSTANCE("", GOOD_EVENTS, GOOD_CPUS)),
		PLUGIN(INSTANCE("a", GOOD_EVENTS, GOOD_CPUS),
		       INSTANCE("a", GOOD_EVENTS, GOOD_CPUS)),
		PLUGIN(INSTANCE("a", GOOD_CPUS)),
		PLUGIN(INSTANCE("a", GOOD_EVENTS)),
		PLUGIN(INSTANCE("a", ITEM("Events", num(3)), GOOD_CPUS)),
		PLUGIN(INSTANCE("a", GOOD_EVENTS, ITEM("CPUs", str("3-")))),
		PLUGIN(INSTANCE("a", GOOD_EVENTS, ITEM("CPUs", str("0,,1")))),
		PLUGIN(INSTANCE("a", GOOD_EVENTS, ITEM("CPUs", str("2-1")))),
		PLUGIN(INSTANCE("a", GOOD_EVENTS,
				ITEM("CPUs", str("99999999999")))),
		PLUGIN(INSTANCE("a", GOOD_EVENTS, ITEM("Process", num(-4)))),
		PLUGIN(INSTANCE("a", GOOD_EVENTS, ITEM("Process", num(1.5)))),
		PLUGIN(INSTANCE("a", GOOD_EVENTS, ITEM("Process", str("1")))),
		PLUGIN(INSTANCE(
			"a", GOOD_EVENTS,
			ITEM("ProcessName", str("a-name-over-fifteen")))),
		PLUGIN(INSTANCE("a", GOOD_EVENTS, ITEM("Cgroup", str("")))),
		PLUGIN(INSTANCE("a", GOOD_EVENTS, GOOD_CPUS,
				ITEM("Colour", str("red")))),
		PLUGIN(GOOD_EVENTS),
		PLUGIN(ITEM("Scope", str("host")),
		       ITEM("scope", str("process")),
		       INSTANCE("a", GOOD_EVENTS, GOOD_CPUS)),
		PLUGIN(ITEM("CgroupBackend", str("bpf")),
		       ITEM("CgroupBackend", str("perf")),
		       INSTANCE("a", GOOD_EVENTS, GOOD_CPUS)),
		PLUGIN(INSTANCE("a", GOOD_EVENTS,
				ITEM("Process", num(__builtin_nan(""))))),
	};
	struct bad cases[] = {
		{&tops[0], "unknown option Colour"},
		{&tops[1], "Scope takes"},
		{&tops[2], "Scope takes"},
		{&tops[3], "Domain is for Scope \"host\" only"},
		{&tops[4], "CgroupBackend takes"},
		{&tops[5], "Instance \"lonely\": no Events"},
		{&tops[6], "Instance takes one name"},
		{&tops[7], "Instance takes one name"},
		{&tops[8], "Instance \"a\" is given twice"},
		{&tops[9], "Instance \"a\": no Events"},
		{&tops[10], "nothing to count"},
		{&tops[11], "Events takes event names"},
		{&tops[12], "CPUs takes"},
		{&tops[13], "CPUs takes"},
		{&tops[14], "CPUs takes"},
		{&tops[15], "CPUs takes"},
		{&tops[16], "Process takes"},
		{&tops[17], "Process takes"},
		{&tops[18], "Process takes"},
		{&tops[19], "ProcessName takes"},
		{&tops[20], "Cgroup takes"},
		{&tops[21], "unknown option Colour"},
		{&tops[22], "unknown option Events"},
		{&tops[23], "scope is given twice"},
		{&tops[24], "CgroupBackend is given twice"},
		{&tops[25], "Process takes"},
	};

	cr_assert_eq(sizeof(tops) / sizeof(tops[0]),
		     sizeof(cases) / sizeof(cases[0]));
	each_bad(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(collectd_settings, cpu_lists)
{
	int *cpus, n;

	n = cpu_list_parse("0-3,8,10-11,2", &cpus);
	cr_assert_eq(n, 7);
	int want[] = {0, 1, 2, 3, 8, 10, 11};

	cr_expect_arr_eq(cpus, want, sizeof(want));
	free(cpus);
	const char *bad[] = {"",   ",",	 "1,",	 "-1",	"1-",	      "a",
			     "1 ", " 1", "0,,1", "5-2", "0-99999999", "1.5"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(cpu_list_parse(bad[i], &cpus), -1, "\"%s\"",
			     bad[i]);
}

/* Past 256 entries of a list the error names the option and the limit,
 * whichever kind of entry fills it. */
Test(collectd_settings, long_lists_named)
{
	enum { N = INSTANCE_LIST_MAX + 1 };
	static oconfig_item_t items[3][N + 1];
	static oconfig_value_t pids[N];
	const char *keys[] = {"Process", "CPUs", "Events"};
	const char *said[] = {"Instance \"a\": Process: too many entries",
			      "Instance \"a\": CPUs: too many entries",
			      "Instance \"a\": Events: too many entries"};

	oconfig_value_t all = str("all"), task_clock = str("task-clock");

	for (int k = 0; k < 3; k++) {
		oconfig_item_t *it = items[k];
		struct settings s;
		char err[256] = "";

		for (int i = 0; i < N; i++) {
			pids[i] = num(i + 1);
			it[i] = (oconfig_item_t){.key = (char *)keys[k],
						 .values = &pids[i],
						 .values_num = 1};
			if (k == 1)
				it[i].values = &all;
			if (k == 2)
				it[i].values = &task_clock;
		}
		/* Events gets CPUs to count on, the others events. */
		it[N] = k == 2 ? GOOD_CPUS : GOOD_EVENTS;
		oconfig_item_t instance = {
			.key = "Instance",
			.values = (oconfig_value_t[]){str("a")},
			.values_num = 1,
			.children = it,
			.children_num = N + 1,
		};
		oconfig_item_t top = {.key = "Plugin",
				      .children = &instance,
				      .children_num = 1};

		cr_expect_eq(settings_parse(&top, &s, err, sizeof(err)), -1);
		cr_expect(strstr(err, said[k]), "%s: said \"%s\"", keys[k],
			  err);
	}
}
