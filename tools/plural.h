/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The tools' counts in words: "1 ref", "2 refs". (The library has its own
 * in lib/core/log.h: the tools see only its public header.) */
#ifndef SHPMU_TOOLS_PLURAL_H
#define SHPMU_TOOLS_PLURAL_H

#include <stdint.h>

/* What a noun takes after a count of n: "ref%s" with plural(n, "s"). */
static inline const char *plural(uint64_t n, const char *suffix)
{
	return n == 1 ? "" : suffix;
}

#endif
