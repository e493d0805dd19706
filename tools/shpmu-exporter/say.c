// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The exporter's messages: one line each on stderr, named. */
#include <stdarg.h>
#include <stdio.h>

#include "exporter.h"

void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("shpmu-exporter: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
