"""The overlay's page when it has no text to show: "reading" with moving dots while the model
reads, or an error: one sentence, left-aligned, the rest of a long message behind a "Details" link.
The error is our own sentence around outside words, escaped (docs/security.md)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QLabel

from app.ui import theme
from app.ui.details import split_message


class OverlayMessage(QLabel):
    """ "reading…" or an error; a click on "Details" is `linkActivated` (the overlay toggles them
    with `toggle_details` and sizes the card again)."""

    def __init__(self, parent=None):
        super().__init__("", parent)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumHeight(48)
        self._error = ("", "")  # (sentence, details) of the error shown
        self._error_open = False
        self._dots = 0

    def show_reading(self) -> None:
        self._set("reading", error=False)
        self._dots = 0

    def tick_reading(self) -> None:
        """One more dot (then none again): the read is still going."""
        self._dots = (self._dots + 1) % 4
        self.setText("reading" + "." * self._dots + " " * (3 - self._dots))

    def show_error(self, message: str) -> None:
        self._error, self._error_open = split_message(message), False
        self._set("", error=True)
        self._show_error_text()

    def toggle_details(self) -> None:
        self._error_open = not self._error_open
        self._show_error_text()

    def error_text(self) -> str:
        """The error as shown (sentence, and the details when open), without markup."""
        return QTextDocumentFragment.fromHtml(self.text()).toPlainText()

    def _show_error_text(self) -> None:
        sentence, details = (html.escape(part) for part in self._error)
        if details:
            link = "Hide details" if self._error_open else "Details"
            sentence += f' <a href="details" style="color: {theme.ACCENT};">{link}</a>'
            if self._error_open:
                body = details.replace("\n", "<br>")
                sentence += f'<p style="color: {theme.MUTED};">{body}</p>'
        self.setText(sentence)

    def _set(self, text: str, error: bool) -> None:
        self.setProperty("role", "error" if error else "muted")
        self.setTextFormat(Qt.TextFormat.RichText if error else Qt.TextFormat.PlainText)
        self.setAlignment(
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
            if error
            else Qt.AlignmentFlag.AlignCenter
        )
        self.setText(text)
        self.setFont(theme.ui_font(11))
        theme.repolish(self)
