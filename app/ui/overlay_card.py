"""The overlay's window: a frameless card that stays on top, with rounded corners and a thin accent
on top, moved by dragging it. The rounding is a window mask, not a translucent window (those turn
black without a compositor)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QRegion
from PySide6.QtWidgets import QWidget

from app.ui import theme
from app.ui.guard import qt_override

RADIUS = 12


class OverlayCard(QWidget):
    """The card's look and its drag; what it shows is the subclass's (app/ui/overlay.py)."""

    def __init__(self, parent=None):
        super().__init__(
            parent,
            Qt.WindowType.Tool
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint,
        )
        theme.apply(self, "HayaiCard")
        self._drag_from: QPoint | None = None

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
