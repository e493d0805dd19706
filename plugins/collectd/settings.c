// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "settings.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* The option's one string value, or NULL. */
static const char *one_string(const oconfig_item_t *ci)
{
	if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
		return NULL;
	return ci->values[0].value.string;
}

static int add_string(char ***list, size_t *n, const char *s)
{
	char **grown;
	char *copy;

	if (*n >= INSTANCE_LIST_MAX)
		return -E2BIG;
	copy = strdup(s);
	grown = copy ? realloc(*list, (*n + 1) * sizeof(**list)) : NULL;
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	grown[(*n)++] = copy;
	*list = grown;
	return 0;
}

static int add_where(struct instance_settings *in, struct where w)
{
	struct where *grown;

	if (in->nwheres >= INSTANCE_LIST_MAX) {
		free(w.text);
		return -E2BIG;
	}
	grown = realloc(in->wheres, (in->nwheres + 1) * sizeof(*grown));
	if (!grown) {
		free(w.text);
		return -ENOMEM;
	}
	grown[in->nwheres++] = w;
	in->wheres = grown;
	return 0;
}

/* The message of a failed add_string or add_where (r), naming the
 * instance and the option. */
static int list_error(char *err, size_t len, const char *instance,
		      const char *key, int r)
{
	return fail(err, len, "Instance \"%s\": %s: %s", instance, key,
		    r == -E2BIG ? "too many entries (256 at most)"
				: "out of memory");
}

static int parse_cpu(const char *s, const char **end, int *cpu)
{
	char *e;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &e, 10);
	if (errno || v > INT_MAX)
		return -1;
	*cpu = (int)v;
	*end = e;
	return 0;
}

int cpu_list_parse(const char *text, int **cpus)
{
	const char *p = text;
	int *out = NULL, n = 0;

	for (;;) {
		int lo, hi;

		if (parse_cpu(p, &p, &lo))
			goto bad;
		hi = lo;
		if (*p == '-' && parse_cpu(p + 1, &p, &hi))
			goto bad;
		if (hi < lo || hi - lo >= 4096)
			goto bad;
		for (int c = lo; c <= hi; c++) {
			bool seen = false;

			for (int i = 0; i < n && !seen; i++)
				seen = out[i] == c;
			if (seen)
				continue;
			if (n >= 4096)
				goto bad;
			int *grown =
				realloc(out, (size_t)(n + 1) * sizeof(*out));

			if (!grown)
				goto bad;
			out = grown;
			out[n++] = c;
		}
		if (*p != ',')
			break;
		p++; /* a list may not end in ',': the next must parse */
	}
	if (*p || n == 0)
		goto bad;
	*cpus = out;
	return n;
bad:
	free(out);
	return -1;
}

/* A name collectd can carry as a plugin instance: no '/' (it splits
 * identifiers), no control characters, and room for it. */
