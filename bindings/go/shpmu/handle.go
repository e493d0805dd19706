// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

/*
#include <errno.h>
#include <stdlib.h>
#include <shpmu/shpmu.h>
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Handle is one consumer's counter: it reports only what happened while
// it was enabled, however many handles share its kernel event. Close it
// when done; nothing closes it behind the caller's back.
type Handle struct {
	ctx     *Context
	id      C.int
	members int // events in a group handle, else 1
	// closed is set once, by Close. A call racing with Close may still
	// reach the library with the closed number: the library gives each
	// handle a generation, so that number is refused (EBADF), never
	// another handle's.
	closed atomic.Bool
}

// OpenFlags are options of OpenWith.
type OpenFlags uint

// NoMultiplex refuses (EBUSY) a new distinct hardware event that would
// not fit in the counters of a CPU it counts on, so that nothing the
// context counts is multiplexed because of it. An open that shares an
// existing kernel event is never refused.
const NoMultiplex OpenFlags = C.SHPMU_OPEN_NO_MULTIPLEX

// Open opens a handle on attr and target, sharing a kernel event when one
// with the same attr and target is open. attr.Disabled makes it count
// nothing until Enable. Errors: EINVAL (a bad target, a CPU that is not
// online), EOPNOTSUPP, ENOENT (no such event or cgroup), EXDEV (a cgroup
// path outside the root), EMFILE, ENOSPC, EACCES, and the kernel's.
func (c *Context) Open(attr Attr, t Target) (*Handle, error) {
	return c.OpenWith(attr, t, 0)
}

// OpenWith is Open with flags (NoMultiplex).
func (c *Context) OpenWith(attr Attr, t Target, flags OpenFlags) (*Handle, error) {
	op := fmt.Sprintf("open type %d config %#x", attr.Type, attr.Config)
	ct, err := t.toC()
	if err != nil {
		return nil, err
	}
	defer ct.free()
	var ca C.struct_perf_event_attr
	attr.toC(&ca)
	var o C.struct_shpmu_open_opts
	o.sz = C.sizeof_struct_shpmu_open_opts
	o.flags = C.uint(flags)
	return c.open(op, 1, func() C.int {
		return C.shpmu_open_opts(c.pmu, &ca, &ct.t, &o)
	})
}

// OpenName opens an event by name (see EventAttr), counting from now.
func (c *Context) OpenName(name string, t Target) (*Handle, error) {
	op := "open " + name
	if err := checkName(op, name); err != nil {
		return nil, err
	}
	ct, err := t.toC()
	if err != nil {
		return nil, err
	}
	defer ct.free()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return c.open(op, 1, func() C.int {
		return C.shpmu_open_name(c.pmu, cname, &ct.t)
	})
}

// OpenGroup opens attrs as one kernel group per CPU, scheduled all or
// nothing, leader first; attrs[0].Disabled says whether the group counts
// from now. The handle reads all members with ReadGroup; Read gives the
// leader. 1 to GroupMax attrs.
func (c *Context) OpenGroup(attrs []Attr, t Target) (*Handle, error) {
	op := fmt.Sprintf("open group of %d", len(attrs))
	if len(attrs) == 0 || len(attrs) > GroupMax {
		return nil, errInvalid(op, fmt.Sprintf(
			"a group has 1 to %d events", GroupMax))
	}
	ct, err := t.toC()
	if err != nil {
		return nil, err
	}
	defer ct.free()
	cattrs := make([]C.struct_perf_event_attr, len(attrs))
	for i := range attrs {
		attrs[i].toC(&cattrs[i])
	}
	return c.open(op, len(attrs), func() C.int {
		return C.shpmu_open_group(c.pmu, &cattrs[0],
			C.size_t(len(cattrs)), &ct.t)
	})
}

// GroupMax is the most events one group may hold.
const GroupMax = C.SHPMU_GROUP_MAX

func (c *Context) open(op string, members int, call func() C.int) (*Handle, error) {
	if err := c.lock(op); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	h := call()
	if h < 0 {
		return nil, c.fail(op, -1, h)
	}
	return &Handle{ctx: c, id: h, members: members}, nil
}

// Members is the number of events of a group handle, 1 for others.
func (h *Handle) Members() int { return h.members }

// Context is the context the handle belongs to.
func (h *Handle) Context() *Context { return h.ctx }

// call runs a library call on the handle under the context's lock.
func (h *Handle) call(op string, fn func(pmu *C.struct_shpmu, id C.int) C.int) error {
	c := h.ctx
	if err := c.lock(op); err != nil {
		return err
	}
	defer c.mu.RUnlock()
	if h.closed.Load() {
		return errClosed(op)
	}
	if rc := fn(c.pmu, h.id); rc < 0 {
		return h.fail(op, rc)
	}
	return nil
}

// fail is c.fail for a call on h: EBADF after a racing Close is ErrClosed.
func (h *Handle) fail(op string, rc C.int) error {
	if rc == -C.EBADF && h.closed.Load() {
		return errClosed(op)
	}
	return h.ctx.fail(op, h.id, rc)
}

// Enable starts counting (a no-op on a handle that counts, except that it
// brings a pinned event back from error state). Errors: ENODATA (a
// pinned event that still cannot get a counter), the kernel's.
func (h *Handle) Enable() error {
	return h.call("enable", func(p *C.struct_shpmu, id C.int) C.int {
		return C.shpmu_enable(p, id)
	})
}

// Disable stops counting, keeping what the handle counted.
func (h *Handle) Disable() error {
	return h.call("disable", func(p *C.struct_shpmu, id C.int) C.int {
		return C.shpmu_disable(p, id)
	})
}

// Reset zeroes the handle's count and times; other handles on the same
// kernel event are untouched. Errors: ENODATA (error state).
func (h *Handle) Reset() error {
	return h.call("reset", func(p *C.struct_shpmu, id C.int) C.int {
		return C.shpmu_reset(p, id)
	})
}

// Close closes the handle; its kernel event closes with its last handle.
// A second Close returns an error matching ErrClosed.
func (h *Handle) Close() error {
	c := h.ctx
	if err := c.lock("close"); err != nil {
		return err
	}
	defer c.mu.RUnlock()
	if !h.closed.CompareAndSwap(false, true) {
		return errClosed("close")
	}
	if rc := C.shpmu_close(c.pmu, h.id); rc < 0 {
		return c.fail("close", -1, rc)
	}
	return nil
}
