// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// ErrClosed matches (with errors.Is) the error of a call on a Handle or
// Context that was closed. Such an error also matches syscall.EBADF.
var ErrClosed = errors.New("shpmu: handle or context is closed")

// Error is the error of a library call.
type Error struct {
	// Op names the call and what it was on ("open task-clock",
	// "read", "new").
	Op string
	// Errno is what the library returned; Unwrap gives it, so
	// errors.Is(err, syscall.ENOENT) works.
	Errno syscall.Errno
	// Explanation is the library's text on what the error means and
	// what to do about it (shpmu_explain), or the reason a call was
	// refused before it reached the library. It may be empty.
	Explanation string

	closed bool
}

// Error gives "shpmu: OP: the errno's text".
func (e *Error) Error() string {
	return fmt.Sprintf("shpmu: %s: %s", e.Op, e.Errno.Error())
}

// Unwrap gives the errno.
func (e *Error) Unwrap() error { return e.Errno }

// Is matches ErrClosed for a call on a closed handle or context.
func (e *Error) Is(target error) bool { return e.closed && target == ErrClosed }

func errClosed(op string) error {
	return &Error{Op: op, Errno: syscall.EBADF, closed: true,
		Explanation: "the handle or its context was closed"}
}

// checkCString refuses a string C would read cut short at a NUL byte, and
// an empty one where empty means nothing.
func checkCString(op, what, s string, emptyOK bool) error {
	if s == "" && !emptyOK {
		return errInvalid(op, "an empty "+what)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return errInvalid(op, "a NUL byte in the "+what)
	}
	return nil
}

// errInvalid is an argument the binding refuses before calling the library.
func errInvalid(op, why string) error {
	return &Error{Op: op, Errno: syscall.EINVAL, Explanation: why}
}
