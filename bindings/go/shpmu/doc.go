// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package shpmu is the Go binding of libshpmu, a C library that counts
// hardware and software performance events with Linux perf_event_open and
// serves identical requests (the same event on the same target) with one
// kernel event. Each Handle still reports only what happened while it was
// enabled.
//
// The binding links the installed library through cgo and pkg-config
// (libshpmu.pc), so build it against `meson install`, with
// PKG_CONFIG_PATH pointing at the prefix's lib/pkgconfig when that is not
// a system one.
//
// A Context owns every kernel event and handle; a Handle is one consumer's
// counter on one Target (a task, a process, a CPU, all CPUs, a cgroup).
// Contexts and handles are safe for use from many goroutines. Nothing is
// closed behind the caller's back: there is no finalizer, so Close each
// Handle (or the Context, which closes them all) when done; a call on a
// closed handle or context returns an error that matches ErrClosed.
//
// Errors are *Error values that wrap the errno the library returned, so
// errors.Is(err, syscall.EACCES) works, and they carry the library's
// explanation of what the error means and what to do about it.
//
// A task target with pid 0 means the calling OS thread. A goroutine moves
// between threads unless it calls runtime.LockOSThread, so to count
// "this goroutine" lock it to its thread and count Task(syscall.Gettid()),
// or count the whole Go process with Process(0).
package shpmu
