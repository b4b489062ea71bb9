"""The result overlay: a dark card beside the boxed region with the text, a status line and buttons.

Frameless and on top, placed next to the box (never over it) and kept on the box's screen. The text
is editable in the horizontal layout (fix an OCR slip, then copy); the vertical layout and furigana
are painted by `PaintedTextView`. Ctrl+C copies (the selection, or all text), Esc closes.

Hook for the dictionary: `word_hovered(text, index, global_pos)` when the mouse rests on a
character (or clicks it, with the "click" trigger), `word_left()` when it leaves the text, and
`highlight(start, length)` to mark the looked-up word.
"""

from __future__ import annotations

import html
import logging
import time

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QImage,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPen,
    QRegion,
    QTextDocumentFragment,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.ui import theme
from app.ui.details import split_message
from app.ui.guard import qt_override
from app.ui.note import ErrorNote
from app.ui.rich_text import PlainLabel
from app.ui.text_view import EditableTextView, PaintedTextView, WordPointer, global_line

log = logging.getLogger(__name__)

GAP = 10  # px between the box and the card
RADIUS = 12
MAX_WIDTH = 520
MIN_WIDTH = 300


def placement(box: QRect, size: QSize, screen: QRect, gap: int = GAP) -> QPoint:
    """Top-left for a card of `size` beside `box`, inside `screen`, not covering the box when possible.

    Tries right, left, below, above (the reading flow of horizontal text, then the others); when
    none fits, the side with the most room is used and the card is clamped to the screen.
    """
    w, h = size.width(), size.height()

    def clamp(x: int, y: int) -> QPoint:
        x = max(screen.left(), min(x, screen.right() + 1 - w))
        y = max(screen.top(), min(y, screen.bottom() + 1 - h))
        return QPoint(x, y)

    candidates = [
        (
            screen.right() + 1 - (box.right() + 1 + gap),
            h <= screen.height(),
            clamp(box.right() + 1 + gap, box.top()),
        ),
        (
            box.left() - gap - screen.left(),
            h <= screen.height(),
            clamp(box.left() - gap - w, box.top()),
        ),
        (
            screen.bottom() + 1 - (box.bottom() + 1 + gap),
            w <= screen.width(),
            clamp(box.left(), box.bottom() + 1 + gap),
        ),
        (
            box.top() - gap - screen.top(),
            w <= screen.width(),
            clamp(box.left(), box.top() - gap - h),
        ),
    ]
    for (room, fits_across, point), need in zip(candidates, (w, w, h, h)):
        if room >= need and fits_across:
            return point
    best = max(range(4), key=lambda i: candidates[i][0] - (w, w, h, h)[i])
    return candidates[best][2]


