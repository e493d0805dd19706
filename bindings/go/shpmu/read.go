// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

/*
#include <errno.h>
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"math/bits"
	"sync"
	"unsafe"
)

// Count is one handle's reading. Its layout is the library's struct
// shpmu_count, so ReadMany reads into a []Count without copying.
type Count struct {
	// Value is the events counted in the handle's windows.
	Value uint64
	// TimeEnabled is the ns the event was enabled within the handle's
	// windows, summed over the CPUs it spans (N CPUs: about N times the
	// wall time, so it can pass what a time.Duration holds).
	TimeEnabled uint64
	// TimeRunning is the ns of that the event was on the PMU; less
	// than TimeEnabled when the kernel multiplexed it.
	TimeRunning uint64
}

// The layout check: this fails to compile if Count and struct shpmu_count
// ever differ in size or in where a field lies.
var _ = [1]struct{}{}[unsafe.Sizeof(Count{})-C.sizeof_struct_shpmu_count]
var _ = [1]struct{}{}[C.sizeof_struct_shpmu_count-unsafe.Sizeof(Count{})]
var _ = [1]struct{}{}[unsafe.Offsetof(Count{}.TimeEnabled)-
	unsafe.Offsetof(C.struct_shpmu_count{}.time_enabled)]
var _ = [1]struct{}{}[unsafe.Offsetof(Count{}.TimeRunning)-
	unsafe.Offsetof(C.struct_shpmu_count{}.time_running)]

// Scaled estimates the count over the whole enabled time when the event
// was multiplexed: Value × TimeEnabled / TimeRunning, rounded down,
// without overflow (math.MaxUint64 when it does not fit). It is 0 when the
// event never ran, and Value when it ran all the time it was enabled (as
// libshpmu's shpmu_scale).
func (c Count) Scaled() uint64 {
	enabled, running := c.TimeEnabled, c.TimeRunning
	if running == 0 {
		return 0
	}
	if running >= enabled {
		return c.Value
	}
	hi, lo := bits.Mul64(c.Value, enabled)
	if hi >= running {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, running)
	return q
}

func countFromC(c *C.struct_shpmu_count) Count {
	return *(*Count)(unsafe.Pointer(c))
}

// reading is the read calls': one call, its reading by value.
func (h *Handle) reading(op string, how C.int, cpu C.int) (C.struct_shpmu_go_reading, error) {
	c := h.ctx
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.pmu == nil || h.closed.Load() {
		return C.struct_shpmu_go_reading{}, errClosed(op)
	}
	r := C.shpmu_go_read(c.pmu, h.id, how, cpu)
	if r.rc < 0 {
		return C.struct_shpmu_go_reading{}, h.fail(op, r.rc)
	}
	return r, nil
}

// read is Read, ReadCached, ReadCPU and ReadUnattributed: their count.
func (h *Handle) read(op string, how C.int, cpu C.int) (Count, error) {
	r, err := h.reading(op, how, cpu)
	if err != nil {
		return Count{}, err
	}
	return countFromC(&r.count), nil
}

// Read reads the handle: its count and times summed over the CPUs it
// spans, exact to the moment. Errors: ENODATA (a pinned event in error
// state: see the error's Explanation), EIO, the kernel's.
func (h *Handle) Read() (Count, error) {
	return h.read("read", C.SHPMU_GO_READ, 0)
}

// ReadCached reads a handle counted by the BPF backend without a system
// call, as of each CPU's last settle. Errors: EOPNOTSUPP (a handle
// counted by classic perf events: Read it).
func (h *Handle) ReadCached() (Count, error) {
	return h.read("read cached", C.SHPMU_GO_READ_CACHED, 0)
}

// ReadBound reads the handle as Read does, with how far below the truth
// its Value may be: the bound, in Value's units (not scaled). Classic perf
// events and CPU targets count exactly: their bound is 0. Where the BPF
// backend counts the handle, a kernel that switches tasks without running
// its program leaves what the backend cannot prove whose unattributed,
// never guessed (libshpmu(7), BACKENDS): Value then never exceeds the
// truth, and falls short of it by at most the bound, what went
// unattributed of the handle's event on its CPUs while it was enabled.
// Errors: Read's.
func (h *Handle) ReadBound() (Count, uint64, error) {
	r, err := h.reading("read bound", C.SHPMU_GO_READ_BOUND, 0)
	if err != nil {
		return Count{}, 0, err
	}
	return countFromC(&r.count), uint64(r.bound), nil
}

// ReadUnattributed gives what the BPF backend could not attribute of the
// handle's event on cpu (-1: every CPU), since it began counting that
// event: the totals of every handle of the same event, with the times as
// they accrued. Errors: EOPNOTSUPP (a handle counted by classic perf
// events, which attribute everything), EINVAL (a CPU the backend does not
// know).
func (h *Handle) ReadUnattributed(cpu int) (Count, error) {
	if cpu < -1 || cpu >= 1<<31 {
		return Count{}, errInvalid("read unattributed", "no such CPU number")
	}
	return h.read("read unattributed", C.SHPMU_GO_READ_UNATTRIBUTED,
		C.int(cpu))
}

// ReadCPU reads one CPU's share of the handle (-1 for a handle on one
// kernel event). Errors: ENOENT (the handle does not span cpu).
func (h *Handle) ReadCPU(cpu int) (Count, error) {
	if cpu < -1 || cpu >= 1<<31 {
		return Count{}, errInvalid("read cpu", "no such CPU number")
	}
	return h.read("read cpu", C.SHPMU_GO_READ_CPU, C.int(cpu))
}

// ReadPMU reads the handle's share on one core PMU ("cpu", "cpu_core",
// "cpu_atom"), as on a hybrid machine. Errors: ENOENT (the handle counts
// nothing there).
func (h *Handle) ReadPMU(pmu string) (Count, error) {
	op := "read pmu " + pmu
	if err := checkCString(op, "PMU name", pmu, false); err != nil {
		return Count{}, err
	}
	name := C.CString(pmu)
	defer C.free(unsafe.Pointer(name))
	var out C.struct_shpmu_count
	err := h.call(op, func(p *C.struct_shpmu, id C.int) C.int {
		return C.shpmu_read_pmu(p, id, name, &out)
	})
	return countFromC(&out), err
}

// ReadGroup reads every member of a group handle, in OpenGroup's order,
// into out, with one read(2) per CPU; the times are the group's.
// Errors: ERANGE (out is shorter than the group).
func (h *Handle) ReadGroup(out []Count) error {
	if len(out) == 0 {
		return errInvalid("read group", "no room for the counts")
	}
	return h.call("read group", func(p *C.struct_shpmu, id C.int) C.int {
		return C.shpmu_read_group(p, id,
			(*C.struct_shpmu_count)(unsafe.Pointer(&out[0])),
			C.size_t(len(out)))
	})
}

// ids is scratch room for ReadMany's handle numbers.
var ids = sync.Pool{New: func() any { return new([]C.int) }}

// ReadMany reads every handle of hs into out[i], exactly what hs[i].Read
// would give, with one read(2) per kernel event involved however many
// handles share it. All handles must belong to c, and out must have room
// for them; on error out is not written.
func (c *Context) ReadMany(hs []*Handle, out []Count) error {
	if len(out) < len(hs) {
		return errInvalid("read many", fmt.Sprintf(
			"%d handles and room for %d counts", len(hs), len(out)))
	}
	if len(hs) == 0 {
		return nil
	}
	scratch := ids.Get().(*[]C.int)
	defer ids.Put(scratch)
	if cap(*scratch) < len(hs) {
		*scratch = make([]C.int, len(hs))
	}
	list := (*scratch)[:len(hs)]

	if err := c.lock("read many"); err != nil {
		return err
	}
	defer c.mu.RUnlock()
	for i, h := range hs {
		if h == nil || h.ctx != c {
			return errInvalid("read many", fmt.Sprintf(
				"handle %d is nil or of another context", i))
		}
		if h.closed.Load() {
			return errClosed(fmt.Sprintf("read many (handle %d)", i))
		}
		list[i] = h.id
	}
	rc := C.shpmu_read_many(c.pmu, &list[0], C.size_t(len(list)),
		(*C.struct_shpmu_count)(unsafe.Pointer(&out[0])))
	if rc == -C.EBADF {
		for i, h := range hs {
			if h.closed.Load() {
				return errClosed(fmt.Sprintf(
					"read many (handle %d)", i))
			}
		}
	}
	if rc < 0 {
		return c.fail("read many", -1, rc)
	}
	return nil
}
