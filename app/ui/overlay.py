"""The result overlay: a dark card beside the boxed region with the text, a status line and buttons.

Frameless and on top, placed next to the box (never over it) and kept on the box's screen. The text
is editable in the horizontal layout (fix an OCR slip, then copy); the vertical layout and furigana
are painted by `PaintedTextView`, which cannot be edited: a key typed over it switches to the editor,
and the painted layout comes back once the editor loses the keyboard. Ctrl+C copies (the selection,
or all text), Esc closes.

Each read opens in its own layout: the block's direction when the selection knew it, else the
"Vertical layout by default" setting; the Vertical/Horizontal toggle changes the read at hand only.
The card leaves clear the box and the blocks the read names (the next one in reading order); a
vertical read is a tall, narrow card beside its column, as wide as the room beside the box allows
(at most `MAX_WIDTH`), its columns made longer before its text scrolls inside.

Hook for the dictionary: `word_hovered(text, index, global_pos)` when the mouse rests on a
character (or clicks it, with the "click" trigger), `word_left()` when it leaves the text, and
`highlight(start, length)` to mark the looked-up word.
"""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import QCoreApplication, QEvent, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QImage, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QSizePolicy, QStackedWidget, QVBoxLayout

from app.capture.nearby import Nearby
from app.ui import theme
from app.ui.guard import qt_override
from app.ui.note import ErrorNote
from app.ui.overlay_card import OverlayCard
from app.ui.overlay_header import OverlayHeader
from app.ui.overlay_message import OverlayMessage
from app.ui.overlay_painted import PaintedArea
from app.ui.overlay_placement import MAX_WIDTH, MIN_WIDTH, card_room, placement
from app.ui.text_view import EditableTextView, WordPointer, global_line

log = logging.getLogger(__name__)


