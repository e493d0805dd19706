// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

/*
#cgo pkg-config: libshpmu
#include <errno.h>
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Backend says how cgroup targets are counted.
type Backend int

const (
	// BackendAuto counts a context's first cgroups with classic perf
	// events and the rest with BPF where it works, from the cgroup
	// event at which the classic ones would hold more fds than BPF (the
	// 12th on 2 CPUs; libshpmu(7), BACKENDS).
	BackendAuto Backend = C.SHPMU_CGROUP_BACKEND_AUTO
	// BackendPerf opens one classic cgroup event per cgroup per CPU.
	BackendPerf Backend = C.SHPMU_CGROUP_BACKEND_PERF
	// BackendBPF opens one event per CPU per distinct event for all
	// cgroups, and credits each context switch to the outgoing task's
	// cgroups with a BPF program (cgroup2, CAP_BPF and CAP_PERFMON).
	BackendBPF Backend = C.SHPMU_CGROUP_BACKEND_BPF
)

// Scope says who shares kernel events.
type Scope int

const (
	// ScopeProcess shares events between the handles of one Context.
	ScopeProcess Scope = C.SHPMU_SCOPE_PROCESS
	// ScopeHost shares events with every process whose context joins
	// the same domain under the same BPF filesystem directory.
	ScopeHost Scope = C.SHPMU_SCOPE_HOST
)

// LogLevel is the level of a message passed to Options.Log.
type LogLevel int

const (
	LogError LogLevel = C.SHPMU_LOG_ERROR // a call failed; the message says why
	LogWarn  LogLevel = C.SHPMU_LOG_WARN  // something degraded but the call went on, or a choice the caller should know of (said once)
	LogInfo  LogLevel = C.SHPMU_LOG_INFO  // a decision worth knowing about
	LogDebug LogLevel = C.SHPMU_LOG_DEBUG // per-call detail
)

// Options configure a Context. The zero value (or a nil *Options) is the
// library's default: process scope, cgroups by AUTO (classic, then BPF
// where it works), sharing on, quiet.
type Options struct {
	// NoSharing gives every open its own kernel event (a baseline).
	NoSharing bool
	// CgroupRoot is the cgroup mount to use; "" discovers the cgroup2
	// (or v1 perf_event) mount.
	CgroupRoot string
	// Backend counts cgroup targets (BackendAuto by default).
	Backend Backend
	// Scope says who shares events (ScopeProcess by default).
	Scope Scope
	// Domain is the host-scope domain to join ("" = "default").
	Domain string
	// BPFFSDir is the host-scope directory on a BPF filesystem
	// ("" = "/sys/fs/bpf/shpmu").
	BPFFSDir string
	// LockTimeout is the longest host-scope wait for the domain's lock
	// (0 = 5 s); it is rounded up to whole milliseconds.
	LockTimeout time.Duration
	// Log, when set, receives every message of the library. It is
	// called from inside the call that logs, while the library holds
	// its locks, possibly from many goroutines at once: it must not
	// call the context (that call would fail with EDEADLK or wait for
	// itself). A panic in Log is recovered and that message dropped,
	// so that the library's locks are released.
	Log func(level LogLevel, msg string)
}

// Context owns kernel events and the handles on them (libshpmu's struct
// shpmu). Its methods and its handles' are safe for concurrent use.
type Context struct {
	// mu is held for reading by every call and for writing by Close,
	// which frees pmu: no call runs on a freed context.
	mu   sync.RWMutex
	pmu  *C.struct_shpmu
	sink cgo.Handle
}

// logSink is what the library's log callback reaches: the caller's
// function, and while New runs, the last error it logged.
type logSink struct {
	fn func(LogLevel, string)

	mu        sync.Mutex
	lastError string
}

//export shpmuGoLog
func shpmuGoLog(level C.int, msg *C.char, arg C.uintptr_t) {
	// A panic must not unwind through the library's frames: they hold
	// its locks.
	defer func() { recover() }()
	s := cgo.Handle(arg).Value().(*logSink)
	text := C.GoString(msg)
	if LogLevel(level) == LogError {
		s.mu.Lock()
		s.lastError = text
		s.mu.Unlock()
	}
	if s.fn != nil {
		s.fn(LogLevel(level), text)
	}
}

// cstring gives a C copy of s, or NULL for "" (the library's default).
func cstring(s string) *C.char {
	if s == "" {
		return nil
	}
	return C.CString(s)
}

// New makes a Context. Errors: EINVAL (bad options), EOPNOTSUPP (a
// backend or scope that cannot work here), and in host scope ENOENT (no
// BPF filesystem), EPERM, EACCES, ELOOP, EPROTO, EUSERS and ETIMEDOUT;
// the error's Explanation is what the library logged about it.
func New(opts *Options) (*Context, error) {
	if opts == nil {
		opts = &Options{}
	}
	timeoutMs := (opts.LockTimeout + time.Millisecond - 1) / time.Millisecond
	if opts.LockTimeout < 0 || timeoutMs >= 1<<32 {
		return nil, errInvalid("new", "LockTimeout out of range")
	}
	for what, s := range map[string]string{"CgroupRoot": opts.CgroupRoot,
		"Domain": opts.Domain, "BPFFSDir": opts.BPFFSDir} {
		if err := checkCString("new", what, s, true); err != nil {
			return nil, err
		}
	}
	var o C.struct_shpmu_opts
	o.sz = C.sizeof_struct_shpmu_opts
	if opts.NoSharing {
		o.flags |= C.SHPMU_F_NO_SHARING
	}
	o.cgroup_backend = uint32(opts.Backend)
	o.scope = uint32(opts.Scope)
	o.lock_timeout_ms = C.uint(timeoutMs)
	o.cgroup_root = cstring(opts.CgroupRoot)
	o.domain = cstring(opts.Domain)
	o.bpffs_dir = cstring(opts.BPFFSDir)
	defer C.free(unsafe.Pointer(o.cgroup_root))
	defer C.free(unsafe.Pointer(o.domain))
	defer C.free(unsafe.Pointer(o.bpffs_dir))

	sink := &logSink{fn: opts.Log}
	handle := cgo.NewHandle(sink)
	pmu, err := C.shpmu_go_new(&o, C.uintptr_t(handle))
	if pmu == nil {
		handle.Delete()
		errno, _ := err.(syscall.Errno)
		if errno == 0 {
			errno = syscall.ENOMEM
		}
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return nil, &Error{Op: "new", Errno: errno,
			Explanation: sink.lastError}
	}
	return &Context{pmu: pmu, sink: handle}, nil
}

// Close closes every handle and kernel event of the context and frees it.
// It waits for calls in flight on the context; later calls return an
// error matching ErrClosed, as does a second Close.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pmu == nil {
		return errClosed("close context")
	}
	C.shpmu_free(c.pmu)
	c.pmu = nil
	c.sink.Delete()
	return nil
}

// lock takes the context for a call, or says it is closed. The caller
// calls c.mu.RUnlock() when it has nil.
func (c *Context) lock(op string) error {
	c.mu.RLock()
	if c.pmu == nil {
		c.mu.RUnlock()
		return errClosed(op)
	}
	return nil
}

// fail makes the error of a call that returned rc < 0 on handle h (-1 for
// none), with the library's explanation. The caller holds c.mu.
func (c *Context) fail(op string, h C.int, rc C.int) error {
	e := &Error{Op: op, Errno: syscall.Errno(-rc)}
	var buf [2048]C.char
	got := C.shpmu_explain(c.pmu, h, rc, &buf[0], C.size_t(len(buf)))
	if got == -C.EBADF && h >= 0 {
		got = C.shpmu_explain(c.pmu, -1, rc, &buf[0], C.size_t(len(buf)))
	}
	if got == 0 {
		e.Explanation = C.GoString(&buf[0])
	}
	return e
}

// Stats are the sharing statistics of a context.
type Stats struct {
	Handles      uint64 // open handles
	KernelEvents uint64 // distinct kernel events behind them
	KernelFDs    uint64 // perf_event fds held
	Opens        uint64 // successful opens since New
	SharedOpens  uint64 // of those, served by an existing kernel event
	// SwitchesUnseen is the context switches the kernel made without
	// running the BPF backend's program, on every CPU since it was
	// loaded (in host scope, the domain's); 0 without it. See
	// (*Handle).ReadBound.
	SwitchesUnseen uint64
	// UnattributedTime is the CPU time, in ns summed over CPUs, whose
	// counts the BPF backend could not attribute because of them.
	UnattributedTime uint64
}

// Stats reads a consistent snapshot of the sharing statistics.
func (c *Context) Stats() (Stats, error) {
	if err := c.lock("stats"); err != nil {
		return Stats{}, err
	}
	defer c.mu.RUnlock()
	var s C.struct_shpmu_stats
	if rc := C.shpmu_get_stats(c.pmu, &s); rc < 0 {
		return Stats{}, c.fail("stats", -1, rc)
	}
	return Stats{Handles: uint64(s.handles),
		KernelEvents: uint64(s.kernel_events),
		KernelFDs:    uint64(s.kernel_fds), Opens: uint64(s.opens),
		SharedOpens:      uint64(s.shared_opens),
		SwitchesUnseen:   uint64(s.switches_unseen),
		UnattributedTime: uint64(s.unattributed_ns)}, nil
}

// Version gives the library's version as "major.minor.patch".
func Version() string {
	v := uint(C.shpmu_version())
	return fmt.Sprintf("%d.%d.%d", v>>16, v>>8&0xff, v&0xff)
}
