"""The overlay: placement beside the box, copy, Esc, vertical layout with real vertical glyphs,
the dictionary hook (hover / click, highlight), reading and error states, furigana."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QImage, QPainter, QTextCursor

from app.ui.overlay import Overlay
from app.ui.overlay_placement import placement
from app.ui.painted_text import PaintedTextView, vertical_font

pytestmark = pytest.mark.gui

SCREEN = QRect(0, 0, 1280, 800)
TEXT = "「今日はいい天気ですね。」"


@pytest.fixture
def overlay(qtbot):
    o = Overlay()
    qtbot.addWidget(o)
    o.configure("Noto Sans CJK JP", 18, False)
    o.set_anchor(QRect(100, 100, 300, 60), SCREEN)
    o.show_result(TEXT, "0.42 s · v2.1 · cpu")
    return o


# --- placement -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "box, side",
    [
        (QRect(100, 100, 300, 60), "right"),
        (QRect(1000, 100, 270, 60), "left"),
        (QRect(0, 100, 1270, 60), "below"),
        (QRect(0, 500, 1270, 290), "above"),
    ],
)
def test_placed_beside_the_box_on_screen_never_covering_it(box, side):
    size = QSize(400, 180)
    top_left = placement(box, size, SCREEN)
    card = QRect(top_left, size)
    assert SCREEN.contains(card), (card, side)
    assert not card.intersects(box), (card, box, side)
    expected = {
        "right": card.left() > box.right(),
        "left": card.right() < box.left(),
        "below": card.top() > box.bottom(),
        "above": card.bottom() < box.top(),
    }
    assert expected[side], (side, card, box)


def test_kept_on_screen_when_nothing_fits_beside_the_box():
    box = QRect(10, 10, 1260, 780)  # almost the whole screen
    card = QRect(placement(box, QSize(400, 200), SCREEN), QSize(400, 200))
    assert SCREEN.contains(card)


def test_overlay_window_is_placed_from_its_anchor(overlay):
    assert overlay.isVisible()
    assert overlay.geometry().left() > 400 - 1  # right of the box (x 100..399)
    assert SCREEN.contains(overlay.geometry())
    flags = overlay.windowFlags()
    assert flags & Qt.WindowType.FramelessWindowHint and flags & Qt.WindowType.WindowStaysOnTopHint


# --- text, copy, Esc -------------------------------------------------------------------------------


def test_status_line_and_editable_text(overlay, qtbot):
    assert overlay.status.text() == "0.42 s · v2.1 · cpu"
    assert overlay.text() == TEXT
    assert not overlay.editor.isReadOnly()
    overlay.editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(overlay.editor, "!")
    assert overlay.text() == TEXT + "!"


def test_copy_button_and_ctrl_c_put_the_text_on_the_clipboard(overlay, qtbot):
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("before")
    qtbot.mouseClick(overlay.copy_button, Qt.MouseButton.LeftButton)
    assert clipboard.text() == TEXT
    clipboard.setText("before")
    overlay.editor.setFocus()
    qtbot.keyClick(overlay.editor, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == TEXT
    # with a selection, Ctrl+C copies just that
    cursor = overlay.editor.textCursor()
    cursor.setPosition(1)
    cursor.setPosition(3, QTextCursor.MoveMode.KeepAnchor)
    overlay.editor.setTextCursor(cursor)
    qtbot.keyClick(overlay.editor, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == "今日"


def test_esc_closes(overlay, qtbot):
    with qtbot.waitSignal(overlay.closed, timeout=1000):
        qtbot.keyClick(overlay, Qt.Key.Key_Escape)
    assert not overlay.isVisible()


def test_reading_then_error_states(overlay):
    overlay.show_reading()
    assert overlay.stack.currentWidget() is overlay.message
    assert overlay.message.text().startswith("reading")
    assert not overlay.copy_button.isEnabled()
    overlay.show_error("Out of memory while reading this box.")
    assert "Out of memory" in overlay.message.text()
    assert overlay.rescan_button.isEnabled()  # the way out: try again
    overlay.show_result("次", "0.10 s · v2.1 · cpu")
    assert overlay.stack.currentWidget() is overlay.editor and overlay.copy_button.isEnabled()


def test_an_error_is_one_left_aligned_sentence_with_the_rest_behind_details(overlay, qtbot):
    from model.download import missing_message

    overlay.set_anchor(QRect(300, 300, 200, 60), QRect(0, 0, 1280, 720))
    overlay.show_error(f"No model: {missing_message('v2.1')}.")
    assert overlay.message.alignment() & Qt.AlignmentFlag.AlignLeft
    shown = overlay.error_text()
    assert shown.startswith("No model: The Hayai OCR v2.1 weights are not installed.")
    assert shown.endswith("Details") and "hayai model download" not in shown  # no CLI text in view
    overlay.message.linkActivated.emit("details")  # the "Details" link
    opened = overlay.error_text()
    assert "hayai model download" in opened and opened.count("not installed") == 1
    width = overlay.width() - 26  # the card's margins
    assert overlay.message.height() >= overlay.message.heightForWidth(width) - 1  # not clipped
    overlay.show_reading()  # a reading is centred again, as before
    assert overlay.message.alignment() & Qt.AlignmentFlag.AlignHCenter


def test_rescan_button_emits(overlay, qtbot):
    with qtbot.waitSignal(overlay.rescan_requested, timeout=1000):
        qtbot.mouseClick(overlay.rescan_button, Qt.MouseButton.LeftButton)


# --- vertical --------------------------------------------------------------------------------------


def _render(text: str, font: QFont) -> QImage:
    image = QImage(64, 64, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setFont(font)
    painter.setPen(QColor("black"))
    painter.drawText(QPointF(8, 44), text)
    painter.end()
    return image


@pytest.mark.parametrize(
    "char, vertical_form", [("「", "\ufe41"), ("」", "\ufe42"), ("。", "\ufe12"), ("、", "\ufe11")]
)
def test_vert_feature_draws_the_vertical_glyph_forms(qapp, char, vertical_form):
    font = QFont("Noto Sans CJK JP")
    if font.family() not in QFont(font).family() or not QFont("Noto Sans CJK JP").exactMatch():
        pytest.skip("Noto Sans CJK JP is not installed")
    font.setPixelSize(40)
    # the vert feature turns 「 into exactly the glyph of its vertical presentation form ﹁
    assert _render(char, vertical_font(font)) == _render(vertical_form, font)
    assert _render(char, vertical_font(font)) != _render(char, font)


def test_choonpu_is_drawn_differently_in_vertical(qapp):
    font = QFont("Noto Sans CJK JP")
    font.setPixelSize(40)
    assert _render("ー", vertical_font(font)) != _render("ー", font)


def test_vertical_toggle_lays_out_right_to_left_columns(overlay, qtbot):
    overlay.set_anchor(QRect(100, 100, 120, 200), SCREEN)
    overlay.show_result("今日はいい天気ですね。\n散歩しよう", "0.42 s")
    qtbot.mouseClick(overlay.layout_button, Qt.MouseButton.LeftButton)
    assert overlay.is_vertical() and overlay.layout_button.text() == "Horizontal"
    assert overlay.stack.currentWidget() is overlay.painted_area
    cells = {c.index: c for c in overlay.painted.cells}
    assert overlay.painted.column_count() >= 2
    # characters run top to bottom within a column; the next line is the column to the LEFT
    assert (
        cells[1].rect.top() > cells[0].rect.top() and cells[1].rect.left() == cells[0].rect.left()
    )
    second_line = "今日はいい天気ですね。\n".__len__()
    assert cells[second_line].rect.right() < cells[0].rect.left()
    qtbot.mouseClick(overlay.layout_button, Qt.MouseButton.LeftButton)
    assert not overlay.is_vertical() and overlay.stack.currentWidget() is overlay.editor


def test_long_columns_wrap_and_closing_punctuation_never_starts_a_column(qapp):
    view = PaintedTextView()
    view.set_column_length(5)
    view.set_content("あいうえお。かきくけこ", vertical=True)
    cells = {c.index: c for c in view.cells}
    assert cells[5].line == cells[4].line  # 。 hangs at the end of the first column
    assert cells[6].line == cells[0].line + 1
    assert view.sizeHint().width() > 0 and view.sizeHint().height() > 0


def test_latin_is_turned_sideways_in_vertical_text(qapp):
    view = PaintedTextView()
    view.set_content("第3話ABC", vertical=True)
    sideways = {c.char: c.sideways for c in view.cells}
    assert sideways["A"] and sideways["3"] and not sideways["第"]


# --- the dictionary hook ---------------------------------------------------------------------------


def _editor_point(overlay, index: int) -> QPoint:
    cursor = QTextCursor(overlay.editor.document())
    cursor.setPosition(index)
    left = overlay.editor.cursorRect(cursor)
    cursor.setPosition(index + 1)
    right = overlay.editor.cursorRect(cursor)
    return QPoint((left.left() + right.left()) // 2, left.center().y())


def test_hovering_a_character_emits_word_hovered(overlay, qtbot):
    point = _editor_point(overlay, 3)  # は
    with qtbot.waitSignal(overlay.word_hovered, timeout=1000) as hovered:
        qtbot.mouseMove(overlay.editor.viewport(), point)
    text, index, global_pos = hovered.args
    assert text == TEXT and index == 3
    assert global_pos == overlay.editor.viewport().mapToGlobal(point)
    # past the end of the line there is no character: the popup is told to go away
    with qtbot.waitSignal(overlay.word_left, timeout=1000):
        qtbot.mouseMove(
            overlay.editor.viewport(), QPoint(overlay.editor.viewport().width() - 3, point.y())
        )


def test_click_trigger_ignores_hover_and_reports_clicks(overlay, qtbot):
    overlay.pointer.trigger = lambda: "click"
    seen = []
    overlay.word_hovered.connect(lambda text, index, pos: seen.append(index))
    point = _editor_point(overlay, 5)
    qtbot.mouseMove(overlay.editor.viewport(), point)
    assert seen == []
    qtbot.mouseClick(overlay.editor.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert seen == [5]


def test_hover_in_vertical_layout_maps_to_the_character(overlay, qtbot):
    overlay.set_vertical(True)
    cell = next(c for c in overlay.painted.cells if c.index == 4)
    with qtbot.waitSignal(overlay.word_hovered, timeout=1000) as hovered:
        qtbot.mouseMove(overlay.painted, cell.rect.center().toPoint())
    assert hovered.args[1] == 4


def test_highlight_marks_the_looked_up_word(overlay):
    overlay.highlight(1, 2)
    selections = overlay.editor.extraSelections()
    assert len(selections) == 1
    assert (selections[0].cursor.selectionStart(), selections[0].cursor.selectionEnd()) == (1, 3)
    assert overlay.painted._highlight == (1, 2)
    overlay.highlight(0, 0)
    assert overlay.editor.extraSelections() == []


def test_furigana_toggle_uses_the_provider(overlay, qtbot):
    calls = []

    def provider(text):
        calls.append(text)
        return [
            ("「", None),
            ("今日", "きょう"),
            ("はいい", None),
            ("天気", "てんき"),
            ("ですね。」", None),
        ]

    overlay.configure("Noto Sans CJK JP", 18, False, furigana_provider=provider)
    overlay.show_result(TEXT, "0.4 s")
    assert overlay.furigana_button.isVisibleTo(overlay)
    qtbot.mouseClick(overlay.furigana_button, Qt.MouseButton.LeftButton)
    assert calls == [TEXT]
    marks = overlay.painted.ruby_marks
    assert [m.text for m in marks] == ["きょう", "てんき"]
    cells = {c.index: c for c in overlay.painted.cells}
    assert marks[0].rect.bottom() <= cells[1].rect.top() + 1  # above 今日 in horizontal text


def test_no_furigana_button_without_a_provider(overlay):
    assert not overlay.furigana_button.isVisibleTo(overlay)


def test_double_click_on_the_vertical_text_switches_to_editing_there(overlay, qtbot):
    overlay.set_vertical(True)
    cell = next(c for c in overlay.painted.cells if c.index == 4)
    qtbot.mouseDClick(overlay.painted, Qt.MouseButton.LeftButton, pos=cell.rect.center().toPoint())
    assert not overlay.is_vertical() and overlay.stack.currentWidget() is overlay.editor
    assert overlay.editor.textCursor().position() == 4
