"""The dictionary popup goes beside the line being read, never over it: below (or above) a line of
horizontal text, to the left (or right) of a vertical column, in the overlay and the reading log."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, QSize

from app.dictionary.models import LookupResult
from app.ui.dictionary_popup import MAX_HEIGHT, POPUP_WIDTH, popup_position
from app.ui.dictionary_popup_controller import DictionaryPopupController
from app.ui.overlay import Overlay

pytestmark = pytest.mark.gui

SCREEN = QRect(0, 0, 1280, 720)
SIZE = QSize(POPUP_WIDTH, 300)


def test_beside_a_horizontal_line_below_it_else_above_it():
    line = QRect(100, 200, 500, 30)
    place = QRect(popup_position(QPoint(300, 215), SIZE, SCREEN, line=line), SIZE)
    assert place.top() > line.bottom() and SCREEN.contains(place)
    assert abs(place.left() - 309) <= 1  # lined up with the pointer
    low = QRect(100, 600, 500, 30)  # no room below: above
    place = QRect(popup_position(QPoint(300, 615), SIZE, SCREEN, line=low), SIZE)
    assert place.bottom() < low.top() and not place.intersects(low)
    # the old placement (below the pointer) covered a tall line's lower half and the next lines
    tall = QRect(100, 200, 500, 60)
    assert QRect(popup_position(QPoint(300, 210), SIZE, SCREEN), SIZE).intersects(tall)
    assert not QRect(popup_position(QPoint(300, 210), SIZE, SCREEN, line=tall), SIZE).intersects(
        tall
    )


def test_beside_a_vertical_column_to_its_left_else_to_its_right():
    column = QRect(900, 50, 40, 600)
    place = QRect(popup_position(QPoint(920, 300), SIZE, SCREEN, line=column, vertical=True), SIZE)
    assert place.right() < column.left() and SCREEN.contains(place)
    edge = QRect(200, 50, 40, 600)  # no room on the left: right
    place = QRect(popup_position(QPoint(220, 300), SIZE, SCREEN, line=edge, vertical=True), SIZE)
    assert place.left() > edge.right()
    big = QSize(POPUP_WIDTH, MAX_HEIGHT)
    for line in (QRect(0, 0, 1280, 100), QRect(0, 620, 1280, 100), QRect(600, 0, 40, 720)):
        place = QRect(popup_position(QPoint(620, 50), big, SCREEN, line=line), big)
        assert SCREEN.contains(place) and not place.intersects(line)


class Stub:
    """A dictionary that finds one "word" of two characters wherever the pointer is."""

    def is_ready(self):
        return True

    def lookup(self, text, index, language="auto"):
        return LookupResult(2, [], "ja", f"{text[index : index + 2]}: no entries")


@pytest.mark.parametrize("vertical", [False, True])
def test_in_the_overlay_the_popup_never_covers_the_hovered_line(qtbot, vertical):
    overlay = Overlay()
    qtbot.addWidget(overlay)
    overlay.set_anchor(QRect(80, 80, 400, 160), QRect(0, 0, 1280, 720))
    text = "今日はいい天気ですね。\n明日は雨が降るそうです。\n傘を持って行きましょう。"
    overlay.show_result(text, "0.4 s")
    overlay.set_vertical(vertical)
    qtbot.waitExposed(overlay)
    controller = DictionaryPopupController(Stub())
    qtbot.addWidget(controller.popup)
    overlay.word_hovered.connect(
        lambda t, i, pos: controller.on_hover(t, i, pos, *overlay.line_at(i))
    )
    index = text.index("雨")
    line, column = overlay.line_at(index)
    assert column is vertical and line.isValid()
    if vertical:
        cell = next(c for c in overlay.painted.cells if c.index == index)
        point = overlay.painted.mapToGlobal(cell.rect.center().toPoint())
    else:
        cursor = overlay.editor.textCursor()
        cursor.setPosition(index)
        caret = overlay.editor.cursorRect(cursor)
        point = overlay.editor.viewport().mapToGlobal(caret.center() + QPoint(4, 0))
    assert line.contains(point)  # the hovered character is on that line
    overlay.word_hovered.emit(text, index, point)
    assert controller.popup.isVisible()
    assert not controller.popup.frameGeometry().intersects(line)
    if vertical:
        assert controller.popup.frameGeometry().right() < line.left()  # to the left of the column
    else:
        assert controller.popup.frameGeometry().top() > line.bottom()  # below the line
