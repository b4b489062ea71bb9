"""The model's state as the user sees it: the "Model: …" line of the tray (or its window), the
messages when a load fails, the hint how to fix it, and the words of a read that failed for it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.ui.details import split_message

if TYPE_CHECKING:
    from app.engines.worker import OcrWorker
    from app.flows.capture import CaptureRoute
    from app.flows.hotkeys import HotkeyControl
    from app.flows.windows import Windows
    from app.settings import Settings

log = logging.getLogger(__name__)


class ModelStatus(QObject):
    notice = Signal(str, str, bool)  # title, message, error: for the user
    line_changed = Signal(str, bool)  # the "Model: …" line, and whether clicking it fixes something
    loaded = Signal()  # the model is ready: the popup dictionary may build its index now

    def __init__(
        self,
        settings: Settings,
        worker: OcrWorker,
        route: CaptureRoute,
        windows: Windows,
        hotkeys: HotkeyControl,
        *,
        in_tray: bool,
        verbose: int = 0,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.settings = settings
        self.worker = worker
        self.route = route  # the capture backend, named in the system info
        self.windows = windows  # the model dialog and Settings, where a failed load is fixed
        self.hotkeys = hotkeys  # why hotkeys fail, in the system info
        self.in_tray = in_tray  # the line is in the tray menu, else in the Hayai window
        self.verbose = verbose  # 1 = -v: the system info logged once (app/launcher.py verbosity())
        self.state = "starting"  # loading, ready, error
        self.error = ("", "")  # (message, hint) of the last failed load
        self.device = ""
        self.variant = ""
        self._folder_to_confirm = ""  # a folder the user just chose: named once it loads
        self._info_logged = False
        w = worker
        w.loading.connect(self._on_loading)
        w.ready.connect(self._on_ready)
        w.error.connect(self._on_error)

    @property
    def remote(self) -> bool:
        """Reads go to a server: its errors are its own sentences, fixed in Settings → Engine."""
        from app.engines import traits

        return traits(self.settings.get("engine/backend")).remote

    def _set_line(self, text: str, actionable: bool = False) -> None:
        self.line_changed.emit(text, actionable)

    def folder_name(self) -> str:
        """The chosen model folder's name, quoted, or "" when the downloaded variant is used."""
        folder = self.settings.get("model/folder")
        return f"“{Path(folder).name or folder}”" if folder else ""

    def fix_hint(self) -> str:
        where = "the tray menu" if self.in_tray else "the Hayai window"
        if self.settings.get("model/folder"):  # a folder was asked for: never a download
            return f"Click “Model: not ready” in {where} to choose the folder that holds the model."
        return f"Click “Model: not ready” in {where} to download it or choose its folder."

    def read_failure(self, message: str) -> str:
        """A read's failure in GUI words: the model's own message is the log's."""
        if self.remote:
            # the server's own sentence, already in GUI words (app/engines/server.py)
            return message
        if self.state == "error":
            return (
                "No model is loaded, so this box was not read.\n"
                f"{split_message(self.error[0])[0]}\n{self.fix_hint()}"
            )
        if self.state != "ready":
            return "The model is still loading: press Re-scan in a moment."
        return message

    def page_failure(self, message: str) -> str:
        if self.state != "ready" and not self.remote:
            return "The model is not ready yet, so the screen was not read."
        return message

    def settings_changed(self, keys: set) -> None:
        if "model/folder" in keys:
            self._folder_to_confirm = self.settings.get("model/folder")

    def use_folder(self, folder: str) -> None:
        """A folder chosen in the model dialog: loaded, and named once it is."""
        settings = self.settings
        settings.overrides.pop("model/folder", None)  # the user's choice now beats --model
        self._folder_to_confirm = folder
        self._set_line(f"Model: loading “{Path(folder).name or folder}”…")
        if not settings.update({"model/folder": folder}):
            from app import engines

            self.worker.reload(engines.options(settings))  # same folder again: retry anyway

    def _on_loading(self) -> None:
        self.state = "loading"
        source = self.folder_name() or self.settings.get("model/variant")
        self._set_line(f"Model: loading {source}…")

    def _on_ready(self, device: str, variant: str) -> None:
        self.state, self.device, self.variant = "ready", device, variant
        folder = self.folder_name()
        self._set_line(
            f"Model: ready · {device} · {variant}" + (f" from {folder}" if folder else "")
        )
        if self._folder_to_confirm and folder:
            self.notice.emit(
                "Model folder loaded",
                f"Hayai now reads with the {variant} model in the folder {folder} ({device}).",
                False,
            )
        self._folder_to_confirm = ""
        self.log_system_info()
        self.loaded.emit()

    def _on_error(self, message: str, hint: str) -> None:
        self.state = "error"
        self.error = (message, hint)
        self._set_line("Model: not ready — click to fix", actionable=True)
        sentence = split_message(message)[0]
        if self.remote:
            # the server's error is already a sentence with its own hint (app/engines/server.py)
            self.notice.emit("The Hayai server cannot be used", f"{message}\n{hint}", True)
        elif self._folder_to_confirm:
            self.notice.emit(
                "Model folder not loaded",
                f"The folder {self.folder_name()} could not be used: {sentence}",
                True,
            )
        elif not self.windows.open.get("model"):  # its dialog already explains a missing model
            self.notice.emit(
                "The OCR model could not be loaded", f"{sentence} {self.fix_hint()}", True
            )
        self._folder_to_confirm = ""
        self.log_system_info()

    def line_clicked(self) -> None:
        if self.state == "error" and self.remote:
            self.windows.show_settings()  # the server's address and key are there
        elif self.state == "error":
            self.windows.show_model_dialog(self.error[0])

    def log_system_info(self) -> None:
        """At -v, once: the system, the backends picked and the model, for a bug report."""
        if not self.verbose or self._info_logged:
            return
        self._info_logged = True
        from app.diagnostics import format_info, system_info

        backends = {}
        try:
            from app.platform.backends import chosen

            self.route.name()
            backends = chosen()
        except Exception as exc:
            backends = {"capture": f"none ({exc})"}
        hotkey_error = self.hotkeys.error
        if hotkey_error:
            backends["hotkey"] = f"none ({hotkey_error.splitlines()[0]})"
        device = f"{self.device} ({self.variant})" if self.state == "ready" else self.state
        log.info(format_info(system_info(backends, device)))
