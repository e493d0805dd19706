// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collectd's side of the plugin: the config, init, read and shutdown
 * callbacks. One libshpmu context serves every instance, so instances
 * asking for the same event on the same target share one kernel event;
 * each instance has a read callback of its own, which collectd's read
 * threads may run at the same time as another's.
 */
#include "collectd.h"
#include "plugin.h"
#include "utils/common/common.h"

#include <shpmu/shpmu.h>

#include "counters.h"
#include "settings.h"

#define PLUGIN "shpmu"

static struct settings settings;
static bool settings_bad; /* a config error was said: init refuses */
static struct shpmu *pmu;
static struct counters *counters; /* one per instance */
static size_t ncounters;
static size_t nreads; /* read callbacks registered: the instances', then
			 sharing's */

static void say(int level, const char *msg, void *arg)
{
	(void)arg;
	plugin_log(level, "%s", msg);
}

/* libshpmu's own log lines, marked as ours, at collectd's (syslog's)
 * level for theirs: libshpmu counts its levels from 0 for an error, where
 * syslog's 0 is an emergency. */
static void library_log(int level, const char *msg, void *arg)
{
	static const int syslog_level[] = {
		[SHPMU_LOG_ERROR] = LOG_ERR,
		[SHPMU_LOG_WARN] = LOG_WARNING,
		[SHPMU_LOG_INFO] = LOG_INFO,
		[SHPMU_LOG_DEBUG] = LOG_DEBUG,
	};

	(void)arg;
	plugin_log(level >= 0 && level <= SHPMU_LOG_DEBUG ? syslog_level[level]
							  : LOG_DEBUG,
		   "shpmu: libshpmu: %s", msg);
}

static int config(oconfig_item_t *block)
{
	char err[512];

	/* A callback that fails here stops the whole daemon: the error is
	 * said, and init refuses instead, which unloads this plugin only. */
	if (settings.ninstances || settings_bad) {
		ERROR(PLUGIN ": the <Plugin " PLUGIN "> block is given twice");
		settings_free(&settings);
		settings_bad = true;
		return 0;
	}
	if (settings_parse(block, &settings, err, sizeof(err))) {
		ERROR(PLUGIN ": config: %s", err);
		settings_bad = true;
	}
	return 0;
}

static void dispatch(const char *plugin_instance, const char *type,
		     const char *type_instance, value_t value)
{
	value_list_t vl = VALUE_LIST_INIT;

	vl.values = &value;
	vl.values_len = 1;
	sstrncpy(vl.plugin, PLUGIN, sizeof(vl.plugin));
	sstrncpy(vl.plugin_instance, plugin_instance,
		 sizeof(vl.plugin_instance));
	sstrncpy(vl.type, type, sizeof(vl.type));
	sstrncpy(vl.type_instance, type_instance, sizeof(vl.type_instance));
	plugin_dispatch_values(&vl);
}

static void dispatch_reading(const struct counters *c, const struct series *s,
			     uint64_t value, void *arg)
{
	(void)arg;
	dispatch(c->settings->name, "derive", s->type_instance,
		 (value_t){.derive = (derive_t)value});
}

static int read_instance(user_data_t *ud)
{
	counters_read(ud->data, dispatch_reading, say, NULL);
	return 0;
}

/* What sharing saves, as gauges: handles against the kernel events and
 * fds behind them. */
static int read_sharing(user_data_t *ud)
{
	struct shpmu_stats st;

	(void)ud;
	if (shpmu_get_stats(pmu, &st))
		return -1;
	dispatch("", "gauge", "handles",
		 (value_t){.gauge = (gauge_t)st.handles});
	dispatch("", "gauge", "kernel_events",
		 (value_t){.gauge = (gauge_t)st.kernel_events});
	dispatch("", "gauge", "kernel_fds",
		 (value_t){.gauge = (gauge_t)st.kernel_fds});
	return 0;
}

static int shutdown_plugin(void)
{
	while (ncounters)
		counters_close(&counters[--ncounters]);
	free(counters);
	counters = NULL;
	shpmu_free(pmu);
	pmu = NULL;
	settings_free(&settings);
	return 0;
}

/* An instance's read callback is shpmu/NAME, the gauges' plain shpmu: an
 * instance's name is never empty, so none can take the gauges' (an
 * instance named "sharing" once did, and collectd refused it). */
static void read_name(size_t i, char *buf, size_t len)
{
	if (i < ncounters)
		snprintf(buf, len, PLUGIN "/%s", settings.instances[i].name);
	else
		snprintf(buf, len, PLUGIN);
}

static int register_reads(void)
{
	char name[NAME_ROOM + 16];

	for (; nreads <= ncounters; nreads++) {
		user_data_t ud = {.data = nreads < ncounters ? &counters[nreads]
							     : NULL};

		read_name(nreads, name, sizeof(name));
		if (plugin_register_complex_read(
			    NULL, name,
			    nreads < ncounters ? read_instance : read_sharing,
			    0, &ud)) {
			ERROR(PLUGIN ": collectd refused read callback %s",
			      name);
			return -1;
		}
	}
	return 0;
}

static int init(void)
{
	if (settings_bad || !settings.ninstances) {
		ERROR(PLUGIN ": %s: not starting",
		      settings_bad ? "the config has errors (see above)"
				   : "no <Plugin " PLUGIN "> block");
		goto fail;
	}
	{
		SHPMU_OPTS(opts, .log = library_log, .scope = settings.scope,
			   .cgroup_backend = settings.cgroup_backend,
			   .domain = settings.domain,
			   .bpffs_dir = settings.bpffs_dir);

		pmu = shpmu_new(&opts);
	}
	if (!pmu) {
		ERROR(PLUGIN ": cannot make a libshpmu context (Scope, "
			     "Domain, BPFFS): %s",
		      strerror(errno));
		goto fail;
	}
	counters = calloc(settings.ninstances, sizeof(*counters));
	if (!counters)
		goto fail;
	for (; ncounters < settings.ninstances; ncounters++)
		if (counters_open(&counters[ncounters], pmu,
				  &settings.instances[ncounters], say, NULL))
			goto fail;
	if (register_reads())
		goto fail;
	return 0;
fail:
	/* collectd unloads the plugin after a failed init, but its read
	 * callbacks registered so far would still run: take them back. */
	while (nreads) {
		char name[NAME_ROOM + 16];

		read_name(--nreads, name, sizeof(name));
		plugin_unregister_read(name);
	}
	shutdown_plugin();
	return -1;
}

void module_register(void)
{
	plugin_register_complex_config(PLUGIN, config);
	plugin_register_init(PLUGIN, init);
	plugin_register_shutdown(PLUGIN, shutdown_plugin);
}
