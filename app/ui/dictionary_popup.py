"""The dictionary popup beside a hovered word, and the controller that connects it to the overlay.

The popup is one read-only QTextBrowser filled with HTML: building one HTML string and letting a
single QTextDocument lay it out is far cheaper than a tree of QLabels per entry (a hover must show
within a frame). It is a frameless tool window on top that never takes focus from the overlay,
stays on the screen, scrolls when the entries are long, closes on Esc (the controller watches the
overlay's keys) or when the mouse moves away, and copies `headword【reading】`.

Wiring (application.py):
    controller = DictionaryPopupController(Dictionary(han_language=...))
    overlay.word_hovered.connect(controller.on_hover)
    overlay.word_left.connect(controller.on_left)
    controller.highlight.connect(overlay.highlight)
    controller.watch(overlay)                     # Esc closes the popup first, then the overlay
    controller.prepare_in_background()            # index (first run ~20 s) + MeCab, off the GUI thread
    overlay.furigana_provider = controller.dictionary.furigana
"""

from __future__ import annotations

import threading

from PySide6.QtCore import (
    QEvent,
    QObject,
    QPoint,
    QPointF,
    QRect,
    QSize,
    Qt,
    QTimer,
    QUrl,
    Signal,
)
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

from app.ui import theme
from app.ui.guard import qt_override
from app.ui.rich_text import PlainLabel, SafeTextBrowser, escape
from app.ui.screens import screen_area
from model.progress import fraction

POPUP_WIDTH = 440
MAX_HEIGHT = 480
OFFSET = 18  # px between the pointer and the popup
HIDE_DELAY_MS = 350  # time to move the mouse from the word into the popup

POS_NAMES = {  # the few tags worth spelling out; the rest stay JMdict codes
    "n": "noun",
    "v1": "ichidan verb",
    "vt": "transitive",
    "vi": "intransitive",
    "adj-i": "i-adjective",
    "adj-na": "na-adjective",
    "adv": "adverb",
    "exp": "expression",
    "vs": "suru verb",
    "vs-i": "suru verb",
    "vs-s": "suru verb",
    "vk": "kuru verb",
    "adj-no": "no-adjective",
    "prt": "particle",
    "int": "interjection",
    "v5k-s": "godan verb (iku)",
    "aux-v": "auxiliary verb",
    "ctr": "counter",
    "suf": "suffix",
    "pref": "prefix",
    "pn": "pronoun",
    "conj": "conjunction",
    "adj-ix": "i-adjective (ii)",
    "n-suf": "noun suffix",
}


def pos_label(code: str) -> str:
    if code in POS_NAMES:
        return POS_NAMES[code]
    if code.startswith("v5") and len(code) >= 3:
        return f"godan verb ({code[2:]})"
    return code


_e = escape  # outside text in the popup's HTML: quotes too (a reading sits in an <img src>)


PITCH_COLOUR = "#f472b6"  # Yomitan-style pitch lines
FREQUENCY_COLOUR = "#365314"


def pitch_url(reading: str, position: int) -> str:
    """The document resource name of a pitch graph (the popup draws it: `pitch_graph`)."""
    return f"pitch:{position}:{reading}"


def pitch_html(reading: str, position: int, cjk_family: str) -> str:
    """Yomitan's two notations side by side: a small pitch graph (dots high or low, one per mora
    and a hollow one for the particle) and the reading with a line over its high morae and ꜜ at
    the downstep, then the position: たべꜜる [2]; heiban keeps the line to the end, [0]."""
    from app.dictionary.pitch import morae, pattern

    parts = morae(reading)
    highs = pattern(len(parts), position)
    out = []
    for i, mora in enumerate(parts):
        style = "text-decoration: overline;" if highs[i] else ""
        out.append(f'<span style="{style}">{_e(mora)}</span>' if style else _e(mora))
        if position and i + 1 == position:
            out.append(f'<span style="color:{PITCH_COLOUR}; font-weight:700;">ꜜ</span>')
    return (
        f'<img src="{_e(pitch_url(reading, position))}" style="vertical-align:middle;">&nbsp;'
        f"<span style=\"font-family:'{cjk_family}'; font-size:12pt; color:{theme.TEXT};\">"
        f"{''.join(out)}</span>"
        f'<span style="color:{PITCH_COLOUR}; font-size:9pt;"> [{position}]</span>'
    )


