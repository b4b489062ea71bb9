"""About: version, what Hayai is, licences of the parts it ships with, dictionary credits."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from app import __version__
from app.ui import theme
from app.ui.rich_text import SafeTextBrowser

LICENCES = (
    ("Hayai Desktop", "Apache-2.0"),
    (
        "Hayai OCR model weights",
        "by their authors; see the model page on Hugging Face (JustANormalTinkerer)",
    ),
    ("Qt 6 / PySide6", "LGPL-3.0"),
    ("PyTorch", "BSD-3-Clause"),
    ("Hugging Face transformers, tokenizers, safetensors", "Apache-2.0"),
    ("PP-OCRv6 det small text detector (PaddleOCR), via RapidOCR", "Apache-2.0"),
    ("ONNX Runtime", "MIT"),
    ("ONNX", "Apache-2.0"),
    ("OpenCV", "Apache-2.0"),
    ("mss", "MIT"),
    ("pynput", "LGPL-3.0"),
    ("Pillow", "MIT-CMU (HPND)"),
    ("platformdirs", "MIT"),
    ("Noto Sans CJK (when installed by your system)", "SIL Open Font License 1.1"),
)


def dictionary_credits() -> str:
    try:
        from app.dictionary import CREDITS
    except ImportError:
        return ""
    return str(CREDITS or "")


def about_html() -> str:
    rows = "".join(
        f"<tr><td style='padding:2px 14px 2px 0'>{html.escape(name)}</td>"
        f"<td style='color:{theme.MUTED}'>{html.escape(licence)}</td></tr>"
        for name, licence in LICENCES
    )
    credits = dictionary_credits()
    credits_html = (
        (
            f"<h4 style='color:{theme.ACCENT}'>Dictionary data</h4>"
            f"<p>{html.escape(credits).replace(chr(10), '<br>')}</p>"
        )
        if credits
        else ""
    )
    return (
        f"<p>Press a hotkey, box text on the screen, read it: a local OCR model made for Japanese (also "
        f"vertical), Chinese, Korean and English, with a popup dictionary.</p>"
        f"<p>Nothing leaves this computer: no telemetry; the only network use is the model download you "
        f"start yourself.</p>"
        f"<h4 style='color:{theme.ACCENT}'>Licences</h4><table>{rows}</table>{credits_html}"
    )


class AboutDialog(QDialog):
    def __init__(self, parent=None):
        super().__init__(parent)
        theme.apply(self)
        self.setWindowTitle("About Hayai")
        self.setWindowIcon(theme.app_icon())
        icon = QLabel()
        icon.setPixmap(theme.app_icon().pixmap(56, 56))
        title = QLabel(f"Hayai Desktop {__version__}")
        title.setProperty("role", "title")
        subtitle = QLabel("Screen OCR for language learners")
        subtitle.setProperty("role", "muted")
        head = QHBoxLayout()
        head.addWidget(icon)
        names = QVBoxLayout()
        names.addWidget(title)
        names.addWidget(subtitle)
        head.addLayout(names, 1)
        self.browser = SafeTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(about_html())
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 16, 20, 16)
        layout.addLayout(head)
        layout.addWidget(self.browser, 1)
        layout.addLayout(buttons)
        self.resize(560, 480)
