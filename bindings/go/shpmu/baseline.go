// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

/*
#include <time.h>
#include <shpmu/shpmu.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// n shpmu_read calls from C: the baseline the binding's Read is held to.
static long long read_loop(struct shpmu *pmu, int h, long long n)
{
	struct shpmu_count c;
	long long start = now_ns();

	for (long long i = 0; i < n; i++)
		if (shpmu_read(pmu, h, &c))
			return -1;
	return now_ns() - start;
}

// One shpmu_read, for a Go loop of bare cgo calls: what cgo costs
// without the binding's lock and checks.
static int read_once(struct shpmu *pmu, int h)
{
	struct shpmu_count c;

	return shpmu_read(pmu, h, &c);
}

static long long read_many_loop(struct shpmu *pmu, const int *hs, size_t k,
				struct shpmu_count *out, long long n)
{
	long long start = now_ns();

	for (long long i = 0; i < n; i++)
		if (shpmu_read_many(pmu, hs, k, out))
			return -1;
	return now_ns() - start;
}
*/
import "C"

import (
	"time"
	"unsafe"
)

// The baselines of the overhead benchmark (a test file cannot use cgo):
// the time n calls take when C makes them, and one bare cgo call.

func cReadLoop(h *Handle, n int) time.Duration {
	return time.Duration(C.read_loop(h.ctx.pmu, h.id, C.longlong(n)))
}

func cgoReadOnce(h *Handle) { C.read_once(h.ctx.pmu, h.id) }

func cReadManyLoop(c *Context, hs []*Handle, n int) time.Duration {
	ids := make([]C.int, len(hs))
	for i, h := range hs {
		ids[i] = h.id
	}
	out := make([]C.struct_shpmu_count, len(hs))
	return time.Duration(C.read_many_loop(c.pmu, &ids[0],
		C.size_t(len(ids)), &out[0], C.longlong(n)))
}

// cScale is the library's shpmu_scale, for the test that holds Scaled to
// it.
func cScale(c Count) uint64 {
	return uint64(C.shpmu_scale((*C.struct_shpmu_count)(unsafe.Pointer(&c))))
}
