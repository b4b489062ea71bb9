"""The overlay out of the way (#40 items 1 and 2): it covers neither the block read nor the next one
in reading order when the screen has room elsewhere; a vertical read is a tall, narrow card beside
its column, no wider than the room beside it, its text scrolling inside, and it shrinks back with
its text; each read opens in its own layout (the block's direction, else the setting) and the
Vertical toggle changes the read at hand only, in the overlay and through the app."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
import wired_app
from appcore_fakes import FakeRecognizer, FakeSession, make_selection
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QImage

from app.capture.nearby import Nearby, nearby
from app.ui.overlay import Overlay
from app.ui.overlay_placement import GAP, MAX_WIDTH, placement, room_beside

env, make_app = wired_app.env, wired_app.make_app

pytestmark = pytest.mark.gui

SCREEN = QRect(0, 0, 1280, 800)
CARD = QSize(400, 180)
# nonsense of 128 characters, as random weights read every box
LONG = "".join(
    random.Random(40).choice("あいうえおかきくけこさしすせそ漢字読書天気") for _ in range(128)
)


def _free_anywhere(size: QSize, screen: QRect, blocked: list[QRect]) -> bool:
    """Brute force: is there a spot for a card of `size` on `screen` off every rect of `blocked`
    (each grown by GAP)? Every top-left pixel is tried, with a summed-area table."""
    taken = np.zeros((screen.height(), screen.width()), dtype=np.int32)
    for r in blocked:
        r = r.adjusted(-GAP, -GAP, GAP, GAP).intersected(screen)
        taken[r.top() : r.bottom() + 1, r.left() : r.right() + 1] = 1
    sums = np.pad(taken.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    w, h = size.width(), size.height()
    inside = sums[h:, w:] - sums[:-h, w:] - sums[h:, :-w] + sums[:-h, :-w]
    return bool((inside == 0).any())


def test_the_card_leaves_the_block_read_and_the_next_clear():
    # a balloon read near the page's right edge; the next one (reading right to left) stands
    # where the card went, left of it: the card goes below the balloon instead
    box, following = QRect(1000, 100, 120, 300), QRect(600, 120, 300, 320)
    card = QRect(placement(box, CARD, SCREEN, [box, following]), CARD)
    assert SCREEN.contains(card)
    assert not card.intersects(box) and not card.intersects(following), card
    assert card.top() > box.bottom()  # the nearest free side
    # a game line at the bottom whose next text is above it: the card goes above that one
    line, above = QRect(100, 600, 900, 60), QRect(100, 380, 900, 150)
    card = QRect(placement(line, CARD, SCREEN, [above]), CARD)
    assert SCREEN.contains(card) and not card.intersects(line) and not card.intersects(above)
    # with no room anywhere off both, the read box is still never covered
    wide = QRect(0, 0, 1280, 560)
    card = QRect(placement(line, CARD, SCREEN, [wide]), CARD)
    assert not card.intersects(line) and SCREEN.contains(card)


def test_the_card_finds_room_wherever_the_screen_has_it():
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        rects = []
        for _ in range(3):  # the box read, the read block around it, the next block
            w, h = rng.randint(40, 700), rng.randint(40, 500)
            rects.append(QRect(rng.randint(0, 1280 - w), rng.randint(0, 800 - h), w, h))
        box, keep = rects[0], rects[1:]
        size = QSize(rng.randint(300, 520), rng.randint(100, 400))
        if not _free_anywhere(size, SCREEN, rects):
            continue
        checked += 1
        card = QRect(placement(box, size, SCREEN, keep), size)
        assert SCREEN.contains(card), (box, keep, card)
        assert not any(card.intersects(r) for r in rects), (box, keep, card)
    assert checked >= 30  # most layouts leave room somewhere


def test_nearby_names_the_block_read_the_next_one_and_its_direction():
    blocks = [((900, 50, 80, 300), True), ((700, 60, 90, 280), True), ((100, 500, 600, 60), False)]
    around = nearby((905, 60, 70, 200), blocks)  # a box dragged inside the first balloon
    assert around.keep_clear == ((900, 50, 80, 300), (700, 60, 90, 280)) and around.vertical
    last = nearby((90, 495, 620, 70), blocks)
    assert last.keep_clear == ((100, 500, 600, 60),) and last.vertical is False
    assert nearby((0, 0, 50, 50), blocks) == Nearby()  # no block under the box: nothing known
    halved = last.mapped(lambda r: tuple(v // 2 for v in r))
    assert halved.keep_clear == ((50, 250, 300, 30),) and halved.vertical is False


@pytest.fixture
def overlay(qtbot):
    o = Overlay()
    qtbot.addWidget(o)
    o.configure("Noto Sans CJK JP", 18, True)  # "Vertical layout by default" on
    return o


def test_a_vertical_read_is_a_tall_narrow_card_beside_its_column(overlay):
    screen = QRect(0, 0, 800, 800)
    column = QRect(330, 60, 60, 320)  # 390 px free on its right
    overlay.set_anchor(column, screen)
    overlay.show_result(LONG + LONG[:72], "0.42 s")
    card = overlay.geometry()
    assert overlay.is_vertical() and screen.contains(card)
    assert card.width() <= room_beside(column, screen) < MAX_WIDTH
    assert card.height() > card.width()  # tall and narrow: longer columns, not more of them
    assert card.right() < column.left() or card.left() > column.right()  # beside the column
    assert overlay.painted_area.horizontalScrollBar().maximum() == 0  # all of it in view


def test_a_vertical_card_is_as_wide_as_the_side_free_of_the_next_block(overlay):
    # a page's first balloon near its right edge, the next one just left of it (as on 002a)
    screen = QRect(0, 0, 1600, 1176)
    box, following = QRect(1040, 32, 80, 180), QRect(956, 64, 61, 109)
    overlay.set_anchor(box, screen, Nearby((box.getRect(), following.getRect()), True))
    overlay.show_result(LONG, "0.42 s")
    card = overlay.geometry()
    assert card.left() > box.right() and screen.contains(card)  # beside the column, on the right
    assert not card.intersects(following)
    assert card.width() <= room_beside(box, screen, [following]) == 1600 - 1120 - 2 * GAP
    dragged = QRect(1050, 60, 40, 100)  # a box dragged inside the balloon: the balloon counts
    assert room_beside(dragged, screen, [box, following]) == room_beside(box, screen, [following])


def test_long_vertical_text_scrolls_inside_and_the_card_shrinks_back(overlay, qtbot):
    screen = QRect(0, 0, 1920, 1080)
    column = QRect(1500, 100, 70, 400)
    overlay.set_anchor(column, screen)
    overlay.show_result("\n".join([LONG] * 8), "0.42 s")  # more than a screen of columns
    card = overlay.geometry()
    assert screen.contains(card) and not card.intersects(column)
    assert card.width() <= MAX_WIDTH
    bar = overlay.painted_area.horizontalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()  # scrolls; starts at the first column
    first = next(c for c in overlay.painted.cells if c.index == 0)
    viewport = overlay.painted_area.viewport()
    at = overlay.painted.mapTo(viewport, first.rect.center().toPoint())
    assert viewport.rect().contains(at)  # the first column is the one in view
    # the next read is short: the card is the size it would be for that text alone
    overlay.set_anchor(column, screen)
    overlay.show_result("短い", "0.42 s")
    fresh = Overlay()
    qtbot.addWidget(fresh)
    fresh.configure("Noto Sans CJK JP", 18, True)
    fresh.set_anchor(column, screen)
    fresh.show_result("短い", "0.42 s")
    assert overlay.size() == fresh.size() and overlay.width() < card.width()


def test_each_read_opens_in_its_own_layout(qtbot):
    overlay = Overlay()
    qtbot.addWidget(overlay)
    overlay.configure("Noto Sans CJK JP", 18, False)  # the setting: horizontal
    overlay.set_anchor(QRect(100, 100, 120, 300), SCREEN)
    overlay.show_result("縦書きの吹き出し", "0.42 s")
    qtbot.mouseClick(overlay.layout_button, Qt.MouseButton.LeftButton)  # this read as columns
    assert overlay.is_vertical()
    overlay.set_anchor(QRect(100, 600, 900, 60), SCREEN)  # the next read: a game line
    overlay.show_result("横書きの台詞です", "0.42 s")
    assert not overlay.is_vertical() and overlay.stack.currentWidget() is overlay.editor
    assert overlay.layout_button.text() == "Vertical"


def test_a_read_opens_in_its_blocks_direction_and_the_toggle_changes_only_it(qtbot):
    overlay = Overlay()
    qtbot.addWidget(overlay)
    overlay.configure("Noto Sans CJK JP", 18, False)
    overlay.set_anchor(QRect(900, 100, 80, 300), SCREEN, Nearby(vertical=True))
    overlay.show_result("縦書きの吹き出し", "0.42 s")
    assert overlay.is_vertical() and overlay.stack.currentWidget() is overlay.painted_area
    qtbot.mouseClick(overlay.layout_button, Qt.MouseButton.LeftButton)
    assert not overlay.is_vertical()  # the read at hand
    overlay.set_anchor(QRect(900, 100, 80, 300), SCREEN, Nearby(vertical=True))
    overlay.show_result("次の吹き出し", "0.42 s")
    assert overlay.is_vertical()  # the toggle did not carry over
    overlay.configure("Noto Sans CJK JP", 18, True)  # setting on: a horizontal block stays so
    overlay.set_anchor(QRect(100, 600, 900, 60), SCREEN, Nearby(vertical=False))
    overlay.show_result("横書き", "0.42 s")
    assert not overlay.is_vertical()
    overlay.set_anchor(QRect(100, 600, 900, 60), SCREEN)  # direction unknown: the setting
    overlay.show_result("横書き", "0.42 s")
    assert overlay.is_vertical()


# --- through the app -------------------------------------------------------------------------------


def read(app, qtbot, selection):
    app.reads.last_latency = None
    app.handle_command("capture")
    FakeSession.started[-1].select(selection)
    qtbot.waitUntil(lambda: app.reads.last_latency is not None, timeout=5000)


def test_after_a_vertical_read_the_next_read_follows_the_setting(make_app, qtbot):
    app = make_app(FakeRecognizer("今日は天気"))
    assert not app.settings.get("overlay/vertical")
    read(app, qtbot, make_selection(box=(10, 20, 60, 150)))
    qtbot.mouseClick(app.overlay.layout_button, Qt.MouseButton.LeftButton)
    assert app.overlay.is_vertical()
    read(app, qtbot, make_selection(box=(10, 20, 200, 30)))  # a horizontal game line
    assert not app.overlay.is_vertical()
    assert app.overlay.stack.currentWidget() is app.overlay.editor
    # a selection that knows its block: its direction, and the next block left clear
    following = (80, 20, 150, 150)
    selection = make_selection(box=(10, 20, 60, 150))
    selection = type(selection)(
        **{**selection.__dict__, "nearby": Nearby(((10, 20, 60, 150), following), True)}
    )
    read(app, qtbot, selection)
    assert app.overlay.is_vertical()
    assert not app.overlay.geometry().intersects(QRect(*following))
    assert app.capture.last_region.nearby.keep_clear[1] == following  # re-scan keeps it


def test_a_watched_region_keeps_its_overlay_beside_it(make_app, qtbot, monkeypatch):
    import app.reading.watch as watch_module
    from app.capture.region import Region

    monkeypatch.setattr(watch_module, "app_windows_over", lambda rect, exclude=None: False)
    recognizer = FakeRecognizer(LONG)
    app = make_app(recognizer)
    app.settings.set("overlay/vertical", True)
    app.configure_overlay()
    frame = {"n": 0}

    def grab(name, box, desktop):  # a light line with a few dark marks
        w, h = box[2], box[3]
        bgra = np.full((h, w, 4), 235, dtype=np.uint8)
        bgra[40:64, 20 : 20 + 30 * frame["n"] : 2, :3] = 20
        return QImage(bgra.tobytes(), w, h, w * 4, QImage.Format.Format_RGB32).copy()

    app.capture.route.grab_box = grab
    region = Region("fake-0", (10, 20, 200, 120), (10, 20, 200, 120), (10, 20, 200, 120))
    app.watch_control.watch(region, interval_ms=60_000)
    app.watch_control.watcher.frame.hide()
    app.watch_control.watcher.tracker.interval_s = 0.5
    app.watch_control.watcher._clock = itertools.count(0.0, 0.5).__next__
    try:
        for n in (1, 1, 1):
            frame["n"] = n
            app.watch_control.watcher.tick()
        qtbot.waitUntil(lambda: app.overlay.text() == LONG, timeout=5000)
        card, watched = app.overlay.geometry(), QRect(*region.logical_rect)
        assert app.overlay.isVisible() and not card.intersects(watched)
        assert app.overlay.is_vertical() and card.width() <= MAX_WIDTH
    finally:
        app.watch_control.stop()
