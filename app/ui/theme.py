"""The shared look: colours, fonts, one style sheet, and the app icons (with a drawn fallback)."""

from __future__ import annotations

import logging

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QIcon, QPainter, QPainterPath, QPen, QPixmap

log = logging.getLogger(__name__)

# Dark slate card with a sky-blue accent (the selection window uses the same accent).
BACKGROUND = "#111827"
SURFACE = "#1f2937"
SURFACE_HOVER = "#2b3646"
BORDER = "#334155"
TEXT = "#f1f5f9"
MUTED = "#94a3b8"
ACCENT = "#38bdf8"
ACCENT_DARK = "#0284c7"
DANGER = "#f87171"
SUCCESS = "#4ade80"  # done: "in deck" links
HIGHLIGHT = "#0e7490"  # dictionary word highlight behind the text
TOOL_CHIP = "#cbd5e1"  # behind the file dialog's own (dark) tool icons, so they stay visible

CJK_FAMILIES = (
    "Noto Sans CJK JP",
    "Noto Sans JP",
    "Source Han Sans JP",
    "Hiragino Sans",
    "Yu Gothic UI",
    "Meiryo",
    "Noto Sans CJK SC",
    "WenQuanYi Micro Hei",
)
UI_FAMILIES = ("Inter", "Noto Sans", "Cantarell", "Segoe UI", "Helvetica Neue", "DejaVu Sans")


def first_installed(families, fallback: str = "") -> str:
    installed = set(QFontDatabase.families())
    return next((f for f in families if f in installed), fallback)


def cjk_font(family: str = "", point_size: float = 18) -> QFont:
    """The text font: the user's choice when installed, else the best CJK font found."""
    installed = set(QFontDatabase.families())
    chosen = family if family in installed else first_installed(CJK_FAMILIES, family)
    font = QFont(chosen)
    font.setPointSizeF(point_size)
    font.setStyleHint(QFont.StyleHint.SansSerif)
    return font


def ui_font(point_size: float = 10) -> QFont:
    font = QFont(first_installed(UI_FAMILIES + CJK_FAMILIES, ""))
    font.setPointSizeF(point_size)
    return font


# Label roles. The windows' own `... QLabel` rule names an id, which outranks a bare
# `QLabel[role=...]`, so each role is also written under each window's id.
_ROLE_STYLES = {
    "muted": f"color: {MUTED};",
    "title": "font-size: 15pt; font-weight: 600;",
    "error": f"color: {DANGER};",
    "section": f"color: {ACCENT}; font-weight: 600; padding-top: 6px;",
}
_ROLES = "\n".join(
    ", ".join(
        f'{window} QLabel[role="{role}"]'.strip()
        for window in ("QDialog#HayaiDialog", "QWidget#HayaiWindow", "QWidget#HayaiCard", "")
    )
    + f" {{ {body} }}"
    for role, body in _ROLE_STYLES.items()
)

