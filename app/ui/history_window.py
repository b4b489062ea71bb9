"""The history window: past captures with their thumbnails; search, copy again, delete, clear all.
Its rows come from the history thread (`History.fetch`), unsaved ones included: it never waits."""

from __future__ import annotations

import time

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.history import Entry, History
from app.ui import theme
from app.ui.guard import qt_override
from app.ui.qimage import thumbnail_pixmap
from app.ui.rich_text import tooltip

THUMB = QSize(96, 64)


def describe(entry: Entry) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.created))
    x, y, w, h = entry.box
    first = entry.text.replace("\n", " ")
    if len(first) > 90:
        first = first[:89] + "…"
    return f"{first}\n{when} · {entry.screen or '?'} · {w}×{h} px at {x},{y}"


class HistoryWindow(QWidget):
    copied = Signal(str)

    def __init__(self, history: History, parent=None):
        super().__init__(parent, Qt.WindowType.Window)
        theme.apply(self, "HayaiWindow")
        self.setWindowTitle(theme.window_title("History"))
        self.setWindowIcon(theme.app_icon())
        self.history = history
        self.entries: list[Entry] = []  # as listed
        self.total = 0  # captures in the history (the list shows the search's)
        self._token = 0  # the fetch whose answer the list waits for
        self._row = 0  # the row selected when it comes
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search the text of past captures…")
        self.search.setClearButtonEnabled(True)
        self.list = QListWidget()
        self.list.setIconSize(THUMB)
        self.list.setWordWrap(True)
        self.list.setFont(theme.cjk_font("", 11))
        self.count = QLabel("")
        self.count.setProperty("role", "muted")
        self.copy_button = QPushButton("Copy")
        self.copy_button.setProperty("role", "primary")
        self.delete_button = QPushButton("Delete")
        self.clear_button = QPushButton("Clear all…")

        top = QHBoxLayout()
        title = QLabel("History")
        title.setProperty("role", "title")
        top.addWidget(title)
        top.addSpacing(12)
        top.addWidget(self.search, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.count, 1)
        buttons.addWidget(self.clear_button)
        buttons.addWidget(self.delete_button)
        buttons.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 14, 18, 16)
        layout.setSpacing(10)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self.resize(640, 520)

        self.search.textChanged.connect(lambda *_: self.refresh())
        self.list.itemDoubleClicked.connect(lambda item: self.copy_selected())
        self.list.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.copy_button.clicked.connect(self.copy_selected)
        self.delete_button.clicked.connect(self.delete_selected)
        self.clear_button.clicked.connect(self.confirm_clear)
        history.fetched.connect(self._show)
        self.refresh()

    @property
    def loading(self) -> bool:
        return self._token != 0

    def refresh(self, row: int = 0) -> None:
        """Ask for the rows again; they are listed when they come, `row` selected."""
        self._row = row
        self._token = self.history.fetch(self.search.text().strip())

    def _show(self, token: int, entries: list[Entry], total: int) -> None:
        if token != self._token:
            return  # an older question's answer
        self._token = 0
        self.entries, self.total = entries, total
        self.list.clear()
        for entry in entries:
            item = QListWidgetItem(describe(entry))
            item.setData(Qt.ItemDataRole.UserRole, entry.id)
            item.setToolTip(tooltip(entry.text))
            if entry.thumbnail:
                pixmap = thumbnail_pixmap(entry.thumbnail)
                if pixmap is not None:
                    item.setIcon(QIcon(pixmap))
            self.list.addItem(item)
        shown = f"{len(entries)} of {total}" if self.search.text().strip() else f"{total}"
        self.count.setText(f"{shown} capture{'s' if total != 1 else ''} · newest first")
        if entries:
            self.list.setCurrentRow(min(self._row, len(entries) - 1))
        self._update_buttons()

    def selected_id(self) -> int | None:
        item = self.list.currentItem()
        return None if item is None else int(item.data(Qt.ItemDataRole.UserRole))

    def copy_selected(self) -> str:
        row = self.list.currentRow()
        if not 0 <= row < len(self.entries):
            return ""
        entry = self.entries[row]
        QGuiApplication.clipboard().setText(entry.text)
        self.copied.emit(entry.text)
        return entry.text

    def delete_selected(self) -> None:
        entry_id = self.selected_id()
        if entry_id is not None:
            self.history.delete(entry_id)
            self.refresh(self.list.currentRow())

    def confirm_clear(self) -> None:
        answer = QMessageBox.question(self, "Clear history", "Delete every capture in the history?")
        if answer == QMessageBox.StandardButton.Yes:
            self.clear()

    def clear(self) -> None:
        self.history.clear()
        self.refresh()

    def _update_buttons(self) -> None:
        has = self.list.currentItem() is not None
        self.copy_button.setEnabled(has)
        self.delete_button.setEnabled(has)
        self.clear_button.setEnabled(self.total > 0)

    @qt_override
    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
        else:
            super().keyPressEvent(event)