def pitch_graph(reading: str, position: int, scale: float = 1.0) -> QImage:
    """The graph Yomitan users know: a dot per mora at the high or low line, joined by lines, and
    a hollow dot for the particle after the word."""
    from app.dictionary.pitch import morae, pattern

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


def frequencies_html(frequencies: list[dict]) -> str:
    """One badge per frequency record: the dictionary's name and its value."""
    return "&nbsp; ".join(
        f'<span style="background-color:{FREQUENCY_COLOUR}; color:{theme.TEXT}; font-size:8pt;">'
        f"&nbsp;{_e(f['dictionary'])}&nbsp;</span>"
        f'<span style="background-color:{theme.BORDER}; color:{theme.TEXT}; font-size:8pt;">'
        f"&nbsp;{_e(str(f['display']))}&nbsp;</span>"
        for f in frequencies
    )


def imported_kanji_html(kanji) -> str:
    """What imported kanji dictionaries add to a kanji: their meanings (when KANJIDIC2's differ)
    and kanji frequency badges."""
    out = []
    for d in kanji.dictionaries:
        if d["meanings"] and d["meanings"] != kanji.meanings:
            out.append(
                f'<br><span style="color:{theme.MUTED}; font-size:8pt;">{_e(d["dictionary"])}</span> '
                f'<span style="color:{theme.TEXT};">{_e(", ".join(d["meanings"][:6]))}</span>'
            )
    if kanji.frequencies:
        out.append(f"<br>{frequencies_html(kanji.frequencies)}")
    return "".join(out)


def entry_html(index: int, entry, shown_kanji: set[str], cjk_family: str, anki_state=None) -> str:
    """One entry as Qt rich text (the subset QTextDocument supports: tables, spans, lists): the
    popup's unit per entry (head with its dictionary, copy and + Anki links, frequencies, pitch,
    chain, senses, kanji); `copy:{index}` and `anki:{index}` links act on `result.entries[index]`;
    `anki_state` (app/ui/anki_action.WordState) sets the Anki link and shows its error."""
    kanji = [k for k in (entry.kanji or []) if k.char not in shown_kanji]
    shown_kanji.update(k.char for k in kanji)  # each kanji once in the popup
    return "".join(
        [
            _title_html(index, entry, cjk_family, anki_state),
            _anki_error_html(anki_state),
            _line(frequencies_html(entry.frequencies), "3px") if entry.frequencies else "",
            "".join(_pitch_line(pitch, cjk_family) for pitch in entry.pitch),
            "".join(_ipa_line(record) for record in entry.ipa),
            _chain_html(entry),
            _other_readings_html(entry),
            _senses_html(entry.senses),
            _kanji_html(kanji, cjk_family) if kanji else "",
        ]
    )


def _line(html: str, top: str = "2px", style: str = "") -> str:
    """One paragraph under the entry's head."""
    return f'<p style="margin:{top} 0 0 0;{style}">{html}</p>'


def _muted_small(text: str) -> str:
    return f'<span style="color:{theme.MUTED}; font-size:8pt;">{_e(text)}</span>'


def _headword_html(entry, cjk_family: str) -> str:
    """The headword, its reading when it differs, and CC-CEDICT's other script."""
    head = (
        f"<span style=\"font-family:'{cjk_family}'; font-size:21pt; color:{theme.TEXT};\">"
        f"{_e(entry.headword)}</span>"
    )
    if entry.reading and entry.reading != entry.headword:
        head += (
            f"&nbsp;&nbsp;<span style=\"font-family:'{cjk_family}'; font-size:13pt; "
            f'color:{theme.ACCENT};">{_e(entry.reading)}</span>'
        )
    if entry.source == "cedict" and entry.traditional and entry.traditional != entry.headword:
        other = entry.traditional if entry.headword == entry.simplified else entry.simplified
        head += f'&nbsp;&nbsp;<span style="font-size:13pt; color:{theme.MUTED};">{_e(other)}</span>'
    return head


SOURCE_NAMES = {"jmdict": "", "jmnedict": "name", "cedict": "CC-CEDICT"}  # beside the head


