"""The dictionary popup beside a hovered word: one read-only QTextBrowser filled with the entries'
HTML (app/ui/entry_html.py) and the pitch graphs it names. It is a frameless tool window on top that
never takes focus from the text view, stays on the screen beside the hovered line
(`popup_position`), scrolls when the entries are long, closes on Esc (its controller,
app/ui/dictionary_popup_controller.py, watches the view's keys) or when the mouse moves away, and
copies `headword【reading】`; with Anki attached, each entry has a "+ Anki" link (greyed, its
tooltip saying why, while AnkiConnect does not answer; a failed add's error shown in this popup only).
For Hover to read (app/flows/hover.py) it shows, above the entries, the whole text read with the word
marked (`set_read`), so the user sees what the model read there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF, QRect, QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QImage,
    QKeySequence,
    QPainter,
    QPen,
    QTextDocument,
)
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QVBoxLayout, QWidget

from app.dictionary.pitch import morae, pattern
from app.platform.sway import POPUP_TITLE, follow
from app.ui import theme
from app.ui.anki_action import FAILED
from app.ui.entry_html import PITCH_COLOUR, message_html, pitch_url, read_html, result_html
from app.ui.guard import qt_override
from app.ui.rich_text import PlainLabel, SafeTextBrowser

if TYPE_CHECKING:
    from app.dictionary.models import LookupResult

POPUP_WIDTH = 440
MAX_HEIGHT = 480
OFFSET = 18  # px between the pointer and the popup


def pitch_graph(reading: str, position: int, scale: float = 1.0) -> QImage:
    """The graph Yomitan users know: a dot per mora at the high or low line, joined by lines, and
    a hollow dot for the particle after the word."""
    highs = pattern(len(morae(reading)), position)
    step, radius, top, bottom = 13 * scale, 3.2 * scale, 4 * scale, 16 * scale
    width, height = int(step * len(highs) + 2 * radius + 2), int(bottom + radius + 3 * scale)
    image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(1.0)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    colour = QColor(PITCH_COLOUR)
    points = [
        QPointF(radius + 1 + i * step, top if high else bottom) for i, high in enumerate(highs)
    ]
    painter.setPen(QPen(colour, 1.6 * scale))
    for a, b in zip(points, points[1:], strict=False):
        painter.drawLine(a, b)
    for i, point in enumerate(points):
        last = i == len(points) - 1
        painter.setBrush(QColor(theme.BACKGROUND) if last else colour)
        painter.drawEllipse(point, radius, radius)
    painter.end()
    return image


LINE_GAP = 4  # px between the line being read and the popup


def popup_position(
    anchor: QPoint,
    size: QSize,
    screen: QRect,
    offset: int = OFFSET,
    line: QRect | None = None,
    vertical: bool = False,
) -> QPoint:
    """Where the popup goes, always inside `screen`.

    With the hovered `line` (its rect on the screen; a column when `vertical`) the popup sits beside
    it and never over it: below the line, else above it (a column: to its left, the way vertical
    text reads on, else to its right), lined up with the pointer; when no side has room, the side
    with the most. Without one: below and right of the pointer, above it when there is no room below.
    """
    w, h = size.width(), size.height()

    def clamp(x: int, y: int) -> QPoint:
        x = max(screen.left(), min(x, screen.right() + 1 - w))
        y = max(screen.top(), min(y, screen.bottom() + 1 - h))
        return QPoint(x, y)

    if line is not None and line.isValid():
        x, y = anchor.x() + offset // 2, anchor.y() + offset // 2
        sides = [  # (room on that side, the popup's extent across it, its place)
            (screen.bottom() - line.bottom() - LINE_GAP, h, clamp(x, line.bottom() + 1 + LINE_GAP)),
            (line.top() - LINE_GAP - screen.top(), h, clamp(x, line.top() - LINE_GAP - h)),
            (line.left() - LINE_GAP - screen.left(), w, clamp(line.left() - LINE_GAP - w, y)),
            (screen.right() - line.right() - LINE_GAP, w, clamp(line.right() + 1 + LINE_GAP, y)),
        ]
        if vertical:
            sides = sides[2:] + sides[:2]
        for room, need, place in sides:
            if room >= need:
                return place
        return max(sides, key=lambda side: side[0] - side[1])[2]
    x = anchor.x() + offset // 2
    y = anchor.y() + offset
    if y + h > screen.bottom() + 1:
        above = anchor.y() - offset - h
        y = above if above >= screen.top() else screen.bottom() + 1 - h
    return clamp(x, y)


class DictionaryPopup(QWidget):
    """Shows a `LookupResult`. `show_result(result, global_point, screen_geometry)`."""

    copied = Signal(str)  # the text put on the clipboard
    pointer_entered = Signal()
    pointer_left = Signal()

    def __init__(self, parent=None):
        super().__init__(
            parent,
            Qt.WindowType.Tool
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.WindowDoesNotAcceptFocus,
        )
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self.setWindowTitle(POPUP_TITLE)  # how Sway's criteria find it (app/platform/sway.py)
        theme.apply(self, "HayaiCard")
        self.setStyleSheet(
            theme.STYLE
            + f"""
            QWidget#HayaiCard {{ border: 1px solid {theme.ACCENT_DARK}; }}
            QTextBrowser#DictionaryText {{ background: {theme.BACKGROUND}; border: none; padding: 0; }}
        """
        )
        self.cjk_family = theme.cjk_font().family()
        self.result: LookupResult | None = None
        self.anki = None  # app/ui/anki_action.AnkiActions once attach_anki() is called
        self.sentence = ""  # the line the shown word was read in (for the Anki note)
        self.mining_context = None  # () -> (crop PNG bytes or None, source): for the Anki note
        self._errors_shown: set[str] = set()  # the words whose failed add this popup showed
        self.read: tuple[str, int, int] | None = None  # Hover to read: (text, word start, length)

        self.title = PlainLabel("")  # shows the OCR text it matched
        self.title.setProperty("role", "muted")
        self.title.setFont(theme.ui_font(9))
        self.copy_button = QToolButton()
        self.copy_button.setObjectName("OverlayButton")
        self.copy_button.setText("Copy word")
        self.copy_button.setToolTip("Copy the first entry as headword【reading】")
        self.copy_button.clicked.connect(lambda: self.copy_entry(0))
        self.close_button = QToolButton()
        self.close_button.setObjectName("OverlayClose")
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        self.close_button.clicked.connect(self.hide)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.title, 1)
        header.addWidget(self.copy_button)
        header.addWidget(self.close_button)

        self.browser = SafeTextBrowser()  # only the pitch graphs added below; never a file
        self.browser.setObjectName("DictionaryText")
        self.browser.setFont(theme.ui_font(10.5))
        self.browser.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.browser.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.browser.anchorClicked.connect(self._on_link)
        self.browser.document().setDocumentMargin(2)
        self.browser.document().setDefaultStyleSheet(f"a {{ color: {theme.ACCENT}; }}")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 10)
        layout.setSpacing(4)
        layout.addLayout(header)
        layout.addWidget(self.browser, 1)

    # --- content ---------------------------------------------------------------------------------

    def set_result(self, result: LookupResult) -> None:
        """Fill the popup (no showing or moving)."""
        self.result = result
        if self.anki is not None:  # errors are said once, where the add was asked
            self.anki.forget(self._errors_shown)
        self._errors_shown = set()
        if result.entries:
            first = result.entries[0]
            self.title.setText(
                f"{len(result.entries)} entr{'y' if len(result.entries) == 1 else 'ies'} · "
                f"{first.match}"
            )
            self.copy_button.setVisible(True)
            self._render()
            self._check_anki()
        else:
            self.title.setText("Dictionary")
            self.copy_button.setVisible(False)
            self.browser.setHtml(self._read_html() + message_html(result.message or "No entries."))
        self._fit()

    def set_read(self, text: str = "", start: int = 0, length: int = 0) -> None:
        """The text the shown word was read in, the word at `start` marked ("": none); shown
        above the entries from the next `set_result` on."""
        self.read = (text, start, length) if text else None

    def _read_html(self) -> str:
        return read_html(*self.read, self.cjk_family) if self.read else ""

    def _render(self) -> None:
        result = self.result
        assert result is not None  # set_result came first
        self._add_pitch_graphs(result)
        states, down = None, ""
        if self.anki is not None:
            keys = [self._anki_key(e) for e in result.entries]
            states, down = [self.anki.state(k) for k in keys], self.anki.unreachable
            self._errors_shown.update(k for k, s in zip(keys, states) if s.state == FAILED)
        self.browser.setHtml(self._read_html() + result_html(result, self.cjk_family, states, down))

    # --- Anki ------------------------------------------------------------------------------------

    def attach_anki(self, actions) -> None:
        """Show a "+ Anki" link on every entry, run through `actions` (AnkiActions)."""
        self.anki = actions
        actions.changed.connect(self._on_anki_changed)
        actions.reach_changed.connect(self._on_anki_reach)

    @staticmethod
    def _anki_key(entry) -> str:
        from app.ui.anki_action import word_key

        return word_key(entry.headword, entry.reading)

    def _mined(self, entry, with_context: bool = True):
        from app.anki.note import Mined

        extra = {}
        if with_context and self.mining_context is not None:
            extra["image_png"], extra["source"] = self.mining_context()
        return Mined.from_entry(entry, self.sentence, **extra)

    def mine_entry(self, index: int) -> None:
        if self.anki is None or not self.result or not 0 <= index < len(self.result.entries):
            return
        entry = self.result.entries[index]
        self.anki.add(self._anki_key(entry), self._mined(entry))

    def _check_anki(self) -> None:
        """Which shown words are in the deck (asked once per word; while AnkiConnect does not
        answer, whether it answers now)."""
        if self.anki is not None and self.result:
            for entry in self.result.entries:
                self.anki.check(self._anki_key(entry), self._mined(entry, with_context=False))

    def _on_anki_changed(self, key: str) -> None:
        if not self.result or not self.result.entries:
            return
        if any(self._anki_key(e) == key for e in self.result.entries):
            self._rerender()

    def _on_anki_reach(self) -> None:
        """AnkiConnect answers again (the links come back, the words are checked) or stopped."""
        if self.result and self.result.entries:
            self._check_anki()
            self._rerender()

    def _rerender(self) -> None:
        scroll = self.browser.verticalScrollBar().value()
        self._render()
        self._fit()
        self.browser.verticalScrollBar().setValue(scroll)

    def _add_pitch_graphs(self, result) -> None:
        doc = self.browser.document()
        scale = max(1.0, self.devicePixelRatioF())
        for entry in result.entries:
            for pitch in entry.pitch:
                for position in pitch["positions"]:
                    image = pitch_graph(pitch["reading"], position, scale)
                    image.setDevicePixelRatio(scale)
                    doc.addResource(
                        QTextDocument.ResourceType.ImageResource,
                        QUrl(pitch_url(pitch["reading"], position)),
                        image,
                    )

    def set_message(self, text: str) -> None:
        self.result = None
        self.title.setText("Dictionary")
        self.copy_button.setVisible(False)
        self.browser.setHtml(message_html(text))
        self._fit()

    def _fit(self) -> None:
        """Width fixed; height follows the text up to MAX_HEIGHT, then the browser scrolls."""
        layout = self.layout()
        assert layout is not None  # set in __init__
        margins = layout.contentsMargins()
        text_width = POPUP_WIDTH - margins.left() - margins.right()
        doc = self.browser.document()
        doc.setTextWidth(text_width - 14)  # leave room for the scroll bar
        header_h = max(self.title.sizeHint().height(), self.close_button.sizeHint().height())
        chrome = margins.top() + margins.bottom() + header_h + layout.spacing() + 4
        height = min(MAX_HEIGHT, int(doc.size().height()) + chrome)
        self.resize(POPUP_WIDTH, height)
        self.browser.verticalScrollBar().setValue(0)

    def show_at(
        self, global_point: QPoint, screen_geometry: QRect, line=None, vertical=False
    ) -> None:
        """Beside `line` (the hovered line on the screen) when given: see `popup_position`."""
        self.move(
            popup_position(global_point, self.size(), screen_geometry, OFFSET, line, vertical)
        )
        self.show()
        self.raise_()
        follow(self)  # on Sway, moved where Qt put it (Wayland lets no app place its windows)

    def show_result(
        self, result, global_point: QPoint, screen_geometry: QRect, line=None, vertical=False
    ) -> None:
        self.set_result(result)
        self.show_at(global_point, screen_geometry, line, vertical)

    # --- actions ---------------------------------------------------------------------------------

    def copy_entry(self, index: int) -> str:
        if not self.result or not 0 <= index < len(self.result.entries):
            return ""
        text = self.result.entries[index].copy_text
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(text)
        self.title.setText(f"Copied {text}")
        return text

    def _on_link(self, url: QUrl) -> None:
        target = url.toString()
        if target.startswith("copy:") and target[5:].isdigit():
            self.copy_entry(int(target[5:]))
        elif target.startswith("anki:") and target[5:].isdigit():
            self.mine_entry(int(target[5:]))

    @qt_override
    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
            return
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_entry(0)
            return
        super().keyPressEvent(event)

    @qt_override
    def enterEvent(self, event) -> None:
        self.pointer_entered.emit()
        super().enterEvent(event)

    @qt_override
    def leaveEvent(self, event) -> None:
        self.pointer_left.emit()
        super().leaveEvent(event)