class Overlay(OverlayCard):
    """Shows one capture's text. The application calls `show_reading`, `show_result`, `show_error`."""

    word_hovered = Signal(str, int, QPoint)  # text, character index, global position
    word_left = Signal()
    copied = Signal(str)
    rescan_requested = Signal()
    mine_requested = Signal(str, str)  # the line, the selected part of it ("" = none): Anki
    closed = Signal()
    text_edited = Signal(str)
    # A correction is committed (the app keeps it: history, reading log, text outputs) when the
    # user is done with the text: the card hides or closes, a new reading replaces it, or it is
    # copied or mined; once per change (the same text twice is not committed again).
    edit_committed = Signal(str)
    text_replaced = Signal()  # a new reading, result or error replaced what was shown
    text_painted = Signal(float)  # time.perf_counter() of the first paint showing a new result

    def __init__(self, trigger=lambda: "hover", parent=None):
        """`trigger`: a callable, "hover" or "click": what looks a word up (see WordPointer)."""
        super().__init__(parent)
        self.setWindowTitle("Hayai")
        # callable(text) -> [(surface, reading or None)], set by the app
        self.furigana_provider = None
        self._vertical = False  # the read at hand's layout
        self._default_vertical = False  # the setting: a read's layout when its direction is unknown
        self._furigana = False
        self._typing = False  # a key pressed over the painted text: the editor until done (_type)
        self._box = QRect()
        self._screen = QRect()
        self._keep_clear: list[QRect] = []  # besides the box: blocks the card must not cover
        self._column_length = 12  # characters per column as the box is: the columns' shortest
        self._highlight = (0, 0)
        self._await_paint = False
        self._reading_timer = QTimer(self)
        self._reading_timer.setInterval(350)
        self._reading_timer.timeout.connect(self._tick_reading)
        self._committed = ""  # the text as shown by show_result or last committed
        self._build(trigger)

    # --- widgets ---------------------------------------------------------------------------------

    def _build(self, trigger) -> None:
        self.header = OverlayHeader()
        # the header's parts, by the names the card's users know them
        self.status = self.header.status
        self.copy_button, self.layout_button = self.header.copy_button, self.header.layout_button
        self.furigana_button = self.header.furigana_button
        self.rescan_button, self.mine_button = self.header.rescan_button, self.header.mine_button
        self.close_button = self.header.close_button

        self.editor = EditableTextView()
        self.editor.setObjectName("OverlayText")
        self.painted_area = PaintedArea()
        self.painted = self.painted_area.view
        self.message = OverlayMessage()
        self.message.linkActivated.connect(self._toggle_error_details)
        self.note = ErrorNote()  # what went wrong with Mine, whole, until dismissed
        self.note.dismissed.connect(self._present_if_shown)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.editor)
        self.stack.addWidget(self.painted_area)
        self.stack.addWidget(self.message)
        self.stack.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

        layout = QVBoxLayout(self)
        # _present() sizes the card
        layout.setSizeConstraint(QVBoxLayout.SizeConstraint.SetNoConstraint)
        layout.setContentsMargins(14, 10, 12, 14)
        layout.setSpacing(8)
        layout.addWidget(self.header)
        layout.addWidget(self.note)
        layout.addWidget(self.stack, 1)

        self.copy_button.clicked.connect(self.copy_text)
        self.layout_button.clicked.connect(lambda: self.set_vertical(not self._vertical))
        self.furigana_button.toggled.connect(self.set_furigana)
        self.rescan_button.clicked.connect(self.rescan_requested.emit)
        self.mine_button.clicked.connect(self._mine)
        self.close_button.clicked.connect(self.close)
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.installEventFilter(self)
        self.pointer = WordPointer(self.text, trigger, self)
        self.pointer.attach(self.editor, self.editor.viewport())
        self.pointer.attach(self.painted, self.painted)
        self.pointer.word_hovered.connect(self.word_hovered)
        self.pointer.word_left.connect(self.word_left)
        self.painted.double_clicked.connect(self._edit_at)
        self.painted.setToolTip("Type, or double-click, to edit the text")
        self.furigana_button.setVisible(False)  # shown once a provider is set

    # --- what the application calls --------------------------------------------------------------

    def configure(
        self,
        font_family: str,
        font_size: int,
        vertical: bool,
        furigana_provider=None,
    ) -> None:
        """The settings; `vertical` is the layout of reads whose direction is not known (a change
        of it applies to the read at hand too: the user just asked for it)."""
        font = theme.cjk_font(font_family, font_size)
        self.editor.setFont(font)
        self.painted.set_font(font)
        self.furigana_provider = furigana_provider
        self.furigana_button.setVisible(furigana_provider is not None)
        if bool(vertical) != self._default_vertical:
            self._default_vertical = self._vertical = bool(vertical)
        self._refresh_view()

    def set_anchor(self, box: QRect, screen: QRect, nearby: Nearby | None = None) -> None:
        """A new read: its box and its screen's available area, in global logical coordinates,
        and what the selection knew around it (the blocks to leave clear, its direction), in the
        same coordinates. The read opens in its own layout, whatever the last one was toggled to."""
        self._box, self._screen = QRect(box), QRect(screen)
        nearby = nearby or Nearby()
        self._keep_clear = [QRect(*rect) for rect in nearby.keep_clear]
        self._vertical = self._default_vertical if nearby.vertical is None else nearby.vertical
        self._show_layout()
        # A vertical bubble keeps roughly its shape: as many characters per column as fit its height.
        self._column_length = max(6, min(20, round(box.height() / self.painted.em() * 0.9)))

    def prepare(self) -> None:
        """Create the native window and load the text font's glyphs now, so the first result shows fast."""
        self.winId()
        sample = "「今日はいい天気ですね。」漢字カタカナ ABC 123"
        self.editor.setPlainText(sample)
        self.painted.set_content(sample, True)
        image = QImage(64, 64, QImage.Format.Format_RGB32)
        self.editor.viewport().render(image)
        self.painted.render(image)
        self.editor.clear()

    def commit_edit(self) -> None:
        """Emit `edit_committed` when the text differs from what was shown or last committed."""
        if self.text() != self._committed:
            self._committed = self.text()
            self.edit_committed.emit(self._committed)

    def _mine(self) -> None:
        self.commit_edit()
        self.mine_requested.emit(self.text(), self.editor.textCursor().selectedText().strip())

    def show_reading(self) -> None:
        """Loading state while the model reads the box."""
        self.commit_edit()
        self.text_replaced.emit()
        self.message.show_reading()
        self.stack.setCurrentWidget(self.message)
        self._reading_timer.start()
        self._tick_reading()
        self.header.set_buttons_enabled(False)
        self._present()

    def show_result(self, text: str, status: str, activate: bool = True) -> None:
        """`activate=False` leaves the keyboard where it is (a watched game keeps it)."""
        self.commit_edit()
        self.text_replaced.emit()
        self._reading_timer.stop()
        self.header.show_status(status)
        self.editor.blockSignals(True)
        self.editor.setPlainText(text)
        self.editor.blockSignals(False)
        self._committed = text
        self._highlight = (0, 0)
        self._typing = False
        self.header.set_buttons_enabled(True)
        self._refresh_view()
        self._await_paint = True
        self._present(activate)
        self.update()

    def show_error(self, message: str) -> None:
        """One sentence, left-aligned; the rest of a long message behind a "Details" link."""
        self.commit_edit()
        self.text_replaced.emit()
        self._reading_timer.stop()
        self.message.show_error(message)
        self.stack.setCurrentWidget(self.message)
        self.status.setText("error")
        self.header.set_buttons_enabled(False)
        self.rescan_button.setEnabled(True)
        self._present()

    def restore(self) -> None:
        """Show the card again as it was (after stepping aside for a window of the app)."""
        self._present(activate=False)

    def text(self) -> str:
        return self.editor.toPlainText()

    def is_vertical(self) -> bool:
        return self._vertical

    def line_at(self, index: int) -> tuple[QRect, bool]:
        """The shown line (column, when vertical) holding character `index`, on the screen, and
        whether it is a column: the dictionary popup goes beside it, never over it."""
        if self.stack.currentWidget() is self.painted_area:
            return global_line(self.painted, self.painted, index), self.painted.is_vertical()
        return global_line(self.editor, self.editor.viewport(), index), False

    def copy_text(self) -> str:
        """Copy the editor's selection, or all text; returns what was copied."""
        self.commit_edit()
        cursor = self.editor.textCursor()
        text = (
            cursor.selectedText().replace("\u2029", "\n") if cursor.hasSelection() else self.text()
        )
        if text:
            QGuiApplication.clipboard().setText(text)
            self.copied.emit(text)
            self._flash("Copied ✓")
        return text

    def set_vertical(self, vertical: bool) -> None:
        self._vertical = bool(vertical)
        self._refresh_view()
        if self.isVisible():
            self._present()

    def _edit_at(self, index: int) -> None:
        """The painted layouts are read-only: a double-click switches to the editor, cursor at that character."""
        self._furigana = False
        self.furigana_button.setChecked(False)
        self.set_vertical(False)
        cursor = self.editor.textCursor()
        cursor.setPosition(max(0, min(index, len(self.text()))))
        self.editor.setTextCursor(cursor)
        self.editor.setFocus()

    def set_furigana(self, on: bool) -> None:
        self._furigana = bool(on) and self.furigana_provider is not None
        self.furigana_button.setChecked(self._furigana)
        self._refresh_view()
        if self.isVisible():
            self._present()

    def highlight(self, start: int, length: int) -> None:
        """Mark text[start:start+length] (the dictionary's match); length 0 clears."""
        self._highlight = (start, max(0, length))
        self.painted.set_highlight(start, length)
        self.editor.set_highlight(start, length)

    # --- internals -------------------------------------------------------------------------------

    def _toggle_error_details(self, _link: str = "") -> None:
        self.message.toggle_details()
        self._present()

    def error_text(self) -> str:
        """The error as shown (sentence, and the details when open), without markup."""
        return self.message.error_text()

    def _tick_reading(self) -> None:
        self.message.tick_reading()
        self.status.setText("reading…")

    def set_mining(self, on: bool) -> None:
        """Show the Mine button (Anki)."""
        self.mine_button.setVisible(bool(on))

    def show_note(self, text: str, error: bool = False) -> None:
        """A short word in the status line for a moment (e.g. what Anki did); an error is shown
        whole, below the header, until dismissed."""
        had_note = not self.note.isHidden()
        if error:
            self.note.show_text(text)
        else:  # a new attempt ("Adding to Anki…") replaces an old error
            self.note.setVisible(False)
            self._flash(text)
        if error or had_note:  # the card's height changes (a dragged card is left where it is
            self._present_if_shown()  # otherwise)

    def _flash(self, text: str) -> None:
        """A word in the status line for a moment; the card grows when the line cannot hold it."""
        self.header.flash(text)
        if not self.header.holds_status():
            self._present_if_shown()

    def _present_if_shown(self) -> None:
        if self.isVisible():
            self._present(activate=False)

    def _show_layout(self) -> None:
        """The toggle names the other layout; a vertical card is narrow: its status line above."""
        self.layout_button.setText("Horizontal" if self._vertical else "Vertical")
        self.header.set_stacked(self._vertical)

    def _refresh_view(self) -> None:
        self._show_layout()
        if self.stack.currentWidget() is self.message and self._reading_timer.isActive():
            return
        if self.stack.currentWidget() is self.message and not self.text():
            return
        if self._typing or (not self._vertical and not self._furigana):
            self.stack.setCurrentWidget(self.editor)
            self._size_editor()
            return
        ruby = None
        if self._furigana and self.furigana_provider is not None:
            try:
                ruby = list(self.furigana_provider(self.text()))
            except Exception:  # a dictionary problem must not take the overlay down
                ruby = None
        self.painted_area.show_text(
            self.text(), self._vertical, ruby, self._column_length, self._painted_room()
        )
        self.painted.set_highlight(*self._highlight)
        self.stack.setCurrentWidget(self.painted_area)

    def _painted_room(self) -> QSize:
        """The most the painted text may take: the card's room less its margins and header."""
        layout = self.layout()
        assert layout is not None  # made in _build
        m = layout.contentsMargins()
        frame_h = m.top() + m.bottom() + self.header.sizeHint().height() + layout.spacing()
        room = card_room(self._box, self._screen, self._vertical, self._keep_clear)
        return room - QSize(m.left() + m.right(), frame_h)

    def _size_editor(self) -> None:
        fm = self.editor.fontMetrics()
        lines = self.text().split("\n") or [""]
        widest = max(fm.horizontalAdvance(line) for line in lines) + 24
        width = max(MIN_WIDTH - 30, min(MAX_WIDTH - 30, widest))
        wrapped = sum(
            max(1, -(-fm.horizontalAdvance(line) // max(1, width - 24))) for line in lines
        )
        height = min(12, wrapped) * fm.lineSpacing() + 18
        self.editor.setFixedSize(width, height)

    def _on_text_changed(self) -> None:
        self.text_edited.emit(self.text())

    def _present(self, activate: bool = True) -> None:
        # The card's size is computed here from the visible page (QStackedWidget would size for the
        # largest page, hidden ones included).
        current, layout = self.stack.currentWidget(), self.layout()
        assert current is not None and layout is not None  # the pages and layout of __init__
        margins = layout.contentsMargins()
        header = self.header.sizeHint()
        if current is self.painted_area:
            page = self.painted_area.size_in(self._painted_room())
        else:
            page = current.sizeHint().expandedTo(current.minimumSize())
            page = page.boundedTo(current.maximumSize())
        width = max(MIN_WIDTH, max(header.width(), page.width()) + margins.left() + margins.right())
        if current is self.message:
            inner = width - margins.left() - margins.right()
            page = QSize(
                inner, max(self.message.minimumHeight(), self.message.heightForWidth(inner))
            )
        height = (
            margins.top() + header.height() + layout.spacing() + page.height() + margins.bottom()
        )
        if not self.note.isHidden():
            inner = width - margins.left() - margins.right()
            height += self.note.height_for(inner) + layout.spacing()
        size = QSize(width, height)
        if self._screen.isValid():
            size = size.boundedTo(self._screen.size())
        self.setFixedSize(size)
        layout.activate()  # the pages' geometry now: what a hover or a grab finds is what shows
        if self._box.isValid() and self._screen.isValid():
            self.move(placement(self._box, self.size(), self._screen, self._keep_clear))
        if not self.isVisible():
            self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, not activate)
            self.show()
        self.raise_()
        if activate:
            self.activateWindow()

    # --- events ----------------------------------------------------------------------------------

    @qt_override
    def eventFilter(self, watched, event) -> bool:
        if watched is self.editor and event.type() == QEvent.Type.KeyPress:
            if event.matches(QKeySequence.StandardKey.Copy):
                self.copy_text()
                return True
        elif (
            watched is self.editor
            and event.type() == QEvent.Type.FocusOut
            and self._typing
            and event.reason() != Qt.FocusReason.PopupFocusReason  # its context menu
        ):  # done typing: the painted layout again, with the new text
            QTimer.singleShot(0, self, self._typed)
        return super().eventFilter(watched, event)

    @qt_override
    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
        elif event.matches(QKeySequence.StandardKey.Copy):
            self.copy_text()
        elif self.stack.currentWidget() not in (self.editor, self.message) and self._edits(event):
            self._type(event)
        else:
            super().keyPressEvent(event)

    @staticmethod
    def _edits(event) -> bool:
        """A key that changes text: a character, Backspace or Delete."""
        text = event.text()
        return (text.isprintable() and bool(text)) or event.key() in (
            Qt.Key.Key_Backspace,
            Qt.Key.Key_Delete,
        )

    def _type(self, event) -> None:
        """A key over the painted text (furigana, vertical), which cannot be edited: the plain
        editor takes its place, the key lands at the end of the text, and the painted layout comes
        back when the editor loses the keyboard (`_typed`)."""
        self._typing = True
        self._refresh_view()
        self._present_if_shown()
        self.editor.moveCursor(self.editor.textCursor().MoveOperation.End)
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)
        key = QKeyEvent(QEvent.Type.KeyPress, event.key(), event.modifiers(), event.text())
        QCoreApplication.sendEvent(self.editor, key)

    def _typed(self) -> None:
        if self._typing and not self.editor.hasFocus():
            self._typing = False
            self._refresh_view()
            self._present_if_shown()

    @qt_override
    def hideEvent(self, event) -> None:  # closed, Esc, or hidden for the next capture
        self.note.setVisible(False)  # closing the card dismisses its note
        try:
            self.commit_edit()
        except Exception:  # never out of a Qt override: the correction is logged as lost
            log.exception("keeping the corrected text failed")
        super().hideEvent(event)

    @qt_override
    def closeEvent(self, event) -> None:
        self._reading_timer.stop()
        self.closed.emit()
        super().closeEvent(event)

    @qt_override
    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self._await_paint:  # the text is on screen now: the end of the latency the user feels
            self._await_paint = False
            self.text_painted.emit(time.perf_counter())
