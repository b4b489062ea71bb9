"""Shown when there are no weights: download them (progress bar, cancel) or choose a folder.

The download runs in a plain Python thread (never the GUI thread, never the OCR thread); its
progress callback emits queued Qt signals. Offline, the dialog explains where the files go.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from app.ui import theme
from model.config import DEFAULT_VARIANT, REQUIRED_FILES_TEXT
from model.errors import DownloadCancelled


class _Bridge(QObject):
    """Signals emitted from the download thread, delivered on the GUI thread."""

    progress = Signal(
        str, object, object
    )  # filename, done bytes, total bytes (object: > 2 GiB safe)
    done = Signal(str)  # folder
    failed = Signal(str, bool)  # message, cancelled


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


class ModelDialog(QDialog):
    downloaded = Signal(str)  # the folder of the finished download
    folder_chosen = Signal(str)  # a folder the user picked

    def __init__(
        self, variant: str = DEFAULT_VARIANT, message: str = "", download_fn=None, parent=None
    ):
        super().__init__(parent)
        theme.apply(self)
        self.setWindowTitle("Hayai — OCR model")
        self.setWindowIcon(theme.app_icon())
        self.variant = variant
        self._download_fn = download_fn
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._bridge = _Bridge(self)
        self._bridge.progress.connect(self._on_progress)
        self._bridge.done.connect(self._on_done)
        self._bridge.failed.connect(self._on_failed)

        title = QLabel(f"The Hayai OCR model ({variant}) is not installed")
        title.setProperty("role", "title")
        intro = QLabel(
            "Hayai reads text with a local model. Download it once (about 620 MB from Hugging Face); "
            "after that everything works offline and nothing leaves this computer."
        )
        intro.setWordWrap(True)
        self.details = QLabel(message or self._missing_text(offline=False))
        self.details.setProperty("role", "muted")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.file_label = QLabel("")
        self.file_label.setProperty("role", "muted")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.download_button = QPushButton("Download")
        self.download_button.setProperty("role", "primary")
        self.folder_button = QPushButton("Choose folder…")
        self.cancel_button = QPushButton("Cancel download")
        self.cancel_button.setVisible(False)
        self.close_button = QPushButton("Close")
        buttons = QHBoxLayout()
        buttons.addWidget(self.folder_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.close_button)
        buttons.addWidget(self.download_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(22, 18, 22, 18)
        layout.setSpacing(10)
        for widget in (title, intro, self.details, self.file_label, self.progress, self.status):
            layout.addWidget(widget)
        layout.addLayout(buttons)
        self.setMinimumWidth(600)

        self.download_button.clicked.connect(self.start_download)
        self.cancel_button.clicked.connect(self.cancel_download)
        self.folder_button.clicked.connect(self.choose_folder)
        self.close_button.clicked.connect(self.reject)

    def _missing_text(self, offline: bool) -> str:
        try:
            from model.download import missing_message

            return missing_message(self.variant, offline=offline)
        except Exception:  # the engine package is broken: still say something useful
            return (
                f"Needed: {REQUIRED_FILES_TEXT}. Run `hayai model download`, "
                "or choose a folder holding them."
            )

    # --- actions ---------------------------------------------------------------------------------

    def start_download(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._cancel.clear()
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.status.setProperty("role", "")
        self.status.setText("Connecting…")
        self._set_downloading(True)
        fn = self._download_fn
        if fn is None:
            from model.download import download as fn
        bridge, cancel, variant = self._bridge, self._cancel, self.variant

        def run():
            try:
                folder = fn(
                    variant,
                    progress=lambda name, done, total: bridge.progress.emit(name, done, total),
                    cancel=cancel,
                )
            except (
                Exception
            ) as exc:  # DownloadError / DownloadCancelled / anything: shown, never raised
                bridge.failed.emit(str(exc), isinstance(exc, DownloadCancelled) or cancel.is_set())
            else:
                bridge.done.emit(str(folder))

        self._thread = threading.Thread(target=run, name="hayai-download", daemon=True)
        self._thread.start()

    def cancel_download(self) -> None:
        self._cancel.set()
        self.status.setText("Cancelling…")

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, f"Folder with {REQUIRED_FILES_TEXT}")
        if folder:
            self.use_folder(folder)

    def use_folder(self, folder: str) -> None:
        self.folder_chosen.emit(folder)
        self.accept()

    # --- download thread → GUI -------------------------------------------------------------------

    def _set_downloading(self, active: bool) -> None:
        self.download_button.setEnabled(not active)
        self.folder_button.setEnabled(not active)
        self.cancel_button.setVisible(active)
        self.close_button.setVisible(not active)

    def _on_progress(self, name: str, done, total) -> None:
        self.file_label.setText(f"{name}: {_mb(done)} of {_mb(total)}" if total else name)
        self.progress.setValue(int(1000 * done / total) if total else 0)
        self.status.setText("Downloading…")

    def _on_done(self, folder: str) -> None:
        self._set_downloading(False)
        self.progress.setValue(1000)
        self.status.setText(f"Installed in {folder}")
        self.downloaded.emit(folder)
        self.accept()

    def _on_failed(self, message: str, cancelled: bool) -> None:
        self._set_downloading(False)
        self.progress.setVisible(not cancelled)
        if cancelled:
            self.status.setText(
                "Download cancelled. The part already fetched is kept; Download resumes it."
            )
            return
        self.status.setProperty("role", "error")
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)
        self.status.setText(message)
        self.download_button.setText("Try again")

    def closeEvent(self, event) -> None:
        self._cancel.set()  # a running download stops at its next chunk; the partial file is kept
        super().closeEvent(event)

    def reject(self) -> None:
        self._cancel.set()
        super().reject()
