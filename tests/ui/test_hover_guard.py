"""One "same character again" rule for hover (app/ui/text_view.py HoverGuard): the overlay and the
reading log (through WordPointer) and the whole screen's boxes (page_view) look a character up once
when the pointer reaches it, and tell the popup once that the pointer left the text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent

from app.ui.page_view import PageView
from app.ui.text_view import HoverGuard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_page_view import vertical_block_view  # noqa: E402

pytestmark = pytest.mark.gui


def test_the_guard_lets_a_lookup_through_once_per_character_and_a_leave_once():
    guard = HoverGuard()
    assert not guard.left()  # never on the text: nothing to leave
    assert guard.moved_to(3)
    assert not guard.moved_to(3)  # the same character again: no lookup
    assert guard.moved_to(4)
    assert guard.left()
    assert not guard.left()  # told once
    assert guard.moved_to(4)  # back on it after leaving: looked up again


def _move(view: PageView, x: float, y: float) -> None:
    local = QPointF(x, y)
    event = QMouseEvent(
        QEvent.Type.MouseMove,
        local,
        QPointF(view.mapToGlobal(local.toPoint())),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    view.mouseMoveEvent(event)


def test_the_whole_screen_looks_a_character_up_once_as_the_overlay_does(qtbot):
    view = vertical_block_view(qtbot)
    hovered, left = [], []
    view.word_hovered.connect(lambda text, index, pos: hovered.append(index))
    view.word_left.connect(lambda: left.append(True))
    # WHEN the pointer moves a little over one character, then onto the next, then off the block
    _move(view, 110, 3)
    _move(view, 111, 5)
    _move(view, 110, 30)
    _move(view, 300, 300)
    _move(view, 310, 300)
    # THEN each character is looked up once, and the popup is told once that it left
    assert len(hovered) == 2 and hovered[0] != hovered[1]
    assert left == [True]
