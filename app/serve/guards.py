"""What a request to `hayai serve` must be before its body is read or held (docs/server.md, "What a
request must be"): its `Host` names this server without an API key (`HostCheck`: DNS rebinding),
it is not larger than the route takes and carries its key and the right `Content-Type`
(`check_request`), and its body arrives in time and fits the memory budget as it arrives
(`BodyGuard`), an answer given before the whole body arrived being sent once the rest is drained.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress

from starlette.requests import Request

from app.serve.errors import ApiError, busy
from app.serve.memory import MemoryBudget, OverBudget
from app.serve.state import server_of

BODY_IDLE_S = 15.0  # a body that sends nothing this long is answered 408
BODY_TOTAL_S = 120.0  # ... and one that has not all arrived after this long
# An answer given before the whole body arrived waits until the rest is read and dropped (up to
# these bounds; beyond them the connection is closed after the answer).
DRAIN_MAX_BYTES = 64 * 1024 * 1024
DRAIN_S = 10.0
LOOPBACK_NAMES = ("localhost",)  # besides loopback addresses, what a keyless server answers to
BODY_RESERVATION = "hayai.body_reservation"  # the scope key of a request's body reservation


def check_request(request: Request, limit: int, media_type: str) -> None:
    """Size first (a refused key must not make us read a huge body), then the key, then what
    the body is: a web page can POST text/plain or a form to any address without asking."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise ApiError(
            413,
            f"the request has {int(length):,} bytes; at most {limit:,} are accepted",
            "request_too_large",
        )
    check_key(request)
    given = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if given != media_type:
        raise ApiError(
            415,
            f"the body must be {media_type} (Content-Type: {given or 'none'})",
            "unsupported_media_type",
        )


def check_key(request: Request) -> None:
    api_key = server_of(request).config.api_key
    if api_key is None:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), api_key.encode()
    ):
        raise ApiError(
            401,
            "Incorrect or missing API key: send `Authorization: Bearer KEY`.",
            "invalid_api_key",
        )


class BodyGuard:
    """A request's body as it arrives (also without a Content-Length): 413 once it exceeds `limit`,
    408 when it stalls for BODY_IDLE_S or has not all arrived after BODY_TOTAL_S, and every byte
    received (times `held_per_byte`: what reading it will hold) reserved in `budget` until the
    request ends or the route releases it (scope[BODY_RESERVATION]); 503 when that does not fit.
    The errors are raised inside the route, so its handler writes the answer; an answer given
    before the body has all arrived first drains the rest (see `drained`), except a 408's, which
    closes the connection."""

    def __init__(self, app, limit: int, budget: MemoryBudget, held_per_byte: int = 1):
        self.app, self.limit, self.budget, self.held_per_byte = app, limit, budget, held_per_byte

    async def __call__(self, scope, receive, send):
        body = _Body(self, scope, receive, send)
        try:
            await self.app(scope, body.receive, body.send)
        finally:
            body.reservation.release()


class _Body:
    """One request's body as BodyGuard lets it through: `receive` for the route, `send` for its answer."""

    def __init__(self, guard: BodyGuard, scope, receive, send):
        self.guard, self.scope, self._receive, self._send = guard, scope, receive, send
        self.loop = asyncio.get_running_loop()
        self.deadline = self.loop.time() + BODY_TOTAL_S
        self.received, self.complete = 0, False
        self.reservation = scope[BODY_RESERVATION] = guard.budget.reserve(0)

    async def receive(self):
        if (
            self.complete
        ):  # after the body only a disconnect can come: no deadline on waiting for it
            return await self._receive()
        wait = min(BODY_IDLE_S, self.deadline - self.loop.time())
        try:
            message = await asyncio.wait_for(self._receive(), max(wait, 0.0))
        except TimeoutError:
            raise ApiError(
                408,
                f"the request body did not arrive in time (nothing for {BODY_IDLE_S:g} s, "
                f"or not all of it within {BODY_TOTAL_S:g} s)",
                "request_timeout",
            ) from None
        if message["type"] != "http.request":
            return message
        self.count(message)
        if self.received > self.guard.limit:
            raise ApiError(
                413, f"the request has more than {self.guard.limit:,} bytes", "request_too_large"
            )
        try:
            self.reservation.grow_to(self.received * self.guard.held_per_byte, "the request's body")
        except OverBudget as exc:
            raise busy(exc) from None
        return message

    def count(self, message) -> None:
        self.received += len(message.get("body", b""))
        self.complete = not message.get("more_body", False)

    async def drained(self) -> bool:
        """Reads and drops the rest of the body: an HTTP client sends all of it before it reads
        the answer, so closing on it mid-body gives it a broken pipe instead of the answer.
        False when the rest is over DRAIN_MAX_BYTES or has not all come within DRAIN_S."""
        declared = dict(self.scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > DRAIN_MAX_BYTES:
            return False
        end = self.loop.time() + DRAIN_S
        while not self.complete:
            if self.received > DRAIN_MAX_BYTES:
                return False
            try:
                message = await asyncio.wait_for(self._receive(), max(end - self.loop.time(), 0.0))
            except TimeoutError:
                return False
            if message["type"] != "http.request":  # the client has gone
                return False
            self.count(message)  # counted, never kept nor reserved
        return True

    async def send(self, message):
        if message["type"] == "http.response.start" and not self.complete:
            if message["status"] == 408 or not await self.drained():
                headers = [h for h in message.get("headers", []) if h[0] != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
        await self._send(message)


class HostCheck:
    """Without an API key, only requests naming this computer (`Host: localhost`, a loopback
    address, or an --allow-host name) are answered; any other name is 403. A web page whose own
    name an attacker pointed at 127.0.0.1 (DNS rebinding) sends that name, and gets nothing."""

    def __init__(self, app, allow_hosts: tuple[str, ...] = ()):
        self.app = app
        self.allowed = {h.strip().lower().rstrip(".") for h in allow_hosts}

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host")
            if host is not None and not self.allows(host.decode("latin-1")):
                name = host_name(host.decode("latin-1"))
                error = ApiError(
                    403,
                    f"this server answers requests for this computer, not for {name!r} "
                    "(start it with --allow-host NAME, or with an API key)",
                    "invalid_host",
                )
                await error.response()(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def allows(self, host: str) -> bool:
        name = host_name(host)
        if name in LOOPBACK_NAMES or name in self.allowed:
            return True
        try:
            return ipaddress.ip_address(name).is_loopback
        except ValueError:
            return False


def host_name(host: str) -> str:
    """The name in a Host header, without port, brackets, trailing dot; lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        name = host[1 : host.find("]")] if "]" in host else ""
    else:
        name = host.rpartition(":")[0] if ":" in host else host
    return name.rstrip(".")
