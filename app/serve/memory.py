"""The server's memory bound (`--max-queue-mb`): bytes are reserved before they are taken.

A request reserves what it is about to hold (its body as it arrives, an image's decoded size read
from the header before any pixel is decoded) and releases it when that memory is let go (the crop
read, failed or its client gone). A reservation that would take the total over the limit is refused
(`OverBudget`: the API answers 503 with Retry-After), except when nothing else is reserved, so one
request larger than the limit is still served alone.

When the last reservation is released the C heap is trimmed (glibc's `malloc_trim`), so an idle
server gives back what a burst of large images took.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading


class OverBudget(RuntimeError):
    """The reservation does not fit beside those already held."""


class MemoryBudget:
    def __init__(self, limit: int, trim_when_idle: bool = True):
        self.limit = limit
        self.trim_when_idle = trim_when_idle
        self._lock = threading.Lock()
        self._used = 0
        self._count = 0  # reservations holding bytes

    @property
    def used(self) -> int:
        with self._lock:
            return self._used

    def reserve(self, nbytes: int, what: str = "this request") -> Reservation:
        reservation = Reservation(self)
        reservation.grow_to(nbytes, what)
        return reservation

    def _take(self, nbytes: int, holding: int, what: str) -> None:
        with self._lock:
            others = self._used - holding
            if others > 0 and self._used + nbytes > self.limit:
                raise OverBudget(
                    f"{what} needs {nbytes / 1e6:,.0f} MB more while requests hold "
                    f"{self._used / 1e6:,.0f} MB (the server holds at most {self.limit / 1e6:,.0f} MB)"
                )
            self._used += nbytes
            if holding == 0 and nbytes > 0:
                self._count += 1

    def _give(self, nbytes: int, holding_after: int) -> None:
        with self._lock:
            self._used -= nbytes
            if holding_after == 0 and nbytes > 0:
                self._count -= 1
            idle = self._count == 0
        if idle and self.trim_when_idle and nbytes > 0:
            trim_heap()


class Reservation:
    """Bytes held in a MemoryBudget; `release()` may be called any number of times."""

    def __init__(self, budget: MemoryBudget):
        self._budget = budget
        self._lock = threading.Lock()
        self.nbytes = 0

    def grow_to(self, nbytes: int, what: str = "this request") -> None:
        """Hold at least `nbytes` (OverBudget when it does not fit)."""
        with self._lock:
            if nbytes > self.nbytes:
                self._budget._take(nbytes - self.nbytes, self.nbytes, what)
                self.nbytes = nbytes

    def shrink_to(self, nbytes: int) -> None:
        with self._lock:
            if nbytes < self.nbytes:
                freed, self.nbytes = self.nbytes - nbytes, nbytes
                self._budget._give(freed, nbytes)

    def release(self) -> None:
        self.shrink_to(0)


_libc: ctypes.CDLL | bool | None = None  # False: no malloc_trim here


def trim_heap() -> None:
    """Give freed C-heap memory back to the system (glibc only; elsewhere nothing to do)."""
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _libc = False
    if isinstance(_libc, ctypes.CDLL):
        _libc.malloc_trim(0)
