"""Text out and images in, besides the overlay and the clipboard's auto-copy.

Out: `WebSocketServer` sends every new text to every connected client as one plain-text message
(the protocol texthooker pages and other readers speak; `websockets`, on its own asyncio loop in a
thread). Web pages connect only from this computer (`file://`, `localhost`) or from the origins the
user allowed: any other page's handshake is refused with 403 (`origin_allowed`). `TextLogFile`
appends each text as one line to a file.
In: `ClipboardImages` reads an image a screenshot tool put on the clipboard (the clipboard is never
written here: only the app's auto-copy replaces it); `FolderImages` reads each new image file in a
folder once it has finished being written. Image files are opened by `open_image_file`, the one
place that turns a file into pixels for the app (what `hayai ocr` uses).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlsplit

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QImage

from app.reading.cli import parse_address

log = logging.getLogger(__name__)

SETTLE_MS = 300  # a new file is read once its size stayed the same this long
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

        async def handler(connection):
            self._clients.add(connection)
            log.info("WebSocket client connected (%d now)", len(self._clients))
            try:
                async for _ in connection:  # clients only listen; anything they send is dropped
                    pass
            except Exception:
                pass
            finally:
                self._clients.discard(connection)

        def check_origin(connection, request):
            origin = request.headers.get("Origin")
            if origin_allowed(origin, self.allowed_origins):
                return None
            log.warning("WebSocket connection from the web page %r refused", origin)
            return connection.respond(
                HTTPStatus.FORBIDDEN,
                "This page may not connect: add its origin to the WebSocket setting "
                '"Also allow pages from".\n',
            )

        async def main():
            from websockets.asyncio.server import serve

            self._stop = asyncio.Event()
            try:
                server = await serve(
                    handler,
                    self.host,
                    self.port,
                    max_size=2**16,
                    process_request=check_origin,
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

        def run():
            self._loop = asyncio.new_event_loop()
            try:
                self._loop.run_until_complete(main())
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


class TextLogFile:
    """Appends each text as one line (line breaks inside it become spaces), UTF-8."""

    def __init__(self, path: str):
        self.path = Path(path).expanduser()

    def append(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(" ".join(text.splitlines()) + "\n")


def open_image_file(path: str | Path) -> QImage:
    """A file's pixels for the app, opened the way `hayai ocr` opens them; ValueError if unreadable."""
    from app.engine_cli import open_image

    try:
        pil = open_image(str(path))
    except Exception as exc:  # PIL's many errors, OSError, DecompressionBombError
        raise ValueError(f"cannot read {path}: {exc}") from exc
    data = pil.tobytes()
    image = QImage(data, pil.width, pil.height, pil.width * 3, QImage.Format.Format_RGB888)
    return image.copy()


def image_digest(image: QImage) -> str:
    rgb = image.convertToFormat(QImage.Format.Format_RGB32)
    return hashlib.sha1(bytes(rgb.constBits())).hexdigest() + f"{rgb.width()}x{rgb.height()}"


class ClipboardImages(QObject):
    """Emits `image(QImage)` for each new image put on the clipboard (the same image once)."""

    image = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._clipboard = QGuiApplication.clipboard()
        self._last = ""
        self._clipboard.dataChanged.connect(self._on_changed)

    def close(self) -> None:
        try:
            self._clipboard.dataChanged.disconnect(self._on_changed)
        except (RuntimeError, TypeError):
            pass

    def _on_changed(self) -> None:
        mime = self._clipboard.mimeData()
        if mime is None or not mime.hasImage():
            return
        image = self._clipboard.image()
        if image.isNull():
            return
        digest = image_digest(image)
        if digest == self._last:
            return
        self._last = digest
        log.info("clipboard image %dx%d", image.width(), image.height())
        self.image.emit(image)


