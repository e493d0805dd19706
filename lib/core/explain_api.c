// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* shpmu_explain: an error a call returned, in words, with what to do. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/explain.h"
#include "core/hw_pmus.h"
#include "core/kevent.h"
#include "core/key.h"
#include "sys/sys.h"

/* What the text needs of handle h's event, copied under its lock. */
struct about {
	bool known; /* a handle was named */
	int h;
	struct event_key event; /* the leader's */
	uint32_t nevents;
	bool classic; /* counted by classic perf fds, not the BPF backend */
};

/* As PMU discovery read it (at the context's first hardware event). */
static bool watchdog_on(struct shpmu *pmu)
{
	const struct hw_pmus *hw = hw_pmus_known(pmu);

	return hw && hw->watchdog;
}

static void explain_error_state(struct shpmu *pmu, const struct about *a,
				char *buf, size_t len)
{
	bool watchdog = watchdog_on(pmu);
	char what[128] = "its kernel event";

	if (a->known)
		snprintf(what, sizeof(what),
			 "handle %d's kernel event (type %u, config %#llx%s%s)",
			 a->h, a->event.type,
			 (unsigned long long)a->event.config,
			 a->event.bits & KEY_PINNED ? ", pinned" : "",
			 a->nevents > 1 ? ", a group" : "");
	snprintf(buf, len,
		 "%s is in error state: the kernel could not give it a "
		 "hardware counter, so it counts nothing and read(2) returns "
		 "no data. Other pinned or exclusive events hold the "
		 "counters%s. Free counters (close those events%s), then "
		 "shpmu_enable() the handle to bring it back",
		 what,
		 watchdog ? ", and the NMI watchdog holds one "
			    "(/proc/sys/kernel/nmi_watchdog is 1)"
			  : "",
		 watchdog ? ", or echo 0 > /proc/sys/kernel/nmi_watchdog" : "");
}

static void explain_one(struct shpmu *pmu, const struct about *a, int err,
			char *buf, size_t len)
{
	unsigned char attr[SHPMU_ATTR_SIZE_KNOWN];

	if (a->known)
		key_to_attr(&a->event, 0, attr);
	switch (err) {
	case -ENODATA:
		explain_error_state(pmu, a, buf, len);
		return;
	case -EBUSY:
		snprintf(buf, len,
			 "no hardware counter is left for another distinct "
			 "event on a CPU the target spans, or among the "
			 "events that follow tasks (the NMI watchdog may hold "
			 "one: /proc/sys/kernel/nmi_watchdog): with "
			 "SHPMU_OPEN_NO_MULTIPLEX the open was refused, and "
			 "the log names the PMU, the CPU and what holds the "
			 "counters. Share an event already open (the same "
			 "attr and target cost no counter), close handles on "
			 "other distinct events, or open without the flag and "
			 "scale the counts with shpmu_scale(). Without the "
			 "flag, EBUSY is the kernel's: an exclusive event "
			 "holds the PMU");
		return;
	case -ENOENT:
		if (a->known) {
			snprintf(buf, len,
				 "handle %d does not count that CPU "
				 "(shpmu_read_cpu takes a CPU its target "
				 "spans)",
				 a->h);
			return;
		}
		break;
	case -EBADF:
		snprintf(buf, len,
			 "not an open handle: closed already, never opened, or "
			 "a number from another context");
		return;
	case -EINVAL:
		snprintf(buf, len,
			 "a bad argument: a NULL pointer, a bad size, flag or "
			 "target (the log callback names it)");
		return;
	case -ERANGE:
		snprintf(buf, len,
			 "the room given is too small: a buffer, or an array "
			 "smaller than the group");
		return;
	case -EOPNOTSUPP:
		/* On an open handle, not an open's: a call that only the
		 * BPF backend answers. */
		if (a->known && a->classic) {
			snprintf(buf, len,
				 "handle %d is counted by classic perf fds: "
				 "they keep nothing in memory for "
				 "shpmu_read_cached() and leave nothing "
				 "unattributed for shpmu_read_unattributed() "
				 "(their counts are exact: shpmu_read_bound() "
				 "gives a bound of 0); shpmu_read() it",
				 a->h);
			return;
		}
		break;
	}
	if (!explain_common(pmu, err,
			    a->known ? (struct perf_event_attr *)attr : NULL,
			    buf, len))
		snprintf(buf, len, "%s", strerror(-err));
}

static int explain_checked(struct shpmu *pmu, int h, int err, char *buf,
			   size_t len)
{
	struct about a = {.known = h >= 0, .h = h};
	char text[1024];
	struct handle *slot;
	size_t n;

	if (!buf || !len || err >= 0 || err < -4095 || h < -1)
		return shpmu_err(-EINVAL);
	if (a.known) {
		slot = api_handle(pmu, h, "shpmu_explain");
		if (!slot)
			return shpmu_err(-EBADF);
		a.event = slot->ev->key.events[0];
		a.nevents = slot->ev->key.nevents;
		a.classic = !kevent_has_cache(slot->ev);
		handle_unlock(&pmu->handles, h);
	}
	explain_one(pmu, &a, err, text, sizeof(text));
	n = strlen(text);
	if (n >= len)
		return shpmu_err(-ERANGE);
	memcpy(buf, text, n + 1);
	return 0;
}

int shpmu_explain(struct shpmu *pmu, int h, int err, char *buf, size_t len)
{
	API_CALL(pmu, explain_checked(pmu, h, err, buf, len));
}
