"""Which character is under the pointer (app/hover/text.py): vertical and horizontal blocks, text
whose line count matches the detector's lines and text whose count does not."""

from __future__ import annotations

from app.hover.text import char_at, spread

# two columns of 5 letters, 20 px each, right to left (reading order)
COLUMNS = [(100, 0, 120, 100), (70, 0, 90, 100)]
# three rows of 10 letters, 20 px each, top to bottom
ROWS = [(0, 0, 200, 20), (0, 30, 200, 50), (0, 60, 120, 80)]


def at(boxes, vertical, text, x, y, reach=None):
    spot = char_at(boxes, vertical, spread(text, boxes, vertical), x, y, reach)
    return None if spot is None else spot.index


def test_vertical_columns_read_down_then_right_to_left():
    text = "あいうえお\nかきくけこ"
    assert at(COLUMNS, True, text, 110, 5) == 0  # top of the right column
    assert at(COLUMNS, True, text, 110, 45) == 2
    assert at(COLUMNS, True, text, 110, 99) == 4
    assert at(COLUMNS, True, text, 80, 5) == 5  # the left column comes second
    assert at(COLUMNS, True, text, 80, 65) == 8
    # between the columns: the nearer one
    assert at(COLUMNS, True, text, 96, 5) == 0
    assert at(COLUMNS, True, text, 93, 5) == 5


def test_horizontal_rows_read_left_to_right_then_down():
    text = "0123456789\nabcdefghij\nABCDEF"
    assert at(ROWS, False, text, 5, 10) == 0
    assert at(ROWS, False, text, 195, 10) == 9
    assert at(ROWS, False, text, 45, 40) == 12  # "c": the second row's third letter
    assert at(ROWS, False, text, 110, 70) == 25  # "F": the short last row's letters are 20 px too
    # the index is in the lines joined, the text without its line breaks
    joined = "".join(spread(text, ROWS, False))
    assert joined == text.replace("\n", "")
    assert joined[at(ROWS, False, text, 45, 40)] == "c"


def test_text_without_line_breaks_is_spread_over_the_lines_by_their_length():
    # the model wrote the block as one line: 26 letters over rows of 200, 200 and 120 px
    text = "0123456789abcdefghijABCDEF"
    assert spread(text, ROWS, False) == ["0123456789", "abcdefghij", "ABCDEF"]
    assert at(ROWS, False, text, 5, 40) == 10
    assert text[at(ROWS, False, text, 110, 70)] == "F"


def test_more_text_lines_than_boxes_are_aligned_by_length():
    # the detector saw one long column where the model wrote two lines (a column cut by ruby)
    column = [(0, 0, 20, 200)]
    text = "あいうえお\nかきくけこ"
    assert spread(text, column, True) == ["あいうえおかきくけこ"]
    assert at(column, True, text, 10, 5) == 0
    assert at(column, True, text, 10, 105) == 5  # half way down: the sixth of ten letters
    assert at(column, True, text, 10, 199) == 9


def test_fewer_text_lines_than_boxes_are_aligned_by_length():
    # three columns found, the model wrote the block as two lines of uneven length
    columns = [(200, 0, 220, 100), (170, 0, 190, 100), (140, 0, 160, 50)]
    text = "あいうえおかき\nくけこさしす"  # 13 letters over 100 + 100 + 50 px: 5, 5, 3
    lines = spread(text, columns, True)
    assert [len(line) for line in lines] == [5, 5, 3]
    assert "".join(lines) == text.replace("\n", "")
    assert "".join(lines)[at(columns, True, text, 150, 45)] == "す"
    assert "".join(lines)[at(columns, True, text, 180, 0)] == "か"


def test_a_line_never_starts_with_a_closing_mark():
    rows = [(0, 0, 100, 20), (0, 30, 100, 50)]
    lines = spread("あいうえお。かきくけ", rows, False)
    assert not lines[1].startswith("。")
    assert "".join(lines) == "あいうえお。かきくけ"


def test_nothing_beyond_reach_and_nothing_without_text():
    text = "0123456789\nabcdefghij\nABCDEF"
    assert at(ROWS, False, text, 125, 70) == 25  # a little past the short row's end: its last
    assert at(ROWS, False, text, 150, 70, reach=20) is None  # a letter and more past it: none
    assert at(ROWS, False, text, 130, 70, reach=20) == 25
    assert at(ROWS, False, "", 5, 10) is None
    assert char_at(ROWS, False, ["a", "b"], 5, 10) is None  # lines and boxes do not pair up
    assert char_at([], False, [], 5, 10) is None
