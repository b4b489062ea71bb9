"""Text out and images in, besides the overlay and the clipboard's auto-copy.

Out: `WebSocketServer` sends every new text to every connected client as one message (`websockets`,
on its own asyncio loop in a thread): plain text by default (what texthooker pages read), or with
`reading/websocket_format` = json one JSON object per text (`websocket_frame`: exSTATic and other
JSON clients). Web pages connect only from this computer (`file://`, `localhost`) or from the origins
the user allowed: any other page's handshake is refused with 403 (`origin_allowed`). `TextLogFile`
appends each text as one line to a file.
In: `ClipboardImages` reads an image a screenshot tool put on the clipboard (the clipboard is never
written here: only the app's auto-copy replaces it); `FolderImages` reads each new image file in a
folder, in order, once it has finished being written. Every outside image goes through
model/images.py (what `hayai ocr` uses), decoded on a worker thread: `open_image_file` for a file,
`open_image_bytes` for the clipboard's bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import stat
import threading
import time
from collections import deque
from datetime import datetime
from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlsplit

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QImage

from app.qt_images import pil_to_qimage, qimage_bgra
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
    from model.images import open_image

    try:
        pil = open_image(str(path))
    except Exception as exc:  # ImageError, and anything else a decoder raises
        raise ValueError(f"cannot read {path}: {exc}") from exc
    return pil_to_qimage(pil)


def open_image_bytes(data: bytes) -> QImage:
    """Encoded image bytes (a clipboard's PNG, BMP, …) through the one loader; ValueError if unreadable."""
    from model.images import open_image

    try:
        pil = open_image(data)
    except Exception as exc:
        raise ValueError(f"cannot read the clipboard image: {exc}") from exc
    return pil_to_qimage(pil)


class _Decoder(QObject):
    """Decodes one image at a time on a worker thread, so the GUI thread never decodes a large one
    and at most one large image is being decoded: `decode(token, fn)` runs `fn()` there (while one
    runs, only the newest request waits; older ones are dropped); `done(token, QImage or None,
    error)` comes back on the thread that owns this object."""

    done = Signal(object, object, str)
    _finished = Signal(object, object, str)  # from the worker thread

    def __init__(self, parent=None):
        super().__init__(parent)
        self._busy = False
        self._waiting = None
        self._finished.connect(self._on_finished)

    def decode(self, token, fn) -> None:
        if self._busy:
            self._waiting = (token, fn)
            return
        self._busy = True
        threading.Thread(
            target=self._work, args=(token, fn), name="hayai-image-decode", daemon=True
        ).start()

    def _work(self, token, fn) -> None:
        try:
            image, error = fn(), ""
        except ValueError as exc:
            image, error = None, str(exc)
        except Exception as exc:  # never lost silently: the caller reports it
            image, error = None, f"cannot read the image: {exc}"
        try:
            self._finished.emit(token, image, error)
        except RuntimeError:  # the channel was closed meanwhile
            pass

    def _on_finished(self, token, image, error: str) -> None:
        self._busy = False
        self.done.emit(token, image, error)
        if self._waiting is not None:
            waiting, self._waiting = self._waiting, None
            self.decode(*waiting)


def image_digest(image: QImage) -> str:
    return (
        hashlib.sha1(qimage_bgra(image).tobytes()).hexdigest() + f"{image.width()}x{image.height()}"
    )


# Encoded formats a screenshot tool offers, best first; the loader tells formats by their bytes.
CLIPBOARD_FORMATS = (
    "image/png",
    "image/bmp",
    "image/jpeg",
    "image/webp",
    "image/tiff",
    "image/gif",
)


class ClipboardImages(QObject):
    """Emits `image(QImage)` for each new image put on the clipboard (the same image once), and
    `failed(message)` for one that cannot be read. Encoded bytes (what other programs offer) go
    through model/images.py like every outside image: the header is checked here (a 49-megapixel
    PNG or a large RLE BMP is refused unread), the pixels are decoded on a worker thread."""

    image = Signal(object)
    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        import model.images  # noqa: F401  (now, not on the first image: its import takes a while)

        self._clipboard = QGuiApplication.clipboard()
        self._last = ""
        self._decoder = _Decoder(self)
        self._decoder.done.connect(self._on_decoded)
        self._clipboard.dataChanged.connect(self._on_changed)

    def close(self) -> None:
        try:
            self._clipboard.dataChanged.disconnect(self._on_changed)
        except (RuntimeError, TypeError):
            pass

    def _on_changed(self) -> None:
        mime = self._clipboard.mimeData()
        if mime is None:
            return
        fmt = next((f for f in CLIPBOARD_FORMATS if mime.hasFormat(f)), "")
        if not fmt and not mime.hasImage():
            return
        data = bytes(mime.data(fmt)) if fmt else b""
        if data:
            digest = hashlib.sha1(data).hexdigest()
            if digest == self._last:
                return
            self._last = digest
            from model.images import MAX_FILE_BYTES, ImageError, probe

            if len(data) > MAX_FILE_BYTES:  # the limit a file has
                self._refuse(
                    f"the clipboard image is {len(data) / 2**20:,.0f} MB; images larger than "
                    f"{MAX_FILE_BYTES / 2**20:,.0f} MB are not read"
                )
                return
            try:
                probe(data)  # the header only: nothing is decoded on the GUI thread
            except ImageError as exc:
                self._refuse(f"cannot read the clipboard image: {exc}")
                return
            self._decoder.decode(digest, lambda: open_image_bytes(data))
            return
        # An image another part of this process put there: already pixels, nothing to decode.
        image = mime.imageData()
        if not isinstance(image, QImage) or image.isNull():
            return
        digest = image_digest(image)
        if digest == self._last:
            return
        self._last = digest
        from model.images import max_pixels

        if image.width() * image.height() > max_pixels():
            self._refuse(
                f"the clipboard image is {image.width()}×{image.height()} pixels; the model can use "
                f"at most {max_pixels() / 1e6:.1f} megapixels"
            )
            return
        self._on_decoded(digest, image, "")

    def _refuse(self, message: str) -> None:
        log.warning("%s", message)
        self.failed.emit(message)

    def _on_decoded(self, _digest, image, error: str) -> None:
        if image is None:
            self._refuse(error)
            return
        log.info("clipboard image %dx%d", image.width(), image.height())
        self.image.emit(image)


# The watched folder: a new file waits until its size and time stop changing for SETTLE_MS, then
# joins the queue; one image at a time goes to the reader, the next once `read_done` is called.
MAX_QUEUE = 100  # files waiting their turn; more stay on disk unread until there is room
MAX_ATTEMPTS = 3  # reads of one file before it is reported as unreadable
RETRY_MS = 1000  # wait before reading a file again after a failed read


def outside_link(folder: Path, path: Path, follow: bool = False) -> str:
    """Why a symlink `path` in `folder` is not followed, or "" when it is not one, stays inside or
    `follow` (the setting "Follow links out of the folder") allows it."""
    if not path.is_symlink():
        return ""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return f"{path.name} is a broken link; it is not read"
    if follow or target.is_relative_to(folder.resolve()):
        return ""
    return (
        f"{path.name} is a link to {target}, outside the watched folder; links out of the folder "
        "are not followed (move the image into the folder, or turn on “Follow links out of the "
        "folder” in Settings)"
    )


class FolderImages(QObject):
    """Emits `image(QImage, path)` for each image file that appears in `folder` (not the ones there
    already), in order, once its size has stopped changing, one at a time: the next comes after
    `read_done(ok)`. `failed(path, message)` for one it cannot read (after MAX_ATTEMPTS tries; a
    failed read is tried again, never taken as done); `waiting(n)` when the number of images
    queued or being read changes. A symlink to a file outside the folder is refused unless
    `follow_links`."""

    image = Signal(object, str)
    failed = Signal(str, str)
    waiting = Signal(int)

    def __init__(self, folder: str, parent=None, follow_links: bool = False):
        super().__init__(parent)
        from model.images import IMAGE_SUFFIXES

        self.follow_links = follow_links
        self.folder = Path(folder).expanduser()
        if not self.folder.is_dir():
            raise ValueError(f"{self.folder} is not a folder")
        self._suffixes = IMAGE_SUFFIXES
        # name → (size, mtime_ns) when it was read or given up; a file changed since is new again
        self._done: dict[str, tuple] = {}
        self._settling: dict[str, tuple] = {}  # name → (signature, first seen with it, monotonic s)
        self._queue: deque[str] = deque()
        self._attempts: dict[str, int] = {}
        self._retry_at: dict[str, float] = {}
        self._current: tuple[str, tuple] | None = None  # (name, signature) being decoded or read
        self._count = 0
        for path in self._images():
            signature = self._signature(path)
            if signature is not None:
                self._done[path.name] = signature
        self._decoder = _Decoder(self)
        self._decoder.done.connect(self._on_decoded)
        self._watcher = QFileSystemWatcher([str(self.folder)], self)
        self._watcher.directoryChanged.connect(self._scan)
        self._timer = QTimer(self)
        self._timer.setInterval(SETTLE_MS // 3)
        self._timer.timeout.connect(self._scan)

    @property
    def queued(self) -> int:
        """Images waiting or being read."""
        return len(self._queue) + (self._current is not None)

    def _images(self) -> list[Path]:
        try:
            return sorted(
                (
                    p
                    for p in self.folder.iterdir()
                    if p.suffix.lower() in self._suffixes and not p.name.startswith(".")
                ),
                key=lambda p: p.name,
            )
        except OSError:
            return []

    @staticmethod
    def _signature(path: Path) -> tuple | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns, stat.S_IFMT(st.st_mode))

    def _scan(self, *_) -> None:
        now = time.monotonic()
        pending = False
        busy = {name for name in self._queue} | ({self._current[0]} if self._current else set())
        for path in self._images():
            if path.name not in busy:
                pending = self._consider(path, now) or pending
        self._next()
        self._report_count()
        if pending:
            self._timer.start()
        else:
            self._timer.stop()

    def _consider(self, path: Path, now: float) -> bool:
        """Queue the image at `path` once it is new and settled; True when it is to be looked at
        again (being written, waiting to be retried, or the queue is full)."""
        name = path.name
        signature = self._signature(path)
        if signature is None or self._done.get(name) == signature:
            return False
        why = outside_link(self.folder, path, self.follow_links)
        if why or not stat.S_ISREG(signature[2]):
            self._give_up(name, signature, why or "this is not a regular file; it is not read")
            return False
        if now < self._retry_at.get(name, 0.0):
            return True
        seen = self._settling.get(name)
        if seen is None or seen[0] != signature or signature[0] == 0:
            self._settling[name] = (signature, now)  # new, or still being written
            return True
        if now - seen[1] < SETTLE_MS / 1000 or len(self._queue) >= MAX_QUEUE:
            return True
        del self._settling[name]
        self._queue.append(name)
        return False

    def _give_up(self, name: str, signature: tuple, message: str) -> None:
        self._done[name] = signature
        self._settling.pop(name, None)
        self._attempts.pop(name, None)
        self._retry_at.pop(name, None)
        path = str(self.folder / name)
        log.warning("%s: %s", path, message)
        self.failed.emit(path, message)

    def _next(self) -> None:
        while self._current is None and self._queue:
            name = self._queue.popleft()
            path = self.folder / name
            signature = self._signature(path)
            if signature is None:  # gone meanwhile
                continue
            # again: it may have been swapped for a link
            why = outside_link(self.folder, path, self.follow_links)
            if why:
                self._give_up(name, signature, why)
                continue
            self._current = (name, signature)
            self._decoder.decode(name, lambda path=path: open_image_file(path))

    def _on_decoded(self, name, image, error: str) -> None:
        if self._current is None or self._current[0] != name:
            return
        if image is None:
            self.read_done(False, error)
            return
        log.info("new image in the watched folder: %s", name)
        self.image.emit(image, str(self.folder / name))

    def read_done(self, ok: bool = True, message: str = "", superseded: bool = False) -> None:
        """The current image was read (`ok`), or not: then it is tried again later, up to
        MAX_ATTEMPTS times, and `failed` is emitted after the last (a read `superseded` by the
        user's own is tried again without counting). The app answers every image
        (its reader reports each request as finished, failed or superseded)."""
        if self._current is None:
            return
        name, signature = self._current
        self._current = None
        if ok:
            self._done[name] = signature
            self._attempts.pop(name, None)
            self._retry_at.pop(name, None)
        else:
            attempts = self._attempts.get(name, 0) + (not superseded)
            if attempts >= MAX_ATTEMPTS:
                self._give_up(name, signature, message or "the image could not be read")
            else:
                log.info("%s: %s; trying again (%d of %d)", name, message, attempts, MAX_ATTEMPTS)
                self._attempts[name] = attempts
                self._retry_at[name] = time.monotonic() + RETRY_MS / 1000
        self._scan()

    def _report_count(self) -> None:
        if self.queued != self._count:
            self._count = self.queued
            self.waiting.emit(self._count)

    def close(self) -> None:
        self._timer.stop()
        self._watcher.removePaths(self._watcher.directories())


class Channels(QObject):
    """The text outputs and image inputs the settings ask for, kept in step with them.

    `send(text, source)` for every new text; `image(QImage, source)` for an image to read
    ("clipboard", "folder"), answered with `image_read(source, ok)` once it was read or failed (the
    folder sends its next image then); `problem(title, message)` when one cannot work (a port in
    use, a missing folder, an unreadable image); `folder_waiting(n)`: images of the watched folder
    not read yet.
    """

    image = Signal(object, str)
    problem = Signal(str, str)
    folder_waiting = Signal(int)

    def __init__(self, settings, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.websocket: WebSocketServer | None = None
        self.log_file: TextLogFile | None = None
        self.clipboard: ClipboardImages | None = None
        self.folder: FolderImages | None = None

    def apply(self, keys=None) -> None:
        """(Re)configure what changed; all of it when `keys` is None."""
        keys = None if keys is None else set(keys)
        for names, setup in self._SETUPS:
            if keys is None or any(f"reading/{n}" in keys for n in names):
                setup(self)

    def _setup_websocket(self) -> None:
        s = self.settings
        if self.websocket is not None:
            self.websocket.stop()
            self.websocket = None
        if not s.get("reading/websocket"):
            return
        try:
            host, port = parse_address(s.get("reading/websocket_address"))
            origins = tuple(s.get("reading/websocket_origins").replace(",", " ").split())
            server = WebSocketServer(host, port, origins)
            server.start()
        except (ValueError, OSError) as exc:
            self.problem.emit("WebSocket server not started", str(exc))
            return
        self.websocket = server
        if host not in ("127.0.0.1", "localhost", "::1"):
            log.warning(
                "the WebSocket server listens on %s: other computers can connect", server.url
            )

    def _setup_log_file(self) -> None:
        path = self.settings.get("reading/log_file").strip()
        self.log_file = TextLogFile(path) if path else None

    def _setup_clipboard(self) -> None:
        if self.clipboard is not None:
            self.clipboard.close()
            self.clipboard = None
        if self.settings.get("reading/clipboard_images"):
            self.clipboard = ClipboardImages(self)
            self.clipboard.image.connect(lambda image: self.image.emit(image, "clipboard"))
            self.clipboard.failed.connect(
                lambda message: self.problem.emit("Cannot read the clipboard image", message)
            )

    def _setup_folder(self) -> None:
        s = self.settings
        if self.folder is not None:
            self.folder.close()
            self.folder.deleteLater()
            self.folder = None
            self.folder_waiting.emit(0)
        folder = s.get("reading/folder").strip()
        if not folder:
            return
        try:
            self.folder = FolderImages(folder, self, s.get("reading/folder_links"))
        except ValueError as exc:
            self.problem.emit("Cannot watch the folder", str(exc))
            return
        self.folder.image.connect(lambda image, path: self.image.emit(image, "folder"))
        self.folder.failed.connect(
            lambda path, message: self.problem.emit("Cannot read an image", message)
        )
        self.folder.waiting.connect(self.folder_waiting)

    # each output or input: the settings (under reading/) it is made from, and what sets it up again
    _SETUPS = (
        (("websocket", "websocket_address", "websocket_origins"), _setup_websocket),
        (("log_file",), _setup_log_file),
        (("clipboard_images",), _setup_clipboard),
        (("folder", "folder_links"), _setup_folder),
    )

    def image_read(
        self, source: str, ok: bool, message: str = "", superseded: bool = False
    ) -> None:
        """The image from `source` was read (`ok`) or not (`superseded`: another read came first);
        the watched folder sends its next."""
        if source == "folder" and self.folder is not None:
            self.folder.read_done(ok, message, superseded)

    def send(self, text: str, source: str) -> None:
        """A new text, or a committed correction (source "edit"), to every output that is on."""
        if self.websocket is not None:
            fmt = self.settings.get("reading/websocket_format")
            self.websocket.send(websocket_frame(text, source, fmt))
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