static bool good_instance_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= NAME_ROOM)
		return false;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static int where_option(const oconfig_item_t *ci, struct instance_settings *in,
			char *err, size_t len)
{
	struct where w = {.cpu = -1, .pid = -1};
	const char *s = one_string(ci);
	int *cpus = NULL, n, r = 0;

	if (!strcasecmp(ci->key, "Cgroup")) {
		if (!s || !*s)
			return fail(err, len,
				    "Instance \"%s\": Cgroup takes one path",
				    in->name);
		w.kind = WHERE_CGROUP;
	} else if (!strcasecmp(ci->key, "ProcessName")) {
		if (!s || !*s || strlen(s) > 15)
			return fail(err, len,
				    "Instance \"%s\": ProcessName takes one "
				    "name of 1 to 15 bytes, as in "
				    "/proc/PID/comm",
				    in->name);
		w.kind = WHERE_PROCESS_NAME;
	} else if (!strcasecmp(ci->key, "Process")) {
		double v = ci->values_num == 1 && ci->values[0].type ==
							  OCONFIG_TYPE_NUMBER
				   ? ci->values[0].value.number
				   : -1;

		/* Written so that NaN fails too, before any cast. */
		if (!(v >= 1 && v <= INT32_MAX) || v != (double)(pid_t)v)
			return fail(err, len,
				    "Instance \"%s\": Process takes one "
				    "process id (a number above 0)",
				    in->name);
		w.kind = WHERE_PROCESS;
		w.pid = (pid_t)v;
		r = add_where(in, w);
		return r ? list_error(err, len, in->name, ci->key, r) : 0;
	} else {
		/* CPUs "all" or a list */
		if (s && !strcasecmp(s, "all")) {
			w.kind = WHERE_ALL_CPUS;
			r = add_where(in, w);
			return r ? list_error(err, len, in->name, ci->key, r)
				 : 0;
		}
		n = s ? cpu_list_parse(s, &cpus) : -1;
		if (n < 0)
			return fail(err, len,
				    "Instance \"%s\": CPUs takes \"all\" or a "
				    "list such as \"0-3,8\", not %s%s%s",
				    in->name, s ? "\"" : "", s ? s : "that",
				    s ? "\"" : "");
		for (int i = 0; i < n && !r; i++)
			r = add_where(in, (struct where){.kind = WHERE_CPU,
							 .cpu = cpus[i],
							 .pid = -1});
		free(cpus);
		return r ? list_error(err, len, in->name, ci->key, r) : 0;
	}
	w.text = strdup(s);
	r = w.text ? add_where(in, w) : -ENOMEM;
	return r ? list_error(err, len, in->name, ci->key, r) : 0;
}

static int instance_block(const oconfig_item_t *ci, struct settings *s,
			  char *err, size_t len)
{
	const char *name = one_string(ci);
	struct instance_settings *in, *grown;

	if (!name || !good_instance_name(name))
		return fail(err, len,
			    "Instance takes one name of 1 to %d bytes, "
			    "without '/' or control characters",
			    NAME_ROOM - 1);
	for (size_t i = 0; i < s->ninstances; i++)
		if (!strcmp(s->instances[i].name, name))
			return fail(err, len, "Instance \"%s\" is given twice",
				    name);
	grown = realloc(s->instances, (s->ninstances + 1) * sizeof(*grown));
	if (!grown)
		return fail(err, len, "out of memory");
	s->instances = grown;
	in = &grown[s->ninstances];
	*in = (struct instance_settings){.name = strdup(name)};
	if (!in->name)
		return fail(err, len, "out of memory");
	s->ninstances++;

	for (int i = 0; i < ci->children_num; i++) {
		const oconfig_item_t *o = &ci->children[i];

		if (!strcasecmp(o->key, "Events")) {
			if (o->values_num < 1)
				return fail(err, len,
					    "Instance \"%s\": Events takes "
					    "one or more event names",
					    name);
			for (int v = 0; v < o->values_num; v++) {
				int r;

				if (o->values[v].type != OCONFIG_TYPE_STRING ||
				    !*o->values[v].value.string)
					return fail(err, len,
						    "Instance \"%s\": Events "
						    "takes event names, in "
						    "quotes",
						    name);
				r = add_string(&in->events, &in->nevents,
					       o->values[v].value.string);
				if (r)
					return list_error(err, len, name,
							  o->key, r);
			}
		} else if (!strcasecmp(o->key, "Cgroup") ||
			   !strcasecmp(o->key, "CPUs") ||
			   !strcasecmp(o->key, "Process") ||
			   !strcasecmp(o->key, "ProcessName")) {
			if (o->children_num)
				return fail(err, len,
					    "Instance \"%s\": %s is an "
					    "option, not a block",
					    name, o->key);
			if (where_option(o, in, err, len))
				return -1;
		} else {
			return fail(err, len,
				    "Instance \"%s\": unknown option %s (it "
				    "takes Events, Cgroup, CPUs, Process and "
				    "ProcessName)",
				    name, o->key);
		}
	}
	if (!in->nevents)
		return fail(err, len, "Instance \"%s\": no Events", name);
	if (!in->nwheres)
		return fail(err, len,
			    "Instance \"%s\": nothing to count: give Cgroup, "
			    "CPUs, Process or ProcessName",
			    name);
	return 0;
}

