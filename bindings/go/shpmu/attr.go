// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

/*
#include <stdlib.h>
#include <linux/perf_event.h>
#include "glue.h"
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// Event types (perf_event_attr.type) of the kernel's generic PMUs.
const (
	TypeHardware   = C.PERF_TYPE_HARDWARE
	TypeSoftware   = C.PERF_TYPE_SOFTWARE
	TypeTracepoint = C.PERF_TYPE_TRACEPOINT
	TypeHWCache    = C.PERF_TYPE_HW_CACHE
	TypeRaw        = C.PERF_TYPE_RAW
)

// Configs of TypeHardware.
const (
	HWCPUCycles          = C.PERF_COUNT_HW_CPU_CYCLES
	HWInstructions       = C.PERF_COUNT_HW_INSTRUCTIONS
	HWCacheReferences    = C.PERF_COUNT_HW_CACHE_REFERENCES
	HWCacheMisses        = C.PERF_COUNT_HW_CACHE_MISSES
	HWBranchInstructions = C.PERF_COUNT_HW_BRANCH_INSTRUCTIONS
	HWBranchMisses       = C.PERF_COUNT_HW_BRANCH_MISSES
	HWRefCPUCycles       = C.PERF_COUNT_HW_REF_CPU_CYCLES
)

// Configs of TypeSoftware.
const (
	SWCPUClock        = C.PERF_COUNT_SW_CPU_CLOCK
	SWTaskClock       = C.PERF_COUNT_SW_TASK_CLOCK
	SWPageFaults      = C.PERF_COUNT_SW_PAGE_FAULTS
	SWContextSwitches = C.PERF_COUNT_SW_CONTEXT_SWITCHES
	SWCPUMigrations   = C.PERF_COUNT_SW_CPU_MIGRATIONS
	SWCgroupSwitches  = C.PERF_COUNT_SW_CGROUP_SWITCHES
)

// Attr is a counting event: the fields of perf_event_attr that counting
// uses. Attrs made by Context.EventAttr also keep any other field the
// event's encoding set.
type Attr struct {
	Type                     uint32
	Config, Config1, Config2 uint64

	Disabled      bool // counts nothing until Enable
	Inherit       bool // child tasks and threads count too
	Pinned        bool // always on a counter, or in error state
	Exclusive     bool // alone on the PMU while it runs
	ExcludeUser   bool
	ExcludeKernel bool
	ExcludeHV     bool
	ExcludeIdle   bool
	EnableOnExec  bool
	ExcludeHost   bool
	ExcludeGuest  bool

	encoded *C.struct_perf_event_attr // what EventAttr's encoding set
}

var attrFlags = []struct {
	bit   C.uint64_t
	field func(a *Attr) *bool
}{
	{C.SHPMU_GO_DISABLED, func(a *Attr) *bool { return &a.Disabled }},
	{C.SHPMU_GO_INHERIT, func(a *Attr) *bool { return &a.Inherit }},
	{C.SHPMU_GO_PINNED, func(a *Attr) *bool { return &a.Pinned }},
	{C.SHPMU_GO_EXCLUSIVE, func(a *Attr) *bool { return &a.Exclusive }},
	{C.SHPMU_GO_EXCLUDE_USER, func(a *Attr) *bool { return &a.ExcludeUser }},
	{C.SHPMU_GO_EXCLUDE_KERNEL, func(a *Attr) *bool { return &a.ExcludeKernel }},
	{C.SHPMU_GO_EXCLUDE_HV, func(a *Attr) *bool { return &a.ExcludeHV }},
	{C.SHPMU_GO_EXCLUDE_IDLE, func(a *Attr) *bool { return &a.ExcludeIdle }},
	{C.SHPMU_GO_ENABLE_ON_EXEC, func(a *Attr) *bool { return &a.EnableOnExec }},
	{C.SHPMU_GO_EXCLUDE_HOST, func(a *Attr) *bool { return &a.ExcludeHost }},
	{C.SHPMU_GO_EXCLUDE_GUEST, func(a *Attr) *bool { return &a.ExcludeGuest }},
}

// toC writes the attr in the library's form.
func (a *Attr) toC(out *C.struct_perf_event_attr) {
	if a.encoded != nil {
		*out = *a.encoded
	} else {
		*out = C.struct_perf_event_attr{}
	}
	g := C.struct_shpmu_go_attr{_type: C.uint32_t(a.Type),
		config: C.uint64_t(a.Config), config1: C.uint64_t(a.Config1),
		config2: C.uint64_t(a.Config2)}
	for _, f := range attrFlags {
		if *f.field(a) {
			g.flags |= f.bit
		}
	}
	C.shpmu_go_attr_set(out, &g)
}

func attrFromC(in *C.struct_perf_event_attr) Attr {
	var g C.struct_shpmu_go_attr
	C.shpmu_go_attr_get(in, &g)
	a := Attr{Type: uint32(g._type), Config: uint64(g.config),
		Config1: uint64(g.config1), Config2: uint64(g.config2)}
	for _, f := range attrFlags {
		*f.field(&a) = g.flags&f.bit != 0
	}
	a.encoded = new(C.struct_perf_event_attr)
	*a.encoded = *in
	return a
}

// checkName refuses an event name C cannot take.
func checkName(op, name string) error {
	return checkCString(op, "event name", name, false)
}

// EventAttr encodes an event name ("cycles", "task-clock", "cs:u",
// "INST_RETIRED.ANY", "perf::TASK-CLOCK") into an Attr, for OpenGroup
// or for changing it before Open. Errors: ENOENT (unknown name), EINVAL
// (a bad modifier).
func (c *Context) EventAttr(name string) (Attr, error) {
	op := "event attr " + name
	if err := checkName(op, name); err != nil {
		return Attr{}, err
	}
	if err := c.lock(op); err != nil {
		return Attr{}, err
	}
	defer c.mu.RUnlock()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var attr C.struct_perf_event_attr
	if rc := C.shpmu_event_attr(c.pmu, cname, &attr); rc < 0 {
		return Attr{}, c.fail(op, -1, rc)
	}
	return attrFromC(&attr), nil
}

// eventWalk is what ListEvents' callback reaches: the caller's function,
// and a panic it raised, raised again once the library's call is over.
type eventWalk struct {
	fn       func(name, desc string) bool
	panicked bool
	value    any
}

//export shpmuGoEvent
func shpmuGoEvent(name, desc *C.char, arg C.uintptr_t) (ret C.int) {
	w := cgo.Handle(arg).Value().(*eventWalk)
	defer func() {
		if v := recover(); v != nil {
			w.panicked, w.value, ret = true, v, 1
		}
	}()
	if w.fn(C.GoString(name), C.GoString(desc)) {
		return 0
	}
	return 1
}

// ListEvents calls fn with every event this machine's PMUs have
// ("pmu::event") and its description, as libpfm4 knows them, until fn
// returns false. fn must not call back into the context.
func (c *Context) ListEvents(fn func(name, desc string) bool) error {
	if fn == nil {
		return errInvalid("list events", "a nil function")
	}
	if err := c.lock("list events"); err != nil {
		return err
	}
	defer c.mu.RUnlock()
	w := &eventWalk{fn: fn}
	h := cgo.NewHandle(w)
	defer h.Delete()
	rc := C.shpmu_go_list_events(c.pmu, C.uintptr_t(h))
	if w.panicked {
		panic(w.value)
	}
	if rc < 0 {
		return c.fail("list events", -1, rc)
	}
	return nil
}