STYLE = f"""
QWidget#HayaiCard, QDialog#HayaiDialog, QWidget#HayaiWindow {{
    background: {BACKGROUND}; color: {TEXT};
}}
QDialog#HayaiDialog QLabel, QWidget#HayaiWindow QLabel, QWidget#HayaiCard QLabel {{ color: {TEXT}; }}
{_ROLES}
QPlainTextEdit, QTextEdit, QLineEdit, QListWidget, QComboBox, QSpinBox, QFontComboBox, QKeySequenceEdit {{
    background: {SURFACE}; color: {TEXT}; border: 1px solid {BORDER}; border-radius: 6px;
    selection-background-color: {ACCENT_DARK}; selection-color: white;
}}
QLineEdit, QComboBox, QFontComboBox {{ padding: 4px 8px; min-height: 22px; }}
QLineEdit:disabled {{ background: transparent; color: {MUTED}; }}
QSpinBox {{ padding: 2px 6px; min-height: 26px; }}
QSpinBox::up-button, QSpinBox::down-button {{ width: 0; border: none; }}
QComboBox::drop-down {{ border: none; width: 24px; }}
QComboBox QAbstractItemView {{ background: {SURFACE}; color: {TEXT}; selection-background-color: {ACCENT_DARK}; }}
QPlainTextEdit#OverlayText {{ background: transparent; border: none; padding: 0; }}
QPushButton, QToolButton {{
    background: {SURFACE}; color: {TEXT}; border: 1px solid {BORDER}; border-radius: 6px; padding: 5px 12px;
}}
QPushButton:hover, QToolButton:hover {{ background: {SURFACE_HOVER}; border-color: {ACCENT}; }}
QPushButton:pressed, QToolButton:pressed {{ background: {ACCENT_DARK}; }}
QPushButton:checked, QToolButton:checked {{ background: {ACCENT_DARK}; border-color: {ACCENT}; }}
QPushButton:disabled, QToolButton:disabled {{ color: #64748b; }}
QPushButton[role="primary"] {{ background: {ACCENT_DARK}; border-color: {ACCENT}; color: white; font-weight: 600; }}
QPushButton[role="primary"]:hover {{ background: {ACCENT}; color: #0b1220; }}
QPushButton[role="primary"]:disabled {{ background: {SURFACE}; border-color: {BORDER}; color: #64748b; }}
QToolButton#OverlayButton {{ padding: 3px 9px; border-radius: 5px; font-size: 9pt; }}
QToolButton#OverlayClose {{ padding: 3px 7px; border: none; background: transparent; color: {MUTED}; }}
QToolButton#OverlayClose:hover {{ color: white; background: #7f1d1d; }}
QCheckBox {{ color: {TEXT}; spacing: 8px; }}
QCheckBox::indicator, QAbstractItemView::indicator {{ width: 16px; height: 16px; border-radius: 4px;
    border: 1px solid {BORDER}; background: {SURFACE}; }}
QCheckBox::indicator:checked, QAbstractItemView::indicator:checked {{ background: {ACCENT};
    border-color: {ACCENT}; }}
QCheckBox::indicator:checked:disabled, QAbstractItemView::indicator:checked:disabled {{
    background: {MUTED}; border-color: {MUTED}; }}
QProgressBar {{ background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 6px; color: {TEXT};
    text-align: center; min-height: 18px; }}
QProgressBar::chunk {{ background: {ACCENT_DARK}; border-radius: 5px; }}
QListWidget::item {{ padding: 6px; border-bottom: 1px solid {BORDER}; }}
QListWidget::item:selected {{ background: {ACCENT_DARK}; color: white; }}
QScrollBar:vertical, QScrollBar:horizontal {{ background: transparent; width: 10px; height: 10px; }}
QScrollBar::handle {{ background: {BORDER}; border-radius: 4px; min-height: 24px; min-width: 24px; }}
QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; }}
QListWidget#SettingsSections {{ border: none; background: transparent; outline: 0; }}
QListWidget#SettingsSections::item {{ padding: 7px 12px; border: none; border-radius: 6px; }}
QListWidget#SettingsSections::item:selected {{ background: {ACCENT_DARK}; color: white; }}
QToolTip {{ background: {SURFACE}; color: {TEXT}; border: 1px solid {BORDER}; padding: 4px; }}
QDialog, QFileDialog, QMessageBox, QInputDialog {{ background: {BACKGROUND}; color: {TEXT}; }}
QFileDialog QLabel, QMessageBox QLabel, QInputDialog QLabel {{ color: {TEXT}; }}
QTreeView, QListView, QTableView {{
    background: {SURFACE}; color: {TEXT}; border: 1px solid {BORDER}; border-radius: 6px;
    alternate-background-color: {SURFACE_HOVER};
    selection-background-color: {ACCENT_DARK}; selection-color: white;
}}
QTreeView::item:hover, QListView::item:hover {{ background: {SURFACE_HOVER}; }}
QTreeView::item:selected, QListView::item:selected {{ background: {ACCENT_DARK}; color: white; }}
QHeaderView {{ background: {SURFACE}; border: none; }}
QHeaderView::section {{
    background: {BACKGROUND}; color: {MUTED}; border: none; border-bottom: 1px solid {BORDER};
    border-right: 1px solid {BORDER}; padding: 4px 8px;
}}
QSplitter::handle {{ background: {BORDER}; }}
QFileDialog QToolButton {{ background: {TOOL_CHIP}; border-color: {MUTED}; padding: 3px; min-width: 22px; min-height: 22px; }}
QFileDialog QToolButton:hover {{ background: white; border-color: {ACCENT}; }}
QFileDialog QToolButton:checked {{ background: {ACCENT}; border-color: {ACCENT}; }}
QMessageBox QPushButton {{ min-width: 72px; }}
QPushButton#ModelLine {{ background: transparent; border: none; padding: 2px 0; text-align: left; }}
QPushButton#ModelLine {{ color: {ACCENT}; }}
QPushButton#ModelLine:hover {{ color: white; }}
QPushButton#ModelLine:disabled {{ color: {MUTED}; }}
QToolButton#DetailsToggle {{ background: transparent; border: none; color: {MUTED}; padding: 2px 0; }}
QToolButton#DetailsToggle:hover, QToolButton#DetailsToggle:checked {{ background: transparent; color: {TEXT}; }}
QTextEdit#DetailsText {{ color: {MUTED}; padding: 4px; }}
QMenu {{ background: {BACKGROUND}; color: {TEXT}; border: 1px solid {BORDER}; padding: 4px; }}
QMenu::item {{ padding: 6px 28px 6px 14px; border-radius: 4px; }}
QMenu::item:selected {{ background: {ACCENT_DARK}; color: white; }}
QMenu::item:disabled {{ color: {MUTED}; }}
QMenu::separator {{ height: 1px; background: {BORDER}; margin: 4px 8px; }}
"""