class FolderImages(QObject):
    """Emits `image(QImage, path)` for each image file that appears in `folder` (not the ones there
    already), once its size has stopped changing; `failed(path, message)` for one it cannot read."""

    image = Signal(object, str)
    failed = Signal(str, str)

    def __init__(self, folder: str, parent=None):
        super().__init__(parent)
        from app.engine_cli import IMAGE_SUFFIXES

        self.folder = Path(folder).expanduser()
        if not self.folder.is_dir():
            raise ValueError(f"{self.folder} is not a folder")
        self._suffixes = IMAGE_SUFFIXES
        self._seen = {p.name for p in self._images()}
        self._sizes: dict[str, int] = {}
        self._watcher = QFileSystemWatcher([str(self.folder)], self)
        self._watcher.directoryChanged.connect(self._scan)
        self._timer = QTimer(self)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self._scan)

    def _images(self) -> list[Path]:
        try:
            return [
                p
                for p in self.folder.iterdir()
                if p.suffix.lower() in self._suffixes and p.is_file() and not p.name.startswith(".")
            ]
        except OSError:
            return []

    def _scan(self, *_) -> None:
        waiting = False
        for path in sorted(self._images(), key=lambda p: p.name):
            if path.name in self._seen:
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if size == 0 or self._sizes.get(path.name) != size:  # still being written
                self._sizes[path.name] = size
                waiting = True
                continue
            self._seen.add(path.name)
            self._sizes.pop(path.name, None)
            try:
                image = open_image_file(path)
            except ValueError as exc:
                log.warning("%s", exc)
                self.failed.emit(str(path), str(exc))
                continue
            log.info("new image in the watched folder: %s", path.name)
            self.image.emit(image, str(path))
        if waiting:
            self._timer.start()
        else:
            self._timer.stop()

    def close(self) -> None:
        self._timer.stop()
        self._watcher.removePaths(self._watcher.directories())


class Channels(QObject):
    """The text outputs and image inputs the settings ask for, kept in step with them.

    `send(text)` for every new text; `image(QImage, source)` for an image to read ("clipboard",
    "folder"); `problem(title, message)` when one cannot work (a port in use, a missing folder).
    """

    image = Signal(object, str)
    problem = Signal(str, str)

    def __init__(self, settings, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.websocket: WebSocketServer | None = None
        self.log_file: TextLogFile | None = None
        self.clipboard: ClipboardImages | None = None
        self.folder: FolderImages | None = None

    def apply(self, keys=None) -> None:
        """(Re)configure what changed; all of it when `keys` is None."""
        s = self.settings
        keys = None if keys is None else set(keys)

        def touched(*names) -> bool:
            return keys is None or any(f"reading/{n}" in keys for n in names)

        if touched("websocket", "websocket_address", "websocket_origins"):
            if self.websocket is not None:
                self.websocket.stop()
                self.websocket = None
            if s.get("reading/websocket"):
                try:
                    host, port = parse_address(s.get("reading/websocket_address"))
                    origins = tuple(s.get("reading/websocket_origins").replace(",", " ").split())
                    server = WebSocketServer(host, port, origins)
                    server.start()
                except (ValueError, OSError) as exc:
                    self.problem.emit("WebSocket server not started", str(exc))
                else:
                    self.websocket = server
                    if host not in ("127.0.0.1", "localhost", "::1"):
                        log.warning(
                            "the WebSocket server listens on %s: other computers can connect",
                            server.url,
                        )
        if touched("log_file"):
            path = s.get("reading/log_file").strip()
            self.log_file = TextLogFile(path) if path else None
        if touched("clipboard_images"):
            if self.clipboard is not None:
                self.clipboard.close()
                self.clipboard = None
            if s.get("reading/clipboard_images"):
                self.clipboard = ClipboardImages(self)
                self.clipboard.image.connect(lambda image: self.image.emit(image, "clipboard"))
        if touched("folder"):
            if self.folder is not None:
                self.folder.close()
                self.folder.deleteLater()
                self.folder = None
            folder = s.get("reading/folder").strip()
            if folder:
                try:
                    self.folder = FolderImages(folder, self)
                except ValueError as exc:
                    self.problem.emit("Cannot watch the folder", str(exc))
                else:
                    self.folder.image.connect(lambda image, path: self.image.emit(image, "folder"))
                    self.folder.failed.connect(
                        lambda path, message: self.problem.emit("Cannot read an image", message)
                    )

    def send(self, text: str) -> None:
        if self.websocket is not None:
            self.websocket.send(text)
        if self.log_file is not None:
            try:
                self.log_file.append(text)
            except OSError as exc:
                self.problem.emit("Cannot write the text file", f"{self.log_file.path}: {exc}")
                self.log_file = None

    def close(self) -> None:
        if self.websocket is not None:
            self.websocket.stop()
            self.websocket = None
        if self.clipboard is not None:
            self.clipboard.close()
            self.clipboard = None
        if self.folder is not None:
            self.folder.close()
            self.folder = None
