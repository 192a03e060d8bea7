"""meshcast.Error and its subclasses, one per mc_status_t, carrying the C library's message."""
from __future__ import annotations

from typing import Dict, Type


class Error(Exception):
    """A failed meshcast call. str(e) is the C library's one-line message (mc_last_error);
    e.status is the mc_status_t code."""

    status = -10

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(Error, ValueError):
    """Bad argument or malformed input (MC_ERR_INVALID)."""
    status = -1


class OutOfMemoryError(Error, MemoryError):
    """An allocation failed (MC_ERR_NOMEM)."""
    status = -2


class SizeOverflowError(Error, OverflowError):
    """A size does not fit in 64 bits (MC_ERR_OVERFLOW)."""
    status = -3


class UnsupportedError(Error):
    """A valid request this build or notation cannot express (MC_ERR_UNSUPPORTED)."""
    status = -4


class FileError(Error, OSError):
    """A file or stream error (MC_ERR_IO)."""
    status = -5


class NotFoundError(Error, LookupError):
    """A named thing (topology, setting) does not exist (MC_ERR_NOT_FOUND)."""
    status = -6


class PeerTimeoutError(Error, TimeoutError):
    """A peer did not answer in time (MC_ERR_TIMEOUT)."""
    status = -7


class PeerError(Error):
    """A peer failed (MC_ERR_PEER)."""
    status = -8


class MismatchError(Error):
    """Ranks disagree, e.g. on the plan (MC_ERR_MISMATCH)."""
    status = -9


class InternalError(Error):
    """A bug in meshcast (MC_ERR_INTERNAL)."""
    status = -10


class TileError(InvalidArgumentError):
    """A tensor given as a tile does not match the layout's tile (shape, dtype, contiguity,
    memory). Raised by the Python package before any C call."""


_BY_STATUS: Dict[int, Type[Error]] = {
    cls.status: cls
    for cls in (InvalidArgumentError, OutOfMemoryError, SizeOverflowError, UnsupportedError,
                FileError, NotFoundError, PeerTimeoutError, PeerError, MismatchError,
                InternalError)
}


def check(status: int) -> None:
    """Raises the Error subclass of a failed status with the calling thread's C message."""
    if status < 0:
        raise error(status)


def error(status: int) -> Error:
    from ._capi import C
    msg = C.mc_last_error().decode(errors="replace")
    if not msg:
        msg = C.mc_status_string(status).decode(errors="replace")
    return _BY_STATUS.get(status, InternalError)(msg, status)
