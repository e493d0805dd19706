# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The binding's exceptions: every library error is an :class:`Error`, an
:class:`OSError` carrying the errno and the library's explanation."""

from __future__ import annotations

import errno as _errno
import os

__all__ = [
    "Error",
    "ClosedError",
    "NotFoundError",
    "PermissionDeniedError",
    "NoProcessError",
    "TimedOutError",
]


class Error(OSError):
    """A call the library refused.

    ``errno`` is what it returned (positive), ``strerror`` the errno's
    text, ``op`` the call and what it was on, and ``explanation`` what the
    library says the error means and what to do about it (its
    ``shpmu_explain()``), or why the binding refused the call before it
    reached C. ENOENT, EACCES and EPERM, ESRCH and ETIMEDOUT errors also
    match Python's built-in exception for them (:class:`NotFoundError`
    is a ``FileNotFoundError``, and so on): ``except FileNotFoundError``
    catches an unknown event name or cgroup.

    >>> import shpmu
    >>> with shpmu.Context() as ctx:
    ...     try:
    ...         ctx.open("no-such-event")
    ...     except FileNotFoundError as e:
    ...         print(e.errno == errno.ENOENT, e.op)
    True open no-such-event
    """

    op: str
    explanation: str

    def __init__(self, errno: int, op: str, explanation: str = "") -> None:
        super().__init__(errno, os.strerror(errno))
        self.op = op
        self.explanation = explanation

    def __str__(self) -> str:
        text = f"shpmu: {self.op}: {self.strerror}"
        if self.explanation:
            text += f" ({self.explanation})"
        return text

    def __reduce__(self) -> tuple[object, ...]:
        return (make_error, (self.errno, self.op, self.explanation))


class ClosedError(Error):
    """A call on a handle or context that was closed (errno EBADF)."""

    def __init__(self, op: str, what: str = "handle or context") -> None:
        super().__init__(_errno.EBADF, op, f"the {what} was closed")

    def __reduce__(self) -> tuple[object, ...]:
        return (ClosedError, (self.op,))


class NotFoundError(Error, FileNotFoundError):
    """ENOENT: no such event, cgroup or CPU PMU."""


class PermissionDeniedError(Error, PermissionError):
    """EACCES or EPERM: the kernel or the domain refused this user."""


class NoProcessError(Error, ProcessLookupError):
    """ESRCH: the task or process is gone."""


class TimedOutError(Error, TimeoutError):
    """ETIMEDOUT: a host-scope domain's lock stayed held too long."""


_BY_ERRNO: dict[int, type[Error]] = {
    _errno.ENOENT: NotFoundError,
    _errno.EACCES: PermissionDeniedError,
    _errno.EPERM: PermissionDeniedError,
    _errno.ESRCH: NoProcessError,
    _errno.ETIMEDOUT: TimedOutError,
}


def make_error(errno: int, op: str, explanation: str = "") -> Error:
    """The Error for errno, of the class that also matches Python's
    built-in exception for it."""
    return _BY_ERRNO.get(errno, Error)(errno, op, explanation)


def invalid(op: str, why: str) -> Error:
    """An argument the binding refuses before it reaches the library."""
    return Error(_errno.EINVAL, op, why)
