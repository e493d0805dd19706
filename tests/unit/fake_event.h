/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A kernel event made in memory alone, for the tests of the parts that
 * only compute (the window, the registry, the handle table). */
#ifndef SHPMU_TEST_FAKE_EVENT_H
#define SHPMU_TEST_FAKE_EVENT_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/kevent.h"
#include "core/key.h"

/* A kernel event of nfds sources and one count. */
static inline struct kevent *fake_event(uint32_t nfds)
{
	struct kevent *ev = calloc(1, sizeof(*ev) + sizeof(struct event_key));

	cr_assert(ev);
	ev->nfds = nfds;
	ev->nvals = KVAL_COUNT + 1;
	ev->key.nevents = 1;
	return ev;
}

#endif
