"""Text out to web pages: `WebSocketServer` sends every new text to every connected client as one
message (`websockets`, on its own asyncio loop in a thread): plain text by default (what texthooker
pages read), or with `reading/websocket_format` = json one JSON object per text (`websocket_frame`:
exSTATic and other JSON clients). Web pages connect only from this computer (`file://`,
`localhost`) or from the origins the user allowed: any other page's handshake is refused with 403
(`origin_allowed`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from datetime import datetime
from http import HTTPStatus
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")  # a page served from this computer


def normal_origin(origin: str) -> str:
    """`scheme://host[:port]` in lower case without a default port (how browsers send Origin);
    "" for anything that is not such an origin."""
    try:
        parts = urlsplit(origin.strip().lower())
        port = parts.port
    except ValueError:
        return ""
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or "@" in parts.netloc
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        return ""
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    default = {"http": 80, "https": 443}[parts.scheme]
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


def origin_allowed(origin: str | None, allowed: tuple[str, ...] = ()) -> bool:
    """Whether a WebSocket handshake with this Origin header may connect: none (not a browser),
    `null` (a file:// page), http(s) on localhost / 127.0.0.1 / [::1] at any port, or one of
    `allowed` (origins the user listed). Any other web page must not read the text."""
    if origin is None or origin.strip() == "null":
        return True
    normal = normal_origin(origin)
    if not normal:
        return False
    if urlsplit(normal).hostname in LOCAL_HOSTS:
        return True
    return normal in {normal_origin(a) for a in allowed}


# How a read came in (app.history.SOURCES) → the JSON frame's `source`; "edit" is a correction the
# user typed in the overlay, sent again once committed (docs/reading.md).
FRAME_SOURCES = {"box": "capture", "click": "capture"}


def websocket_frame(text: str, source: str, fmt: str, now: datetime | None = None) -> str:
    """One WebSocket message: the text itself ("text"), or ("json") the object JSON texthookers
    parse: {"sentence", "process_path": "hayai", "source", "time" (ISO 8601, local with offset)}."""
    if fmt != "json":
        return text
    moment = (now or datetime.now()).astimezone()
    return json.dumps(
        {
            "sentence": text,
            "process_path": "hayai",
            "source": FRAME_SOURCES.get(source, source),
            "time": moment.isoformat(timespec="milliseconds"),
        },
        ensure_ascii=False,
    )


class WebSocketServer:
    """ws://HOST:PORT; `send(text)` from any thread; `start()` raises OSError when it cannot listen.
    `allowed_origins`: web pages besides this computer's that may connect (see origin_allowed)."""

    def __init__(self, host: str, port: int, allowed_origins: tuple[str, ...] = ()):
        self.host, self.port = host, port
        self.allowed_origins = tuple(allowed_origins)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._clients: set = set()
        self._stop: asyncio.Event | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}"

    @property
    def client_count(self) -> int:
        return len(self._clients)

    def start(self, timeout_s: float = 10.0) -> None:
        started = threading.Event()
        failure: list[BaseException] = []

        def run():
            self._loop = asyncio.new_event_loop()
            try:
                self._loop.run_until_complete(self._serve(started, failure))
            finally:
                self._loop.close()

        self._thread = threading.Thread(target=run, name="hayai-websocket", daemon=True)
        self._thread.start()
        if not started.wait(timeout_s):
            raise OSError(f"the WebSocket server on {self.url} did not start")
        if failure:
            self._thread.join(1)
            raise OSError(f"cannot listen on {self.url}: {failure[0]}")
        log.info("WebSocket server on %s", self.url)

    async def _serve(self, started: threading.Event, failure: list[BaseException]) -> None:
        """Listen until `stop()`; `started` is set once listening, or once it failed (`failure`)."""
        from websockets.asyncio.server import serve

        self._stop = asyncio.Event()
        try:
            server = await serve(
                self._handler,
                self.host,
                self.port,
                max_size=2**16,
                process_request=self._check_origin,
            )
        except OSError as exc:
            failure.append(exc)
            started.set()
            return
        if self.port == 0:  # an ephemeral port (tests): the real one
            self.port = server.sockets[0].getsockname()[1]
        started.set()
        async with server:
            await self._stop.wait()

    async def _handler(self, connection) -> None:
        self._clients.add(connection)
        log.info("WebSocket client connected (%d now)", len(self._clients))
        try:
            async for _ in connection:  # clients only listen; anything they send is dropped
                pass
        except Exception:
            pass
        finally:
            self._clients.discard(connection)

    def _check_origin(self, connection, request):
        origin = request.headers.get("Origin")
        if origin_allowed(origin, self.allowed_origins):
            return None
        log.warning("WebSocket connection from the web page %r refused", origin)
        return connection.respond(
            HTTPStatus.FORBIDDEN,
            "This page may not connect: add its origin to the WebSocket setting "
            '"Also allow pages from".\n',
        )

    def send(self, text: str) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        def broadcast():
            from websockets.asyncio.server import broadcast as to_all

            to_all(set(self._clients), text)

        try:
            loop.call_soon_threadsafe(broadcast)
        except RuntimeError:  # the loop just closed
            pass

    def stop(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:
                pass
        if self._thread is not None:
            self._thread.join(5)
        self._loop = None