static int set_string(char **field, const oconfig_item_t *o, char *err,
		      size_t len)
{
	const char *v = one_string(o);

	if (!v || !*v)
		return fail(err, len, "%s takes one string", o->key);
	free(*field);
	*field = strdup(v);
	return *field ? 0 : fail(err, len, "out of memory");
}

/* The block's options given once each; an Instance may repeat. */
static const char *const single_options[] = {"Scope", "CgroupBackend", "Domain",
					     "BPFFS"};
#define NSINGLE (sizeof(single_options) / sizeof(single_options[0]))

/* Refuses a second Scope (or other single option): the first would be
 * dropped without a word. */
static int once(const oconfig_item_t *o, bool *seen, char *err, size_t len)
{
	for (size_t i = 0; i < NSINGLE; i++) {
		if (strcasecmp(o->key, single_options[i]))
			continue;
		if (seen[i])
			return fail(err, len, "%s is given twice", o->key);
		seen[i] = true;
	}
	return 0;
}

static int top_option(const oconfig_item_t *o, struct settings *s, bool *seen,
		      char *err, size_t len)
{
	const char *v = one_string(o);

	if (!strcasecmp(o->key, "Instance"))
		return instance_block(o, s, err, len);
	if (o->children_num)
		return fail(err, len, "%s is an option, not a block", o->key);
	if (once(o, seen, err, len))
		return -1;
	if (!strcasecmp(o->key, "Scope")) {
		if (v && !strcasecmp(v, "process"))
			s->scope = SHPMU_SCOPE_PROCESS;
		else if (v && !strcasecmp(v, "host"))
			s->scope = SHPMU_SCOPE_HOST;
		else
			return fail(err, len,
				    "Scope takes \"process\" or \"host\"");
		return 0;
	}
	if (!strcasecmp(o->key, "CgroupBackend")) {
		if (v && !strcasecmp(v, "auto"))
			s->cgroup_backend = SHPMU_CGROUP_BACKEND_AUTO;
		else if (v && !strcasecmp(v, "perf"))
			s->cgroup_backend = SHPMU_CGROUP_BACKEND_PERF;
		else if (v && !strcasecmp(v, "bpf"))
			s->cgroup_backend = SHPMU_CGROUP_BACKEND_BPF;
		else
			return fail(err, len,
				    "CgroupBackend takes \"auto\", \"perf\" "
				    "or \"bpf\"");
		return 0;
	}
	if (!strcasecmp(o->key, "Domain"))
		return set_string(&s->domain, o, err, len);
	if (!strcasecmp(o->key, "BPFFS"))
		return set_string(&s->bpffs_dir, o, err, len);
	return fail(err, len,
		    "unknown option %s (the block takes Scope, Domain, BPFFS, "
		    "CgroupBackend and Instance blocks)",
		    o->key);
}

int settings_parse(const oconfig_item_t *block, struct settings *s, char *err,
		   size_t len)
{
	bool seen[NSINGLE] = {false};

	*s = (struct settings){.scope = SHPMU_SCOPE_PROCESS};
	for (int i = 0; i < block->children_num; i++)
		if (top_option(&block->children[i], s, seen, err, len))
			goto bad;
	if (s->scope != SHPMU_SCOPE_HOST && (s->domain || s->bpffs_dir)) {
		fail(err, len, "%s is for Scope \"host\" only",
		     s->domain ? "Domain" : "BPFFS");
		goto bad;
	}
	if (!s->ninstances) {
		fail(err, len, "no Instance blocks: nothing to count");
		goto bad;
	}
	return 0;
bad:
	settings_free(s);
	return -1;
}

void settings_free(struct settings *s)
{
	for (size_t i = 0; i < s->ninstances; i++) {
		struct instance_settings *in = &s->instances[i];

		for (size_t e = 0; e < in->nevents; e++)
			free(in->events[e]);
		for (size_t w = 0; w < in->nwheres; w++)
			free(in->wheres[w].text);
		free(in->events);
		free(in->wheres);
		free(in->name);
	}
	free(s->instances);
	free(s->domain);
	free(s->bpffs_dir);
	*s = (struct settings){0};
}
