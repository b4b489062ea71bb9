"""The reading log: every read of this session (boxed, clicked, watched, from the clipboard or a
folder) as lines, newest at the bottom; the crop shows on hover; the selected line opens in the
shared editable text view (app/ui/text_view.py) with the same dictionary hover as the overlay;
corrections are saved to the history database; Copy, and Export as a plain-text file. Its lines
come from the history thread (`History.fetch`), unsaved ones included: it never waits.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCursor,
    QGuiApplication,
    QPixmap,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListView,
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
from app.ui.log_rows import PARTS, RowDelegate
from app.ui.note import ErrorNote
from app.ui.rich_text import PlainLabel, message_box
from app.ui.text_view import EditableTextView, WordPointer, global_line

SOURCE_LABELS = {
    "box": "boxed",
    "click": "clicked",
    "watch": "watched",
    "clipboard": "clipboard",
    "folder": "folder",
    "hover": "hovered",
}


def line_parts(entry: Entry) -> tuple[str, str, str]:
    """A row's three parts: the time, the text (its line breaks as spaces), how it came in."""
    when = time.strftime("%H:%M:%S", time.localtime(entry.created))
    source = SOURCE_LABELS.get(entry.source, "")
    return when, entry.text.replace("\n", " "), f"· {source}" if source else ""


def line_of(entry: Entry) -> str:
    """A row as one line of plain text (what the row says, for tests and accessibility)."""
    when, text, source = line_parts(entry)
    return f"{when}   {text}" + (f"   {source}" if source else "")


def export_text(entries: list[Entry]) -> str:
    """One line per read, oldest first: time, a tab, the text (line breaks kept as spaces)."""
    return "".join(
        f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(e.created))}\t"
        f"{e.text.replace(chr(10), ' ')}\n"
        for e in entries
    )


HINT = "Edits are saved · hover a line for its crop"


