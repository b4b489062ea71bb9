"""No exception escapes a Qt virtual override: the press-without-move crash of the selection, the
guard (`app/ui/guard.py`) catching an injected error and ending the painter, and every override in
app/ carrying the guard."""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter
from PySide6.QtWidgets import QApplication, QWidget

from app.capture import Capture, ScreenInfo
from app.ui.guard import GUARDED, qt_override
from app.ui.selection import SelectionSession

pytestmark = pytest.mark.gui

APP = Path(__file__).resolve().parents[2] / "app"
# Qt's virtual methods that app/ overrides or may one day (an *Event name is one by its name).
QT_VIRTUALS = {"event", "eventFilter", "sizeHint", "minimumSizeHint", "loadResource"}


def _is_qt_virtual(name: str) -> bool:
    return name in QT_VIRTUALS or re.fullmatch(r"[a-z]+[A-Za-z]*Event", name) is not None


def _overrides_without_guard() -> list[str]:
    missing = []
    for path in sorted(APP.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in ast.walk(tree):
            if not isinstance(cls, ast.ClassDef) or not cls.bases:  # a plain class: not Qt's
                continue
            for item in cls.body:
                if isinstance(item, ast.FunctionDef) and _is_qt_virtual(item.name):
                    names = {getattr(d, "id", getattr(d, "attr", "")) for d in item.decorator_list}
                    if "qt_override" not in names:
                        where = path.relative_to(APP.parent)
                        missing.append(f"{where}:{item.lineno} {cls.name}.{item.name}")
    return missing


def test_every_qt_override_in_app_carries_the_guard():
    assert _overrides_without_guard() == []


def _capture() -> dict[str, Capture]:
    qscreen = QGuiApplication.primaryScreen()
    g = qscreen.geometry()
    image = QImage(g.width(), g.height(), QImage.Format.Format_RGB32)
    image.fill(QColor(200, 200, 200))
    info = ScreenInfo(
        qscreen.name(), (g.x(), g.y(), g.width(), g.height()), (0, 0, g.width(), g.height()), 1.0
    )
    return {qscreen.name(): Capture(info, image)}


def test_a_press_without_a_move_paints_without_an_error(qtbot, caplog):
    """A zero-size QRectF is false: `box or proposal` gave None on the press, and paintEvent raised
    (then Qt segfaulted on the painter left open). The press alone must paint the dimmed screen."""
    session = SelectionSession(_capture())
    session.start()
    window = session.windows[0]
    qtbot.waitExposed(window)
    with caplog.at_level(logging.ERROR, logger="app.ui.guard"):
        qtbot.mousePress(window, Qt.MouseButton.LeftButton, pos=QPoint(300, 200))
        picture = window.grab().toImage()  # paints now, with the zero-size box
    assert [r.getMessage() for r in caplog.records] == []  # the guard had nothing to catch
    dimmed = QColor(picture.pixel(300, 200))
    assert dimmed.red() < 150  # the press point is dimmed like the rest (an empty box)
    qtbot.mouseMove(window, QPoint(400, 300))
    qtbot.mouseRelease(window, Qt.MouseButton.LeftButton, pos=QPoint(400, 300))
    assert not session.is_open


class Broken(QWidget):
    """Raises inside paintEvent with its painter open, and inside an event filter."""

    painters: list[QPainter] = []

    @qt_override
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        Broken.painters.append(painter)
        painter.fillRect(self.rect(), QColor(255, 0, 0))
        raise RuntimeError("injected paint error")

    @qt_override
    def eventFilter(self, watched, event) -> bool:
        raise RuntimeError("injected filter error")

    @qt_override
    def sizeHint(self):
        raise RuntimeError("injected size error")


def test_the_guard_logs_ends_the_painter_and_answers_for_the_base(qtbot, caplog):
    widget = Broken()
    widget.resize(80, 40)
    qtbot.addWidget(widget)
    with caplog.at_level(logging.ERROR, logger="app.ui.guard"):
        widget.grab()  # would leave the painter active (and Qt aborting) without the guard
        assert widget.eventFilter(widget, None) is False  # QObject's own answer
        assert widget.sizeHint() == QWidget.sizeHint(widget)
    assert Broken.painters and not any(p.isActive() for p in Broken.painters)
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == "error in Broken.paintEvent (the event was dropped)"
    assert caplog.records[0].exc_info[1].args == ("injected paint error",)
    assert any("Broken.eventFilter" in m for m in messages)
    assert any("Broken.sizeHint" in m for m in messages)
    assert getattr(Broken.paintEvent, GUARDED)
    QApplication.processEvents()