def _title_html(index: int, entry, cjk_family: str, anki_state) -> str:
    """The head on the left; the entry's dictionary and its copy and + Anki links on the right."""
    source = entry.dictionary or SOURCE_NAMES.get(entry.source, entry.source)
    return (
        '<table width="100%" cellspacing="0" cellpadding="0"><tr>'
        f'<td valign="bottom">{_headword_html(entry, cjk_family)}</td>'
        f'<td align="right" valign="middle">{_muted_small(source)}'
        f'&nbsp;&nbsp;<a href="copy:{index}" style="color:{theme.ACCENT}; text-decoration:none;">copy</a>'
        f"{anki_link_html(index, anki_state)}</td>"
        "</tr></table>"
    )


def _anki_error_html(anki_state) -> str:
    if anki_state is None or anki_state.state != "error":
        return ""
    return _line(_e(anki_state.message), style=f" color:{theme.DANGER};")


def _pitch_line(pitch: dict, cjk_family: str) -> str:
    """One dictionary's accents of one reading."""
    accents = "&nbsp;&nbsp;".join(
        pitch_html(pitch["reading"], n, cjk_family) for n in pitch["positions"]
    )
    return _line(f"{accents}&nbsp;&nbsp;{_muted_small(pitch['dictionary'])}", "3px")


def _ipa_line(record: dict) -> str:
    return _line(
        f"/{_e(' · '.join(record['transcriptions']))}/&nbsp;&nbsp;{_muted_small(record['dictionary'])}",
        style=f" color:{theme.TEXT};",
    )


def _chain_html(entry) -> str:
    """The deinflection: 食べた ← 食べる: past."""
    if not entry.deinflection:
        return ""
    chain = " · ".join(_e(s) for s in entry.deinflection)
    return _line(f"{_e(entry.match)} ← {_e(entry.headword)}: {chain}", style=" color:#fbbf24;")


def _other_readings_html(entry) -> str:
    others = [r for r in entry.readings if r != entry.reading]
    if not others:
        return ""
    return _line(f"also read {_e('、'.join(others))}", style=f" color:{theme.MUTED};")


def _senses_html(senses) -> str:
    """The numbered senses: POS tags (only where they change), glosses or rich text, notes."""
    items = []
    last_pos: list[str] = []
    for sense in senses:
        tags = ""
        if sense.pos and sense.pos != last_pos:  # repeat POS tags only when they change
            tags = " ".join(_badge(pos_label(p)) for p in sense.pos) + " "
            last_pos = sense.pos
        notes = (
            f' <span style="color:{theme.MUTED};">({_e(", ".join(sense.notes))})</span>'
            if sense.notes
            else ""
        )
        text = sense.html if sense.html else _e("; ".join(sense.glosses))
        items.append(f'<li style="margin-bottom:2px;">{tags}{text}{notes}</li>')
    if not items:
        return ""
    return (
        '<ol style="margin-top:4px; margin-bottom:0px; margin-left:-14px;">'
        + "".join(items)
        + "</ol>"
    )


def _badge(text: str) -> str:
    return (
        f'<span style="background-color:{theme.BORDER}; color:{theme.TEXT};">'
        f"&nbsp;{_e(text)}&nbsp;</span>"
    )


def _kanji_html(kanji, cjk_family: str) -> str:
    """The kanji panel: per kanji its meanings, on and kun readings, facts and imported additions."""
    rows = "".join(_kanji_row(k, cjk_family) for k in kanji)
    return (
        f'<table cellspacing="0" cellpadding="2" style="margin-top:6px; '
        f'background-color:{theme.SURFACE};">{rows}</table>'
    )


def _kanji_row(k, cjk_family: str) -> str:
    facts = [
        f"{k.strokes} strokes" if k.strokes else "",
        f"grade {k.grade}" if k.grade else "",
        f"JLPT {k.jlpt} (old scale)" if k.jlpt else "",
    ]
    readings = [
        f'<span style="color:{theme.MUTED};">{label}</span> {_e("、".join(values))}'
        for label, values in (("on", k.on), ("kun", k.kun))
        if values
    ]
    return (
        f'<tr><td valign="top" style="padding-right:10px;"><span style="font-family:\'{cjk_family}\'; '
        f'font-size:24pt; color:{theme.TEXT};">{_e(k.char)}</span></td>'
        f'<td valign="top"><span style="color:{theme.TEXT};">{_e(", ".join(k.meanings[:6]))}</span><br>'
        f"<span style=\"font-family:'{cjk_family}';\">{'&nbsp;&nbsp;'.join(readings)}</span><br>"
        f'<span style="color:{theme.MUTED}; font-size:8pt;">{_e(" · ".join(f for f in facts if f))}'
        f"</span>{imported_kanji_html(k)}</td></tr>"
    )