class ReadingLog(QWidget):
    word_hovered = Signal(str, int, QPoint)  # for the dictionary popup, as the overlay's
    word_left = Signal()
    copied = Signal(str)
    # the line, its selected part ("" = none): Anki, as the overlay's
    mine_requested = Signal(str, str)

    def __init__(self, history: History, since: float, trigger=lambda: "hover", parent=None):
        super().__init__(parent, Qt.WindowType.Window)
        theme.apply(self, "HayaiWindow")
        self.setWindowTitle(theme.window_title("Reading log"))
        self.setWindowIcon(theme.app_icon())
        self.history = history
        self.since = since
        self.entries: list[Entry] = []
        self._editing = -1  # the row whose text is in the editor
        self._token = 0  # the fetch whose answer the list waits for
        self._late: list[Entry] = []  # reads added while it is on its way
        self._edited: dict[int, str] = {}  # corrections made meanwhile: its answer may lack them

        self.list = QListWidget()
        self.list.setObjectName("ReadingLogList")
        self.list.setFont(theme.cjk_font("", 12))
        self.list.setItemDelegate(RowDelegate(self.list))
        # rows follow the list's width (laid out again when it changes: eventFilter), never
        # scrolled sideways
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.list.setMouseTracking(True)
        self.count = QLabel("")
        self.count.setProperty("role", "muted")
        self.editor = EditableTextView()
        self.editor.setFont(theme.cjk_font("", 16))
        self.editor.setPlaceholderText("Select a line to edit it; hover a word for the dictionary")
        self.editor.setFixedHeight(96)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setProperty("role", "primary")
        self.export_button = QPushButton("Export…")
        self.mine_button = QPushButton("Mine")
        self.mine_button.setToolTip(
            "Make an Anki card of this line (of the selected word, when one is selected)"
        )
        self.mine_button.setVisible(False)  # shown when Anki mining is on (set_mining)
        self.crop = QLabel(None, Qt.WindowType.ToolTip)  # the hovered line's crop, by the pointer
        self.crop.setObjectName("ReadingLogCrop")

        top = QHBoxLayout()
        title = QLabel("Reading log")
        title.setProperty("role", "title")
        top.addWidget(title)
        top.addStretch(1)
        top.addWidget(self.count)
        buttons = QHBoxLayout()
        self.hint = PlainLabel(HINT)  # notes name the files written
        self.hint.setProperty("role", "muted")
        buttons.addWidget(self.hint)
        buttons.addStretch(1)
        buttons.addWidget(self.mine_button)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 16)
        layout.setSpacing(10)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.editor)
        self.note = ErrorNote()  # what went wrong with Mine, whole, until dismissed
        layout.addWidget(self.note)
        layout.addLayout(buttons)
        self.resize(620, 560)

        self.pointer = WordPointer(self.editor.toPlainText, trigger, self)
        self.pointer.attach(self.editor, self.editor.viewport())
        self.pointer.word_hovered.connect(self.word_hovered)
        self.pointer.word_left.connect(self.word_left)
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(400)
        self._save_timer.timeout.connect(self._save_edit)
        self.list.currentRowChanged.connect(self._on_row)
        self.list.itemEntered.connect(self._show_crop)
        self.list.viewport().installEventFilter(self)
        self.editor.textChanged.connect(self._save_timer.start)
        self.copy_button.clicked.connect(self.copy_text)
        self.export_button.clicked.connect(self.export)
        self.mine_button.clicked.connect(
            lambda: self.mine_requested.emit(
                self.editor.toPlainText(), self.editor.textCursor().selectedText().strip()
            )
        )
        self._note_timer = QTimer(self)
        self._note_timer.setSingleShot(True)
        self._note_timer.setInterval(3000)
        self._note_timer.timeout.connect(lambda: self.hint.setText(HINT))
        history.fetched.connect(self._show)
        self.refresh()

    # --- content ---------------------------------------------------------------------------------

    @property
    def loading(self) -> bool:
        return self._token != 0

    def refresh(self) -> None:
        """Ask for the session's lines again; they are listed when they come."""
        self._save_edit()
        self._late, self._edited = [], {}
        self._token = self.history.fetch(since=self.since)

    def _show(self, token: int, entries: list[Entry], _total: int) -> None:
        if token != self._token:
            return  # an older question's answer
        self._save_edit()  # typed while the answer was on its way
        self._token = 0
        editing = self.current_entry()
        listed = {e.id for e in entries}
        late, self._late = [e for e in self._late if e.id not in listed], []
        edited, self._edited = self._edited, {}
        self.entries = [
            replace(e, text=edited[e.id]) if e.id in edited else e
            for e in list(reversed(entries)) + late
        ]
        # the line being edited stays selected, the editor (its text, its cursor) untouched
        row = next((i for i, e in enumerate(self.entries) if editing and e.id == editing.id), -1)
        self.list.blockSignals(True)
        self.list.clear()
        for entry in self.entries:
            self.list.addItem(self._item(entry))
        self.list.setCurrentRow(row)
        self.list.blockSignals(False)
        self._editing = row
        if row < 0:
            self.editor.blockSignals(True)
            self.editor.clear()
            self.editor.blockSignals(False)
        self._after_change()

    def add(self, entry: Entry | None) -> None:
        """A new read: appended at the bottom, and scrolled to when the view was at the bottom."""
        if entry is None or entry.created < self.since:
            return
        if self.loading:
            self._late.append(entry)
        bar = self.list.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        self.entries.append(entry)
        self.list.addItem(self._item(entry))
        if at_bottom:
            self.list.scrollToBottom()
        self._after_change()

    def update_entry(self, entry_id: int, text: str) -> None:
        """A line corrected elsewhere (the overlay): its text here and in the editor."""
        for row, entry in enumerate(self.entries):
            if entry.id != entry_id:
                continue
            self.entries[row] = replace(entry, text=text)
            self._fill(self.list.item(row), self.entries[row])
            if self.loading:
                self._edited[entry_id] = text
            if row == self._editing:
                self.editor.blockSignals(True)
                self.editor.setPlainText(text)
                self.editor.blockSignals(False)

    def _item(self, entry: Entry) -> QListWidgetItem:
        item = QListWidgetItem()
        item.setData(Qt.ItemDataRole.UserRole, entry.id)
        self._fill(item, entry)
        return item

    @staticmethod
    def _fill(item: QListWidgetItem, entry: Entry) -> None:
        item.setText(line_of(entry))
        item.setData(PARTS, line_parts(entry))

    def _after_change(self) -> None:
        n = self.list.count()  # the rows listed, as counted
        self.count.setText(f"{n} read{'s' if n != 1 else ''} this session")
        self.copy_button.setEnabled(n > 0)
        self.export_button.setEnabled(n > 0)

    def _on_row(self, row: int) -> None:
        self._save_edit()
        self._editing = row if 0 <= row < len(self.entries) else -1
        self.editor.blockSignals(True)
        self.editor.setPlainText(self.entries[row].text if self._editing >= 0 else "")
        self.editor.blockSignals(False)

    def _save_edit(self) -> None:
        self._save_timer.stop()
        row = self._editing
        if not 0 <= row < len(self.entries):
            return
        text = self.editor.toPlainText()
        entry = self.entries[row]
        if text == entry.text:
            return
        self.history.update_text(entry.id, text)
        if self.loading:
            self._edited[entry.id] = text
        self.entries[row] = replace(entry, text=text)
        self._fill(self.list.item(row), self.entries[row])

    def highlight(self, start: int, length: int) -> None:
        self.editor.set_highlight(start, length)

    def line_at(self, index: int) -> tuple[QRect, bool]:
        """The editor's line holding character `index`, on the screen (as the overlay's)."""
        return global_line(self.editor, self.editor.viewport(), index), False

    def current_entry(self) -> Entry | None:
        """The line being shown in the editor (the one Mine and the dictionary are about)."""
        return self.entries[self._editing] if 0 <= self._editing < len(self.entries) else None

    # --- Anki ------------------------------------------------------------------------------------

    def set_mining(self, on: bool) -> None:
        self.mine_button.setVisible(bool(on))

    def show_note(self, text: str, error: bool = False) -> None:
        """A short word in place of the hint for a moment (e.g. what Anki did); an error is shown
        whole, above the buttons, until dismissed."""
        if error:
            self.note.show_text(text)
            return
        self.note.setVisible(False)  # a new attempt replaces an old error
        self.hint.setText(text)
        self._note_timer.start()

    # --- the crop on hover -----------------------------------------------------------------------

    def _show_crop(self, item: QListWidgetItem) -> None:
        row = self.list.row(item)
        thumb = self.entries[row].thumbnail if 0 <= row < len(self.entries) else None
        pixmap = QPixmap()
        if not thumb or not pixmap.loadFromData(thumb):
            self.crop.hide()
            return
        self.crop.setPixmap(pixmap)
        self.crop.adjustSize()
        self.crop.move(QCursor.pos() + QPoint(18, 14))
        self.crop.show()

    @qt_override
    def eventFilter(self, watched, event) -> bool:
        if watched is self.list.viewport() and event.type() == event.Type.Leave:
            self.crop.hide()
        elif (
            watched is self.list.viewport()
            and event.type() == event.Type.Resize
            and event.size().width() != event.oldSize().width()
        ):  # QListView lays rows out again only when its height changes: the rows' heights
            self.list.doItemsLayout()  # follow the width they wrap in
        return super().eventFilter(watched, event)

    # --- copy and export -------------------------------------------------------------------------

    def copy_text(self) -> str:
        cursor = self.editor.textCursor()
        if cursor.hasSelection():
            text = cursor.selectedText().replace("\u2029", "\n")
        else:
            row = self.list.currentRow()
            text = self.editor.toPlainText() if row >= 0 else export_text(self.entries)
        if text:
            QGuiApplication.clipboard().setText(text)
            self.copied.emit(text)
        return text

    def export(self, path: str | None = None) -> Path | None:
        """Write the session's reads to a text file (asks where unless `path` is given)."""
        self._save_edit()
        if path is None:
            default = Path.home() / time.strftime("hayai-reading-%Y%m%d-%H%M.txt")
            path, _ = QFileDialog.getSaveFileName(
                self, "Export the reading log", str(default), "Text files (*.txt)"
            )
            if not path:
                return None
        target = Path(path)
        try:
            target.write_text(export_text(self.entries), encoding="utf-8")
        except OSError as exc:
            message_box(
                self, QMessageBox.Icon.Warning, "Export failed", f"Could not write {target}:\n{exc}"
            ).exec()
            return None
        return target

    @qt_override
    def hideEvent(self, event) -> None:
        self.crop.hide()
        self._save_edit()
        super().hideEvent(event)

    @qt_override
    def closeEvent(self, event) -> None:
        self.crop.close()
        super().closeEvent(event)
