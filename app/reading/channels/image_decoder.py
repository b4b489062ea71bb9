"""Every outside image (the clipboard's, the watched folder's) goes through model/images.py (what
`hayai ocr` uses), decoded on a worker thread (`ImageDecoder`): `open_image_file` for a file,
`open_image_bytes` for the clipboard's bytes, each within the image cap of the model that reads it.
Which model is settled on the GUI thread when the image comes; its cap (read from the model's
folder) on the worker thread: a channel's `image_cap()` gives a `CapReader`
(`app.engines.image_cap_reader`), which the worker calls."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from app.platform.qt_images import pil_to_qimage
from model.config import ImageCap

CapReader = Callable[[], ImageCap]  # the cap of a model already chosen: may read its folder


def largest_cap() -> CapReader:
    """A channel's `image_cap` when no engine is named: the largest released cap."""
    return ImageCap


def open_image_file(path: str | Path, cap: ImageCap) -> QImage:
    """A file's pixels for the app, opened the way `hayai ocr` opens them; ValueError if unreadable,
    naming the file and what is wrong (the app's title already says an image could not be read)."""
    from model.images import open_image

    try:
        pil = open_image(str(path), cap)
    except Exception as exc:  # ImageError, and anything else a decoder raises
        raise ValueError(f"{path}: {exc}") from exc
    return pil_to_qimage(pil)


def open_image_bytes(data: bytes, cap: ImageCap) -> QImage:
    """Encoded image bytes (a clipboard's PNG, BMP, …) through the one loader; ValueError (what is
    wrong) if unreadable."""
    from model.images import open_image

    try:
        pil = open_image(data, cap)
    except Exception as exc:
        raise ValueError(str(exc)) from exc
    return pil_to_qimage(pil)


class ImageDecoder(QObject):
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