# The "+ Anki" link by state (app/ui/anki_action.py): its words and whether it looks active.
ANKI_LINKS = {
    "new": ("+ Anki", True),
    "checking": ("+ Anki", False),
    "adding": ("adding…", False),
    "added": ("✓ in deck", True),
    "in_deck": ("in deck", True),
    "error": ("+ Anki", True),
}


def anki_link_html(index: int, state) -> str:
    if state is None:
        return ""
    label, active = ANKI_LINKS.get(state.state, ANKI_LINKS["new"])
    colour = theme.ACCENT if active else theme.MUTED
    if state.state in ("added", "in_deck"):
        colour = theme.SUCCESS
    return (
        f'&nbsp;&nbsp;<a href="anki:{index}" style="color:{colour}; text-decoration:none;">'
        f"{_e(label)}</a>"
    )


def result_html(result, cjk_family: str, anki_states=None) -> str:
    shown_kanji: set[str] = set()
    rule = f'<hr style="background-color:{theme.BORDER}; height:1px; border:none;">'
    states = anki_states or [None] * len(result.entries)
    return rule.join(
        entry_html(i, e, shown_kanji, cjk_family, states[i]) for i, e in enumerate(result.entries)
    )


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
        theme.apply(self, "HayaiCard")
        self.setStyleSheet(
            theme.STYLE
            + f"""
            QWidget#HayaiCard {{ border: 1px solid {theme.ACCENT_DARK}; }}
            QTextBrowser#DictionaryText {{ background: {theme.BACKGROUND}; border: none; padding: 0; }}
        """
        )
        self.cjk_family = theme.cjk_font().family()
        self.result = None
        self.anki = None  # app/ui/anki_action.AnkiActions once attach_anki() is called
        self.sentence = ""  # the line the shown word was read in (for the Anki note)
        self.mining_context = None  # () -> (crop PNG bytes or None, source): for the Anki note

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

    def set_result(self, result) -> None:
        """Fill the popup (no showing or moving)."""
        self.result = result
        if result.entries:
            first = result.entries[0]
            self.title.setText(
                f"{len(result.entries)} entr{'y' if len(result.entries) == 1 else 'ies'} · "
                f"{first.match}"
            )
            self.copy_button.setVisible(True)
            self._render()
            if self.anki is not None:
                for entry in result.entries:
                    self.anki.check(self._anki_key(entry), self._mined(entry, with_context=False))
        else:
            self.title.setText("Dictionary")
            self.copy_button.setVisible(False)
            self.browser.setHtml(
                f'<p style="color:{theme.MUTED};">{_e(result.message or "No entries.")}</p>'
            )
        self._fit()

    def _render(self) -> None:
        self._add_pitch_graphs(self.result)
        states = None
        if self.anki is not None:
            states = [self.anki.state(self._anki_key(e)) for e in self.result.entries]
        self.browser.setHtml(result_html(self.result, self.cjk_family, states))

    # --- Anki ------------------------------------------------------------------------------------

    def attach_anki(self, actions) -> None:
        """Show a "+ Anki" link on every entry, run through `actions` (AnkiActions)."""
        self.anki = actions
        actions.changed.connect(self._on_anki_changed)

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

    def _on_anki_changed(self, key: str) -> None:
        if not self.result or not self.result.entries:
            return
        if any(self._anki_key(e) == key for e in self.result.entries):
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
        self.browser.setHtml(f'<p style="color:{theme.MUTED};">{_e(text)}</p>')
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


