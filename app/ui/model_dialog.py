"""Shown when there are no weights: download them (progress bar, cancel) or choose a folder.

The download runs in a plain Python thread (never the GUI thread, never the OCR thread); its
progress callback emits queued Qt signals. Offline, the dialog explains where the files go.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLayout,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from app.ui import theme
from app.ui.details import DetailsSection, split_message
from app.ui.guard import qt_override
from app.ui.rich_text import PlainLabel
from model.config import DEFAULT_VARIANT, REQUIRED_FILES, REQUIRED_FILES_TEXT
from model.errors import DownloadCancelled

NBSP = "\u00a0"  # "624 MB" never breaks between the number and its unit
CHOOSE_AGAIN = "Choose the folder that holds config.json, model.safetensors and tokenizer.json."


def missing_files(folder: str) -> list[str]:
    """The release files `folder` lacks (empty: it can be loaded)."""
    return [name for name in REQUIRED_FILES if not (Path(folder) / name).is_file()]


def download_size(variant: str) -> str:
    """ "624 MB": what the download fetches (model/download.py says it, once for every window)."""
    from model.download import download_size as size

    return size(variant).replace(" ", NBSP)


def folder_problem(folder: str, message: str = "") -> str:
    """What is wrong with a model folder that was asked for, and what to do, in sentences (the
    folder by its name: the whole path is in Details)."""
    name = f"“{Path(folder).name or folder}”"
    if not Path(folder).is_dir():
        problem = f"The model folder {name} does not exist (a drive not plugged in, or a typo?)."
    elif missing_files(folder):
        problem = f"The model folder {name} has no {missing_files(folder)[0]}."
    else:
        problem = f"The model in {name} cannot be used: {split_message(message)[0]}"
    return (
        f"{problem} {CHOOSE_AGAIN} To read with the downloaded model instead, empty "
        "“Model folder” in Settings."
    )


class _Bridge(QObject):
    """Signals emitted from the download thread, delivered on the GUI thread."""

    # filename, done bytes, total bytes (object: > 2 GiB safe)
    progress = Signal(str, object, object)
    done = Signal(str)  # folder
    failed = Signal(str, bool)  # message, cancelled


def _mb(size: int) -> str:
    from model.download import size_text

    return size_text(size).replace(" ", NBSP)


WIDTH = 560
OFFLINE_HINTS = ("offline", "cannot reach", "connection", "network", "timed out")


class ModelDialog(QDialog):
    """One sentence, the actions (Choose folder…, Close, Download) and the facts behind "Details"."""

    downloaded = Signal(str)  # the folder of the finished download
    folder_chosen = Signal(str)  # a folder the user picked (it holds the release files)

    def __init__(
        self,
        variant: str = DEFAULT_VARIANT,
        message: str = "",
        download_fn=None,
        parent=None,
        folder: str = "",
    ):
        """`folder`: the model folder that was asked for (Settings or --model) and could not be
        used; the dialog then says what is wrong with it and offers a folder, not a download."""
        super().__init__(parent)
        theme.apply(self)
        self.setWindowTitle(theme.window_title("OCR model"))
        self.setWindowIcon(theme.app_icon())
        self.variant = variant
        self._download_fn = download_fn
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._bridge = _Bridge(self)
        self._bridge.progress.connect(self._on_progress)
        self._bridge.done.connect(self._on_done)
        self._bridge.failed.connect(self._on_failed)

        self.folder = folder
        title = QLabel(
            "Hayai cannot use its model folder" if folder else "Hayai needs its OCR model"
        )
        title.setProperty("role", "title")
        self.intro = PlainLabel(  # the folder's name and the engine's message: outside text
            folder_problem(folder, message)
            if folder
            else f"Download it once ({download_size(variant)}) and Hayai reads offline from then "
            "on, or choose a folder that holds it."
        )
        self.intro.setWordWrap(True)
        self.file_label = PlainLabel("")  # file names and server messages below
        self.file_label.setProperty("role", "muted")
        self.file_label.setVisible(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        self.status = PlainLabel("")
        self.status.setWordWrap(True)
        self.status.setVisible(False)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._facts = self._release_facts()
        self._reason = split_message(message)[0] if not folder else f"Model folder: {folder}"
        self.details = DetailsSection()
        self.details.set_text(self._details_text())
        self.details.toggled.connect(lambda _: self.adjustSize())
        self.details.grown.connect(self.adjustSize)

        self.download_button = QPushButton("Download")
        self.download_button.setProperty("role", "primary")
        self.download_button.setDefault(True)
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
        for widget in (title, self.intro, self.file_label, self.progress, self.status):
            layout.addWidget(widget)
        layout.addLayout(buttons)
        layout.addWidget(self.details)
        # The window is always as tall as its wrapped text needs (never clipped), at least this wide.
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        for label in (self.intro, self.status):
            label.setMinimumWidth(WIDTH - 44)

        if folder:  # the folder is what was asked for: choose it again, no download instead
            self.download_button.setVisible(False)
            self.folder_button.setProperty("role", "primary")
            self.folder_button.setDefault(True)
        self.download_button.clicked.connect(self.start_download)
        self.cancel_button.clicked.connect(self.cancel_download)
        self.folder_button.clicked.connect(self.choose_folder)
        self.close_button.clicked.connect(self.reject)

    def _release_facts(self) -> str:
        """What the model is, where it comes from and where it goes, in sentences (no commands)."""
        try:
            from model.download import release, repo_dir

            rel = release(self.variant)
            size = f", {download_size(self.variant)} in all" if rel.files else ""
            revision = f", revision {rel.revision[:10]}" if rel.revision else ""
            snapshot = repo_dir(self.variant) / "snapshots" / (rel.revision or "")
            return (
                f"The model is Hayai OCR {self.variant} from huggingface.co/{rel.repo_id}{revision}: "
                f"{', '.join(REQUIRED_FILES)}{size}.\n"
                f"A download is saved in the Hugging Face cache, {snapshot}, and checked file by file.\n"
                "Without internet: copy these files into any folder on this computer and choose "
                "that folder here."
            )
        except Exception:  # the engine package is broken: still say something useful
            return (
                f"The model is three files: {REQUIRED_FILES_TEXT}. "
                "Choose a folder holding them, or download them."
            )

    def _details_text(self, error: str = "") -> str:
        lead = error or self._reason
        return f"{lead}\n\n{self._facts}" if lead else self._facts

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setProperty("role", "error" if error else "")
        theme.repolish(self.status)
        self.status.setText(text)
        self.status.setVisible(bool(text))
        self.adjustSize()

    # --- actions ---------------------------------------------------------------------------------

    def start_download(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._cancel.clear()
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self._say("Connecting…")
        self.details.set_text(self._details_text())
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
        self._say("Cancelling…")

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose the folder with the model files")
        if folder:
            self.use_folder(folder)

    def use_folder(self, folder: str) -> bool:
        """Take `folder` when it holds the release files; else say which one is missing and stay."""
        missing = missing_files(folder)
        if missing:
            self._say(f"“{Path(folder).name or folder}” has no {missing[0]}. {CHOOSE_AGAIN}", True)
            self.details.set_text(self._details_text(f"Chosen folder: {folder}"))
            return False
        self.folder_chosen.emit(folder)
        self.accept()
        return True

    # --- download thread → GUI -------------------------------------------------------------------

    def _set_downloading(self, active: bool) -> None:
        self.download_button.setEnabled(not active)
        self.folder_button.setEnabled(not active)
        self.cancel_button.setVisible(active)
        self.close_button.setVisible(not active)

    def _on_progress(self, name: str, done, total) -> None:
        self.file_label.setText(f"{name}: {_mb(done)} of {_mb(total)}" if total else name)
        self.file_label.setVisible(True)
        self.progress.setValue(int(1000 * done / total) if total else 0)
        self._say("Downloading…")

    def _on_done(self, folder: str) -> None:
        self._set_downloading(False)
        self.progress.setValue(1000)
        self._say("Installed.")
        self.downloaded.emit(folder)
        self.accept()

    def _on_failed(self, message: str, cancelled: bool) -> None:
        self._set_downloading(False)
        self.progress.setVisible(False)
        self.file_label.setVisible(False)
        if cancelled:
            self._say("Download cancelled. What was fetched is kept: Download resumes it.")
            return
        first = split_message(message)[0].lower()
        if any(hint in first for hint in OFFLINE_HINTS):
            sentence = "Hayai cannot reach huggingface.co, so the model cannot be downloaded now."
        else:
            sentence = "The download did not finish."
        self._say(f"{sentence} Try again, or choose a folder with the files.", error=True)
        reason = message.strip().splitlines()[0] if message.strip() else ""
        self.details.set_text(self._details_text(reason))  # the reason, once, behind Details
        self.download_button.setText("Try again")

    @qt_override
    def closeEvent(self, event) -> None:
        self._cancel.set()  # a running download stops at its next chunk; the partial file is kept
        super().closeEvent(event)

    def reject(self) -> None:
        self._cancel.set()
        super().reject()