def _drawn_png(name: str, draw) -> str:
    """A small picture for the style sheet (which needs a file), drawn once by `draw(painter)` on a
    transparent 20×20 px into a per-user temp folder; its path."""
    import os
    import tempfile

    folder = os.path.join(
        tempfile.gettempdir(), f"hayai-theme-{os.getuid() if hasattr(os, 'getuid') else 0}"
    )
    path = os.path.join(folder, f"{name}.png")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        pixmap = QPixmap(20, 20)
        pixmap.fill(Qt.GlobalColor.transparent)
        p = QPainter(pixmap)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        draw(p)
        p.end()
        pixmap.save(path + ".tmp.png", "PNG")
        os.replace(path + ".tmp.png", path)
    return path.replace("\\", "/")


def _stroke(painter: QPainter, colour: str, width: float, *points: tuple[float, float]) -> None:
    pen = QPen(QColor(colour), width)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.drawPolyline([QPointF(x, y) for x, y in points])


def stylesheet() -> str:
    """STYLE and the rules that need drawn pictures: the combo boxes' arrow, the ticked box's tick."""
    try:
        arrow = _drawn_png(
            "down-arrow", lambda p: _stroke(p, MUTED, 2.2, (5, 8), (10, 13), (15, 8))
        )
        tick = _drawn_png(
            "tick", lambda p: _stroke(p, BACKGROUND, 2.8, (4.5, 10.5), (8.5, 14.5), (15.5, 6))
        )
    except OSError:
        return STYLE
    return STYLE + (
        f"QComboBox::down-arrow {{ image: url({arrow}); width: 14px; height: 14px; }}\n"
        f"QCheckBox::indicator:checked, QAbstractItemView::indicator:checked {{ image: url({tick}); }}\n"
    )


APP_TITLE = "Hayai"  # the application's display name (app/launcher.py sets it)


def window_title(name: str) -> str:
    """ "History — Hayai": what the window is, then the app. Qt appends the display name to a
    title that does not end with it already (X11, Windows), so it is written here, once."""
    return f"{name} — {APP_TITLE}"


def apply(widget, object_name: str = "HayaiDialog") -> None:
    """Give a top-level window the Hayai look."""
    widget.setObjectName(object_name)
    widget.setStyleSheet(stylesheet())
    widget.setFont(ui_font(10))
    widget.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)


def repolish(widget) -> None:
    """Style `widget` again after a property its style sheet selects on (`role`) changed."""
    widget.style().unpolish(widget)
    widget.style().polish(widget)


# --- icons ---------------------------------------------------------------------------------------


def _drawn_icon(busy: bool) -> QIcon:
    """A fallback icon drawn in code: a rounded square with a selection box and text lines."""
    icon = QIcon()
    for size in (16, 22, 24, 32, 48, 64, 128, 256):
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        p = QPainter(pixmap)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        s = size / 64
        path = QPainterPath()
        path.addRoundedRect(QRectF(2 * s, 2 * s, 60 * s, 60 * s), 14 * s, 14 * s)
        p.fillPath(path, QColor(ACCENT_DARK if not busy else "#f59e0b"))
        pen = QPen(QColor("white"), max(1.0, 4 * s))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        for x0, y0, dx, dy in (
            (14, 24, 0, -8),
            (14, 24 - 8, 8, 0),
            (50, 40, 0, 8),
            (50, 48, -8, 0),
        ):
            p.drawLine(QPointF(x0 * s, y0 * s), QPointF((x0 + dx) * s, (y0 + dy) * s))
        pen.setWidthF(max(1.0, 5 * s))
        p.setPen(pen)
        p.drawLine(QPointF(22 * s, 28 * s), QPointF(42 * s, 28 * s))
        p.drawLine(QPointF(22 * s, 37 * s), QPointF(36 * s, 37 * s))
        p.end()
        icon.addPixmap(pixmap)
    return icon


_icons: dict[bool, QIcon] = {}


def app_icon(busy: bool = False) -> QIcon:
    """The tray/window icon from resources/icons (the busy variant while reading); drawn when missing."""
    if busy not in _icons:
        icon = QIcon()
        try:
            import resources

            icon = QIcon(str(resources.path(resources.ICON_BUSY if busy else resources.ICON)))
        except (FileNotFoundError, ImportError) as exc:
            log.debug("icon resource missing (%s); drawing one", exc)
        if icon.isNull() or icon.pixmap(32, 32).isNull():  # no SVG plugin, or no file
            icon = _drawn_icon(busy)
        _icons[busy] = icon
    return _icons[busy]
