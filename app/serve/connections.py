"""What `hayai serve` allows a connection, and how it logs a flood: uvicorn's settings in one place.

- a connection must send a request's headers within HEADER_TIMEOUT_S of opening (or of its last
  answer), in at most MAX_HEADER_BYTES: silent, slow and half-open connections are closed, so they
  cannot hold the server's file handles (uvicorn alone never times out a connection that has not
  sent its first request);
- an idle keep-alive connection is closed after KEEP_ALIVE_S; a body that stalls is the API's 408;
- at most `connection_limit()` connections and requests at once (beyond: 503 at once), below the
  process's file-handle limit so that accepting never fails for long;
- an error logged again and again (out of file handles, say) is logged once a minute with a count,
  not once per connection.
"""

from __future__ import annotations

import logging
import resource
import time

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
MAX_HEADER_BYTES = 16 * 1024
MAX_CONNECTIONS = 1000
SPARE_FILES = 64  # file handles kept for the model, spooled uploads, logs
REPEAT_WINDOW_S = 60.0


class TimelyH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers are late."""

    _header_timer = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._expect_headers()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._expect_headers()

    def connection_lost(self, exc) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        super().connection_lost(exc)

    def _expect_headers(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(HEADER_TIMEOUT_S, self._headers_late)

    def _headers_late(self) -> None:
        # IDLE: no complete request line and headers yet (a request being served is past it)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def connection_limit() -> int:
    """Connections and requests served at once: MAX_CONNECTIONS, or fewer under a low file limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft - SPARE_FILES))


def uvicorn_options() -> dict:
    return {
        "http": TimelyH11Protocol,
        "limit_concurrency": connection_limit(),
        "timeout_keep_alive": KEEP_ALIVE_S,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
    }


class RepeatFilter(logging.Filter):
    """Lets the first of a kind of warning or error through (same logger, message and exception
    type), then drops its repeats for REPEAT_WINDOW_S; the first after that says how many were
    dropped. Records below WARNING (the access log of `hayai -v serve`) all pass."""

    def __init__(self, window_s: float = REPEAT_WINDOW_S, clock=time.monotonic):
        super().__init__()
        self.window_s, self.clock = window_s, clock
        self._seen: dict[tuple, list] = {}  # kind → [window start, dropped]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        exc_type = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        kind = (record.name, record.levelno, str(record.msg), exc_type)
        now = self.clock()
        seen = self._seen.get(kind)
        if seen is not None and now - seen[0] < self.window_s:
            seen[1] += 1
            return False
        if seen is not None and seen[1]:
            record.msg = f"{record.msg} (repeated {seen[1]} more times in {self.window_s:g} s)"
        if len(self._seen) > 1000:  # many kinds (messages with varying text): start over
            self._seen.clear()
        self._seen[kind] = [now, 0]
        return True
