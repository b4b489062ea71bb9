"""Outside text is never markup: the one escape, plain labels, and rich text that loads nothing.

Text the app did not write itself (OCR output, file names, dictionary content, messages from Anki
and servers) reaches the screen in one of two ways:

- in a plain widget: `plain(label)` (or `PlainLabel`) sets Qt.PlainText, so `<img src=…>` in a file
  name is shown as those characters; QLabel's default (AutoText) would guess rich text and let Qt
  open and draw the file, or block the GUI thread on a FIFO;
- inside our own rich text, escaped with `escape` (quotes too: a value may sit in an attribute).

And every rich-text view that could still meet a stray tag resolves resources only from the images
we generated and added to its document ourselves (`QTextDocument.addResource`): `SafeTextBrowser`
and `SafeTextDocument` answer every other request (`file:`, `http:`, a bare path, `qrc:`) with an
empty placeholder, so Qt never falls back to opening a file. QLabel has no such hook, hence plain.
"""

from __future__ import annotations

import html
import logging

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QLabel, QMessageBox, QTextBrowser

log = logging.getLogger(__name__)


def escape(text: object) -> str:
    """Outside text for rich text: `<`, `>`, `&` and both quotes escaped."""
    return html.escape(str(text), quote=True)


def tooltip(text: str) -> str:
    """A tooltip that shows `text` literally (QToolTip guesses rich text like QLabel does)."""
    return f'<p style="white-space:pre-wrap;">{escape(text)}</p>'


def titled(title: str, text: str) -> str:
    """`title` (our own words) over `text` for a receiver we cannot set to plain text, such as the
    tray icon's tooltip (drawn by QToolTip on an X11 tray, by the desktop through D-Bus): Qt guesses
    rich text only from a tag before the first line break, so this is always shown as it is."""
    return f"{title}\n{text}"


def plain(widget):
    """`widget` (a QLabel or QMessageBox) shows its text as plain text; returns it."""
    widget.setTextFormat(Qt.TextFormat.PlainText)
    return widget


class PlainLabel(QLabel):
    """A QLabel for outside text: always plain text."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)


def message_box(parent, icon, title: str, text: str, buttons=QMessageBox.StandardButton.Ok):
    """A QMessageBox whose text is plain (QMessageBox.warning/question guess rich text)."""
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    return box


def _placeholder() -> QImage:
    image = QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    return image


def refuse_resource(kind: int, url) -> object:
    """What a rich-text view answers for a resource it was not given: never a file's content.

    A non-empty answer matters: for an empty one Qt opens the path itself (QTextDocument's local
    file fallback and QTextImageHandler's QImage.load)."""
    log.debug("refused a rich-text resource: %s", url.toString()[:200])
    if kind == QTextDocument.ResourceType.ImageResource.value:
        return _placeholder()
    return ""


def _kind(kind) -> int:
    return kind.value if hasattr(kind, "value") else int(kind)


class SafeTextBrowser(QTextBrowser):
    """A QTextBrowser that shows only the resources added to its document (`addResource`) and
    never opens a link or a file: links reach `anchorClicked` only."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)

    def loadResource(self, kind, url):  # a Qt virtual: nothing may escape it
        try:
            return refuse_resource(_kind(kind), url)
        except Exception:
            return ""


class SafeTextDocument(QTextDocument):
    """A QTextDocument that shows only the resources added to it (`addResource`)."""

    def loadResource(self, kind, url):  # a Qt virtual: nothing may escape it
        try:
            return refuse_resource(_kind(kind), url)
        except Exception:
            return ""
