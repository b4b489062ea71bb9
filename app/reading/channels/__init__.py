"""Text out and images in, besides the overlay and the clipboard's auto-copy: `Channels` keeps the
ones the settings ask for in step with them. One module per channel:

- out: `websocket` (`WebSocketServer`: every new text to the connected pages, the origin rule) and
  `log_file` (`TextLogFile`: one line per text in a file), each with `send`/`append(text)`;
- in: `clipboard` (`ClipboardImages`) and `folder` (`FolderImages`: the watched folder), each a
  QObject with `image` and `failed` signals and `close()`; both decode through `image_decoder`
  (model/images.py on a worker thread).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

from app.reading.address import parse_address
from app.reading.channels.clipboard import ClipboardImages
from app.reading.channels.folder import FolderImages
from app.reading.channels.log_file import TextLogFile
from app.reading.channels.websocket import LOCAL_HOSTS, WebSocketServer, websocket_frame

log = logging.getLogger(__name__)


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
        if host not in LOCAL_HOSTS:
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
            self.clipboard = ClipboardImages(self, self._image_cap)
            self.clipboard.image.connect(lambda image: self.image.emit(image, "clipboard"))
            self.clipboard.failed.connect(
                lambda message: self.problem.emit("Cannot read the clipboard image", message)
            )

    def _image_cap(self):
        """The model that reads the images in, from the settings now; the decoder's thread reads its
        cap from its folder (nothing loaded)."""
        from app.engines import image_cap_reader

        return image_cap_reader(self.settings)

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
            self.folder = FolderImages(folder, self, s.get("reading/folder_links"), self._image_cap)
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
