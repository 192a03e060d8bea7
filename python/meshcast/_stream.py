"""C calls that write to a FILE*, captured as a Python string (open_memstream)."""
from __future__ import annotations

import ctypes
from typing import Callable

from .errors import check

_libc = ctypes.CDLL(None)
_libc.open_memstream.restype = ctypes.c_void_p
_libc.open_memstream.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]
_libc.fclose.argtypes = [ctypes.c_void_p]
_libc.free.argtypes = [ctypes.c_void_p]


def capture(write: Callable[[int], int]) -> str:
    """Calls write(FILE*) on an in-memory stream and returns what it wrote."""
    buf, size = ctypes.c_void_p(), ctypes.c_size_t()
    f = _libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not f:
        raise MemoryError("open_memstream failed")
    try:
        status = write(f)
    finally:
        _libc.fclose(f)
        text = ctypes.string_at(buf.value, size.value).decode() if buf.value else ""
        _libc.free(buf)
    check(status)
    return text