class DictionaryPopupController(QObject):
    """Runs the lookup for a hovered character, asks the overlay to highlight it, shows the popup.

    Lookups are a few ms and run on the GUI thread; building the index (first run only, ~20 s)
    runs on a worker thread while the popup says so.
    """

    highlight = Signal(int, int)  # start, length in the overlay's text (length 0: clear)
    copied = Signal(str)
    _prepared = Signal(str)  # from the build thread: "" on success, else the error
    _progress = Signal(str, float)

    def __init__(
        self, dictionary, popup: DictionaryPopup | None = None, language: str = "auto", parent=None
    ):
        super().__init__(parent)
        self.dictionary = dictionary
        # auto | ja | zh | ko (the CLI's --lang; Han-only text uses the dictionary's)
        self.language = language
        self.popup = popup or DictionaryPopup()
        self.popup.copied.connect(self.copied)
        self.popup.pointer_entered.connect(self._cancel_hide)
        self.popup.pointer_left.connect(self.on_left)
        self._hide_timer = QTimer(self)
        self._hide_timer.setSingleShot(True)
        self._hide_timer.setInterval(HIDE_DELAY_MS)
        self._hide_timer.timeout.connect(self.hide)
        self._building = False
        self._prepared_once = False
        self._pending: tuple | None = None  # on_hover's arguments, waiting for the index
        self._last: tuple[str, int] | None = None
        self._prepared.connect(self._on_prepared)
        self._progress.connect(self._on_progress)

    # --- slots for the overlay -------------------------------------------------------------------

    def on_hover(
        self, text: str, index: int, global_pos: QPoint, line: QRect | None = None, vertical=False
    ) -> None:
        """`line`: the hovered line (a column when `vertical`) on the screen; the popup goes
        beside it, never over it."""
        if index < 0:
            self.on_left()
            return
        self._cancel_hide()
        if self._last == (text, index) and self.popup.isVisible():
            return
        if not self._building and not self.dictionary.is_ready():
            self.prepare_in_background()
        beside = (self._screen_rect(global_pos), line, vertical)
        if self._building:
            self._pending = (text, index, QPoint(global_pos), line, vertical)
            self.popup.set_message("Preparing the dictionary for its first use (about 20 seconds)…")
            self.popup.show_at(global_pos, *beside)
            return
        try:
            result = self.dictionary.lookup(text, index, self.language)
        except (
            Exception
        ) as exc:  # data missing or broken: say so in the popup, keep the app running
            self.popup.set_message(f"Dictionary unavailable: {exc}")
            self.popup.show_at(global_pos, *beside)
            return
        self._last = (text, index)
        if not result.entries and not result.message:
            self.highlight.emit(index, 0)
            self.popup.hide()
            return
        self.highlight.emit(index, result.match_len)
        self.popup.sentence = text
        self.popup.show_result(result, global_pos, *beside)

    def on_left(self) -> None:
        """The mouse left the word (or the popup): hide soon unless it comes back."""
        self._hide_timer.start()

    def hide(self) -> None:
        self._hide_timer.stop()
        self._last = None
        self._pending = None  # a lookup waiting for the index is about text that may be gone
        if self.popup.isVisible():
            self.popup.hide()
        self.highlight.emit(0, 0)

    def watch(self, widget: QWidget) -> None:
        """Let Esc in `widget` (the overlay) close the popup first."""
        widget.installEventFilter(self)

    @qt_override
    def eventFilter(self, watched, event) -> bool:
        if (
            event.type() == QEvent.Type.KeyPress
            and event.key() == Qt.Key.Key_Escape
            and self.popup.isVisible()
        ):
            self.hide()
            return True
        return False

    # --- internals -------------------------------------------------------------------------------

    def _cancel_hide(self) -> None:
        self._hide_timer.stop()

    @staticmethod
    def _screen_rect(point: QPoint) -> QRect:
        return screen_area(point)

    def prepare_in_background(self) -> None:
        """Build/open the index and load the analyser on a worker thread (call once at start-up)."""
        if self._building or self._prepared_once:
            return
        self._building = True

        def work() -> None:
            try:
                self.dictionary.prepare(
                    lambda stage, done, total: self._progress.emit(stage, fraction(done, total))
                )
                self._prepared.emit("")
            except Exception as exc:  # reported in the popup
                self._prepared.emit(str(exc))

        threading.Thread(target=work, name="hayai-dictionary-index", daemon=True).start()

    def _on_progress(self, stage: str, fraction: float) -> None:
        if self.popup.isVisible() and self.popup.result is None:
            self.popup.set_message(
                f"Preparing the dictionary for its first use: {int(fraction * 100)}% ({stage})…"
            )

    def _on_prepared(self, error: str) -> None:
        self._building = False
        self._prepared_once = not error
        if error:
            self.popup.set_message(f"Dictionary unavailable: {error}")
            return
        pending, self._pending = self._pending, None
        if pending and self.popup.isVisible():
            self.on_hover(*pending)
