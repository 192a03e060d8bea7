"""The base of every class that owns a C handle: close() once, context manager, __del__."""
from __future__ import annotations

from typing import Any, Callable, Optional

from .errors import InvalidArgumentError


class Handle:
    """Owns one C pointer, released by _destroy exactly once (close(), with-block exit or
    garbage collection)."""

    _ptr: Optional[int] = None
    _destroy: Callable[[Any], None]

    def _set(self, ptr: Optional[int]) -> None:
        self._ptr = ptr

    @property
    def ptr(self) -> int:
        """The C handle; raises once closed."""
        if self._ptr is None:
            raise InvalidArgumentError(f"{type(self).__name__} is closed")
        return self._ptr

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            type(self)._destroy(ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
