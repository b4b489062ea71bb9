"""The imported (Yomitan-format) dictionaries in Settings: a list in lookup order with a check box
each (enabled) and JMdict's row at its place among them, Up/Down/Remove (never JMdict's), and
Import… with a progress bar; the import runs on a worker thread with its own connection, so the
window stays responsive and lookups keep working."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.dictionary.yomitan import JMDICT, Store
from app.dictionary.yomitan_zip import ImportError_
from app.ui import theme
from app.ui.rich_text import PlainLabel, message_box, tooltip
from model.progress import fraction


class DictionaryManager(QWidget):
    imported = Signal(str)  # title, after a successful import
    failed = Signal(str)  # the message shown
    _progress = Signal(float, str)  # from the worker thread
    _finished = Signal(str, str)  # (title, error): exactly one is set

    def __init__(self, store: Store | None = None, parent=None):
        super().__init__(parent)
        self.store = store or Store()
        self._worker: threading.Thread | None = None

        self.list = QListWidget()
        self.list.setMinimumHeight(84)
        self.list.setMaximumHeight(112)  # the Settings window is tall already; the list scrolls
        self.list.itemChanged.connect(self._on_item_changed)
        self.list.currentRowChanged.connect(lambda _row: self._update_buttons())
        self.empty = QLabel(
            "None yet: Yomitan dictionary files (.zip) with terms, frequencies, pitch."
        )
        self.empty.setProperty("role", "muted")

        self.import_button = QPushButton("Import…")
        self.import_button.clicked.connect(self.choose_file)
        self.up_button = QPushButton("Up")
        self.up_button.clicked.connect(lambda: self._move(-1))
        self.down_button = QPushButton("Down")
        self.down_button.clicked.connect(lambda: self._move(1))
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self._remove)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        for b in (self.import_button, self.up_button, self.down_button, self.remove_button):
            buttons.addWidget(b)
        buttons.addStretch(1)

        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setVisible(False)
        self.status = PlainLabel("")  # names dictionaries and files: outside text
        self.status.setProperty("role", "muted")
        self.status.setWordWrap(True)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.list)
        layout.addWidget(self.empty)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)

        self._progress.connect(self._on_progress)
        self._finished.connect(self._on_finished)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.refresh()

    # --- the list ------------------------------------------------------------------------------

    def titles(self) -> list[str]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]

    def refresh(self) -> None:
        current = self.list.currentItem()
        keep = current.data(Qt.ItemDataRole.UserRole) if current else None
        self.list.blockSignals(True)
        self.list.clear()
        infos = {d.title: d for d in self.store.dictionaries()}
        # JMdict has its place in the order once there is something to order it against
        for title in self.store.order() if infos else []:
            info = infos.get(title)
            if info is None:
                item = QListWidgetItem(f"{JMDICT}  —  words, names and kanji")
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)  # always used
                item.setToolTip("At equal length, dictionaries above it rank before JMdict's words")
            else:
                item = QListWidgetItem(f"{info.title}  —  {', '.join(info.kinds) or 'empty'}")
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(
                    Qt.CheckState.Checked if info.enabled else Qt.CheckState.Unchecked
                )
                item.setToolTip(
                    tooltip(
                        f"Revision {info.revision or '-'}; unticked dictionaries are not used in lookups"
                    )
                )
            item.setData(Qt.ItemDataRole.UserRole, title)
            self.list.addItem(item)
            if title == keep:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self.list.setVisible(self.list.count() > 0)
        self.empty.setVisible(self.list.count() == 0)
        self._update_buttons()

    def _update_buttons(self) -> None:
        row = self.list.currentRow()
        busy = self._worker is not None
        self.import_button.setEnabled(not busy)
        self.list.setEnabled(not busy)  # the import holds the write lock until it commits
        self.up_button.setEnabled(not busy and row > 0)
        self.down_button.setEnabled(not busy and 0 <= row < self.list.count() - 1)
        builtin = row >= 0 and self.list.item(row).data(Qt.ItemDataRole.UserRole) == JMDICT
        self.remove_button.setEnabled(not busy and row >= 0 and not builtin)

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        if item.data(Qt.ItemDataRole.UserRole) == JMDICT:
            return  # JMdict is always used: it has no check box
        self.store.set_enabled(
            item.data(Qt.ItemDataRole.UserRole), item.checkState() == Qt.CheckState.Checked
        )

    def _move(self, delta: int) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        self.store.move(item.data(Qt.ItemDataRole.UserRole), delta)
        self.refresh()

    def _remove(self, confirm: bool = True) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        title = item.data(Qt.ItemDataRole.UserRole)
        if title == JMDICT:
            return
        if confirm:
            box = message_box(
                self,
                QMessageBox.Icon.Question,
                "Remove dictionary",
                f"Remove “{title}” and all its entries?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            )
            if box.exec() != QMessageBox.StandardButton.Yes:
                return
        self.store.remove(title)
        self.status.setText(f"Removed {title}.")
        self.refresh()

    # --- import --------------------------------------------------------------------------------

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import a Yomitan dictionary", str(Path.home()), "Yomitan dictionaries (*.zip)"
        )
        if path:
            self.start_import(path)

    def start_import(self, path: str) -> None:
        """Import on a worker thread; the progress bar follows it, the list refreshes at the end."""
        if self._worker is not None:
            return
        name = Path(path).name
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.status.setText(f"Importing {name}…")
        store_path = self.store.path

        def emit(signal, *args) -> None:
            try:
                signal.emit(*args)
            except RuntimeError:  # the Settings window was closed: the import still completes
                pass

        def work() -> None:
            store = Store(store_path)  # its own connection: the GUI thread never waits on it
            try:
                info = store.import_zip(
                    path,
                    lambda what, done, total: emit(self._progress, fraction(done, total), what),
                )
                emit(self._finished, info.title, "")
            except ImportError_ as exc:
                emit(self._finished, "", f"Could not import {exc}. Nothing was changed.")
            except Exception as exc:  # disk full, permissions: say so, keep the app running
                emit(self._finished, "", f"Could not import {name}: {exc}. Nothing was changed.")
            finally:
                store.close()

        self._worker = threading.Thread(target=work, name="hayai-dictionary-import", daemon=True)
        self._update_buttons()
        self._worker.start()

    def is_importing(self) -> bool:
        return self._worker is not None

    def _on_progress(self, fraction: float, stage: str) -> None:
        self.progress.setValue(int(fraction * 100))
        if stage != "done":
            self.progress.setFormat(f"%p%  {stage}")

    def _on_finished(self, title: str, error: str) -> None:
        if self._worker is not None:
            self._worker.join()
        self._worker = None
        self.progress.setVisible(False)
        self.refresh()
        if error:
            self.status.setText(error)
            self.status.setProperty("role", "error")
            self.failed.emit(error)
        else:
            info = next((d for d in self.store.dictionaries() if d.title == title), None)
            kinds = ", ".join(info.kinds) if info else ""
            self.status.setProperty("role", "muted")
            self.status.setText(f"Imported {title}: {kinds}.")
            self.imported.emit(title)
        theme.repolish(self.status)
