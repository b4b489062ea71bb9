"""Images in from a folder: `FolderImages` reads each new image file in a folder, in order, once
it has finished being written."""

from __future__ import annotations

import logging
import stat
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from app.reading.channels.image_decoder import (
    CapReader,
    ImageDecoder,
    largest_cap,
    open_image_file,
)

log = logging.getLogger(__name__)

# The watched folder: a new file waits until its size and time stop changing for SETTLE_MS, then
# joins the queue; one image at a time goes to the reader, the next once `read_done` is called.
SETTLE_MS = 300  # a new file is read once its size stayed the same this long
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
    `follow_links`. An empty file is read like any other once it has settled (and refused as
    empty, as every unreadable file is, after MAX_ATTEMPTS). `image_cap()`: the model that reads
    each image, settled when it comes, as the `CapReader` the decoder thread asks its cap."""

    image = Signal(object, str)
    failed = Signal(str, str)
    waiting = Signal(int)

    def __init__(
        self,
        folder: str,
        parent=None,
        follow_links: bool = False,
        image_cap: Callable[[], CapReader] = largest_cap,
    ):
        super().__init__(parent)
        from model.images import IMAGE_SUFFIXES

        self.follow_links = follow_links
        self._image_cap = image_cap
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
        self._decoder = ImageDecoder(self)
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
        if seen is None or seen[0] != signature:
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
            cap = self._image_cap()  # which model: its cap is read on the decoder's thread
            self._decoder.decode(name, lambda path=path, cap=cap: open_image_file(path, cap()))

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