class Overlay(QWidget):
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
        super().__init__(
            parent,
            Qt.WindowType.Tool
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint,
        )
        theme.apply(self, "HayaiCard")
        self.setWindowTitle("Hayai")
        # callable(text) -> [(surface, reading or None)], set by the app
        self.furigana_provider = None
        self._vertical = False
        self._furigana = False
        self._box = QRect()
        self._screen = QRect()
        self._highlight = (0, 0)
        self._drag_from: QPoint | None = None
        self._await_paint = False
        self._dots = 0
        self._reading_timer = QTimer(self)
        self._reading_timer.setInterval(350)
        self._reading_timer.timeout.connect(self._tick_reading)
        # a child: it dies with the overlay, unlike a singleShot lambda
        self._flash_timer = QTimer(self)
        self._flash_timer.setSingleShot(True)
        self._flash_timer.setInterval(1200)
        self._flash_timer.timeout.connect(self._end_flash)
        self._status_before_flash = ""
        self._committed = ""  # the text as shown by show_result or last committed
        self._build(trigger)

    # --- widgets ---------------------------------------------------------------------------------

    def _build(self, trigger) -> None:
        self.status = PlainLabel("")  # engine and file names, server messages
        self.status.setProperty("role", "muted")
        self.status.setFont(theme.ui_font(9))
        self.copy_button = self._button("Copy", "Copy the text (Ctrl+C)")
        self.layout_button = self._button(
            "Vertical", "Switch between horizontal and vertical layout"
        )
        self.furigana_button = self._button("ふりがな", "Show readings above the kanji")
        self.furigana_button.setCheckable(True)
        self.rescan_button = self._button("Re-scan", "Read the same region again")
        self.mine_button = self._button(
            "Mine", "Make an Anki card of this line (of the selected word, when one is selected)"
        )
        self.mine_button.setVisible(False)  # shown when Anki mining is on (set_mining)
        self.close_button = QToolButton()
        self.close_button.setObjectName("OverlayClose")
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        self.close_button.setCursor(Qt.CursorShape.PointingHandCursor)

        self._header = QWidget()
        header = QHBoxLayout(self._header)
        header.setContentsMargins(0, 0, 0, 0)
        header.setSpacing(6)
        header.addWidget(self.status, 1)
        for button in (
            self.copy_button,
            self.layout_button,
            self.furigana_button,
            self.rescan_button,
            self.mine_button,
        ):
            header.addWidget(button)
        header.addWidget(self.close_button)

        self.editor = EditableTextView()
        self.editor.setObjectName("OverlayText")
        self.painted = PaintedTextView()
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setMinimumHeight(48)
        self.message.linkActivated.connect(self._toggle_error_details)
        self._error = ("", "")  # (sentence, details) of the error shown
        self._error_open = False
        self.note = ErrorNote()  # what went wrong with Mine, whole, until dismissed
        self.note.dismissed.connect(self._present_if_shown)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.editor)
        self.stack.addWidget(self.painted)
        self.stack.addWidget(self.message)
        self.stack.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

        layout = QVBoxLayout(self)
        # _present() sizes the card
        layout.setSizeConstraint(QVBoxLayout.SizeConstraint.SetNoConstraint)
        layout.setContentsMargins(14, 10, 12, 14)
        layout.setSpacing(8)
        layout.addWidget(self._header)
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
        self.painted.setToolTip("Double-click to edit the text")
        self.furigana_button.setVisible(False)  # shown once a provider is set

    def _button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName("OverlayButton")
        button.setText(text)
        button.setToolTip(tip)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        return button

    # --- what the application calls --------------------------------------------------------------

    def configure(
        self,
        font_family: str,
        font_size: int,
        vertical: bool,
        furigana_provider=None,
    ) -> None:
        font = theme.cjk_font(font_family, font_size)
        self.editor.setFont(font)
        self.painted.set_font(font)
        self.furigana_provider = furigana_provider
        self.furigana_button.setVisible(furigana_provider is not None)
        self._vertical = vertical
        self._refresh_view()

    def set_anchor(self, box: QRect, screen: QRect) -> None:
        """The boxed region and its screen's available area, both in global logical coordinates."""
        self._box, self._screen = QRect(box), QRect(screen)
        # A vertical bubble keeps roughly its shape: as many characters per column as fit its height.
        self.painted.set_column_length(
            max(6, min(20, round(box.height() / self.painted.em() * 0.9)))
        )

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
        self._set_message("reading", error=False)
        self._dots = 0
        self._reading_timer.start()
        self._tick_reading()
        self._set_buttons_enabled(False)
        self._present()

    def show_result(self, text: str, status: str, activate: bool = True) -> None:
        """`activate=False` leaves the keyboard where it is (a watched game keeps it)."""
        self.commit_edit()
        self.text_replaced.emit()
        self._reading_timer.stop()
        self.status.setProperty("role", "muted")
        self.status.setText(status)
        self._repolish(self.status)
        self.editor.blockSignals(True)
        self.editor.setPlainText(text)
        self.editor.blockSignals(False)
        self._committed = text
        self._highlight = (0, 0)
        self._set_buttons_enabled(True)
        self._refresh_view()
        self._await_paint = True
        self._present(activate)
        self.update()

    def show_error(self, message: str) -> None:
        """One sentence, left-aligned; the rest of a long message behind a "Details" link."""
        self.commit_edit()
        self.text_replaced.emit()
        self._reading_timer.stop()
        self._error, self._error_open = split_message(message), False
        self._set_message("", error=True)
        self._show_error_text()
        self.status.setText("error")
        self._set_buttons_enabled(False)
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
        if self.stack.currentWidget() is self.painted:
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
            self._flash_status("Copied ✓")
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

    def _set_buttons_enabled(self, enabled: bool) -> None:
        for button in (
            self.copy_button,
            self.layout_button,
            self.furigana_button,
            self.rescan_button,
        ):
            button.setEnabled(enabled)

    def _show_error_text(self) -> None:
        sentence, details = (html.escape(part) for part in self._error)
        if details:
            link = "Hide details" if self._error_open else "Details"
            sentence += f' <a href="details" style="color: {theme.ACCENT};">{link}</a>'
            if self._error_open:
                body = details.replace("\n", "<br>")
                sentence += f'<p style="color: {theme.MUTED};">{body}</p>'
        self.message.setText(sentence)

    def _toggle_error_details(self, _link: str = "") -> None:
        self._error_open = not self._error_open
        self._show_error_text()
        self._present()

    def error_text(self) -> str:
        """The error as shown (sentence, and the details when open), without markup."""
        return QTextDocumentFragment.fromHtml(self.message.text()).toPlainText()

    def _set_message(self, text: str, error: bool) -> None:
        self.message.setProperty("role", "error" if error else "muted")
        self.message.setTextFormat(Qt.TextFormat.RichText if error else Qt.TextFormat.PlainText)
        self.message.setAlignment(
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
            if error
            else Qt.AlignmentFlag.AlignCenter
        )
        self.message.setText(text)
        self.message.setFont(theme.ui_font(11))
        self._repolish(self.message)
        self.stack.setCurrentWidget(self.message)

    def _tick_reading(self) -> None:
        self._dots = (self._dots + 1) % 4
        self.message.setText("reading" + "." * self._dots + " " * (3 - self._dots))
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
            self._flash_status(text)
        if error or had_note:  # the card's height changes (a dragged card is left where it is
            self._present_if_shown()  # otherwise)

    def _present_if_shown(self) -> None:
        if self.isVisible():
            self._present(activate=False)

    def _flash_status(self, text: str) -> None:
        if not self._flash_timer.isActive():
            self._status_before_flash = self.status.text()
        self.status.setText(text)
        self._flash_timer.start()

    def _end_flash(self) -> None:
        self.status.setText(self._status_before_flash)

    @staticmethod
    def _repolish(widget) -> None:
        widget.style().unpolish(widget)
        widget.style().polish(widget)

    def _refresh_view(self) -> None:
        self.layout_button.setText("Horizontal" if self._vertical else "Vertical")
        if self.stack.currentWidget() is self.message and self._reading_timer.isActive():
            return
        if self.stack.currentWidget() is self.message and not self.text():
            return
        if not self._vertical and not self._furigana:
            self.stack.setCurrentWidget(self.editor)
            self._size_editor()
            return
        ruby = None
        if self._furigana and self.furigana_provider is not None:
            try:
                ruby = list(self.furigana_provider(self.text()))
            except Exception:  # a dictionary problem must not take the overlay down
                ruby = None
        self.painted.set_max_width(MAX_WIDTH - 30)
        self.painted.set_content(self.text(), self._vertical, ruby)
        self.painted.set_highlight(*self._highlight)
        self.stack.setCurrentWidget(self.painted)

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
        header = self._header.sizeHint()
        page = current.sizeHint().expandedTo(current.minimumSize()).boundedTo(current.maximumSize())
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
        if self._box.isValid() and self._screen.isValid():
            self.move(placement(self._box, self.size(), self._screen))
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
        return super().eventFilter(watched, event)

    @qt_override
    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
        elif event.matches(QKeySequence.StandardKey.Copy):
            self.copy_text()
        else:
            super().keyPressEvent(event)

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
    def mousePressEvent(self, event) -> None:  # drag the card by its header
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag_from = event.globalPosition().toPoint() - self.frameGeometry().topLeft()
        super().mousePressEvent(event)

    @qt_override
    def mouseMoveEvent(self, event) -> None:
        if self._drag_from is not None and event.buttons() & Qt.MouseButton.LeftButton:
            self.move(event.globalPosition().toPoint() - self._drag_from)
        super().mouseMoveEvent(event)

    @qt_override
    def mouseReleaseEvent(self, event) -> None:
        self._drag_from = None
        super().mouseReleaseEvent(event)

    @qt_override
    def resizeEvent(self, event) -> None:
        # Rounded corners without a translucent window (those turn black without a compositor).
        path = QPainterPath()
        path.addRoundedRect(self.rect(), RADIUS, RADIUS)
        self.setMask(QRegion(path.toFillPolygon().toPolygon()))
        super().resizeEvent(event)

    @qt_override
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        path = QPainterPath()
        path.addRoundedRect(self.rect().adjusted(0, 0, -1, -1), RADIUS, RADIUS)
        painter.fillPath(path, QColor(theme.BACKGROUND))
        painter.setPen(QPen(QColor(theme.BORDER), 1))
        painter.drawPath(path)
        painter.setPen(QPen(QColor(theme.ACCENT), 2))
        # a thin accent on top
        painter.drawLine(QPoint(RADIUS, 1), QPoint(self.width() - RADIUS, 1))
        painter.end()
        if self._await_paint:  # the text is on screen now: the end of the latency the user feels
            self._await_paint = False
            self.text_painted.emit(time.perf_counter())
