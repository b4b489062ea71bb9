"""The selection windows on Qt's offscreen platform, driven with qtbot, over a fake capture."""

from __future__ import annotations

import random

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QApplication, QWidget

from app.capture import Capture, ScreenInfo
from app.ui.selection import SelectionSession
from app.ui.selection_window import NOTHING_HERE, Selection, SelectionWindow

pytestmark = pytest.mark.gui


def noise_image(width: int, height: int, seed: int = 0) -> QImage:
    """Random pixels: any off-by-one in a crop shows up as a mismatch."""
    rng = random.Random(seed)
    data = rng.randbytes(width * height * 4)
    image = QImage(data, width, height, width * 4, QImage.Format.Format_RGB32).copy()
    return image


def fake_captures(scale: float = 1.0) -> dict[str, Capture]:
    """One capture per Qt screen, the image `scale` times the screen's logical size."""
    captures = {}
    for i, qscreen in enumerate(QGuiApplication.screens()):
        g = qscreen.geometry()
        w, h = round(g.width() * scale), round(g.height() * scale)
        info = ScreenInfo(
            qscreen.name(),
            (g.x(), g.y(), g.width(), g.height()),
            (g.x() + 5000, g.y() + 7, w, h),
            1.0,
        )
        captures[qscreen.name()] = Capture(info, noise_image(w, h, seed=i))
    return captures


def same_pixels(a: QImage, b: QImage) -> bool:
    fmt = QImage.Format.Format_RGB32
    return a.size() == b.size() and a.convertToFormat(fmt) == b.convertToFormat(fmt)


def live_selection_windows() -> list[QWidget]:
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, SelectionWindow)]


def drag(qtbot, window, start: QPoint, end: QPoint) -> None:
    qtbot.mousePress(window, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(window, QPoint((start.x() + end.x()) // 2, (start.y() + end.y()) // 2))
    qtbot.mouseMove(window, end)
    qtbot.mouseRelease(window, Qt.MouseButton.LeftButton, pos=end)


@pytest.fixture
def session(qtbot):
    sessions = []

    def make(captures=None, **kwargs):
        s = SelectionSession(captures or fake_captures(), **kwargs)
        sessions.append(s)
        s.start()
        qtbot.waitUntil(lambda: all(w.isVisible() for w in s.windows))
        return s

    yield make
    for s in sessions:
        s.cancel()


def test_one_frameless_window_per_screen_showing_the_frozen_image(session):
    # GIVEN a capture per screen WHEN the session starts
    captures = fake_captures()
    s = session(captures)
    # THEN one frameless, on-top window per screen covers that screen exactly
    assert len(s.windows) == len(captures)
    for window in s.windows:
        assert window.windowFlags() & Qt.WindowType.FramelessWindowHint
        assert window.windowFlags() & Qt.WindowType.WindowStaysOnTopHint
        assert window.geometry().getRect() == window.capture.screen.logical


def test_drag_gives_exact_box_and_crop(session, qtbot):
    # GIVEN a 1x screen whose capture is random noise, with a recognizable desktop origin
    captures = fake_captures()
    s = session(captures)
    window = s.windows[0]
    # WHEN the user drags from (30, 40) to (230, 90) (backwards from the bottom-right, to be sure)
    with qtbot.waitSignal(s.selected, timeout=2000) as blocker:
        drag(qtbot, window, QPoint(230, 90), QPoint(30, 40))
    sel: Selection = blocker.args[0]
    # THEN the box is in image pixels, the crop is exactly those pixels, the desktop box is offset
    capture = captures[sel.screen_name]
    assert sel.box_image_px == (30, 40, 200, 50)
    assert same_pixels(sel.image, capture.image.copy(30, 40, 200, 50))
    px, py = capture.screen.physical[:2]
    assert sel.box_desktop_px == (px + 30, py + 40, 200, 50)
    lx, ly = capture.screen.logical[:2]
    assert sel.logical_rect == (lx + 30, ly + 40, 200, 50)
    assert sel.released_at > 0
    # AND the windows are closed and deleted
    assert not s.is_open
    assert live_selection_windows() == []


def test_scale_is_measured_per_screen_from_image_and_widget_sizes(session, qtbot):
    # GIVEN a capture twice the widget's size (a 2x HiDPI screen, whatever Qt reports as dpr)
    captures = fake_captures(scale=2.0)
    s = session(captures)
    window = s.windows[0]
    with qtbot.waitSignal(s.selected, timeout=2000) as blocker:
        drag(qtbot, window, QPoint(10, 20), QPoint(60, 45))
    sel = blocker.args[0]
    # THEN the box and the crop are in physical (image) pixels; the logical rect stays logical
    assert sel.box_image_px == (20, 40, 100, 50)
    assert same_pixels(sel.image, captures[sel.screen_name].image.copy(20, 40, 100, 50))
    assert sel.logical_rect[2:] == (50, 25)


def test_drag_past_the_edge_is_clamped_to_the_screen(session, qtbot):
    captures = fake_captures()
    s = session(captures)
    window = s.windows[0]
    w, h = window.width(), window.height()
    with qtbot.waitSignal(s.selected, timeout=2000) as blocker:
        drag(qtbot, window, QPoint(w - 50, h - 30), QPoint(w + 200, h + 200))
    assert blocker.args[0].box_image_px == (w - 50, h - 30, 50, 30)


@pytest.mark.parametrize("how", ["escape", "right_click"])
def test_escape_or_right_click_cancels(session, qtbot, how):
    s = session()
    window = s.windows[0]
    selected = []
    s.selected.connect(selected.append)
    with qtbot.waitSignal(s.cancelled, timeout=2000):
        if how == "escape":
            qtbot.keyClick(window, Qt.Key.Key_Escape)
        else:
            qtbot.mouseClick(window, Qt.MouseButton.RightButton, pos=QPoint(100, 100))
    assert selected == []
    assert live_selection_windows() == []


def test_right_click_during_a_drag_cancels(session, qtbot):
    s = session()
    window = s.windows[0]
    qtbot.mousePress(window, Qt.MouseButton.LeftButton, pos=QPoint(10, 10))
    qtbot.mouseMove(window, QPoint(200, 200))
    with qtbot.waitSignal(s.cancelled, timeout=2000):
        qtbot.mousePress(window, Qt.MouseButton.RightButton, pos=QPoint(200, 200))


@pytest.mark.parametrize("end", [QPoint(103, 200), QPoint(200, 103), QPoint(100, 100)])
def test_box_under_4x4_on_noise_is_a_click_that_finds_nothing_and_says_so(session, qtbot, end):
    # GIVEN a noise screen (nothing a click could mean) WHEN the user drags less than 4 px
    s = session()
    selected, cancelled = [], []
    s.selected.connect(selected.append)
    s.cancelled.connect(lambda: cancelled.append(True))
    drag(qtbot, s.windows[0], QPoint(100, 100), end)
    # THEN once the screen's blocks are in, nothing is selected, the selection stays open for a
    # drag, and the window says why
    qtbot.waitUntil(lambda: s.windows[0].blocks is not None, timeout=60_000)
    qtbot.wait(50)
    assert selected == [] and cancelled == []
    assert s.is_open
    assert s.windows[0].notice == NOTHING_HERE


def test_box_of_exactly_4x4_is_a_selection(session, qtbot):
    s = session()
    with qtbot.waitSignal(s.selected, timeout=2000) as blocker:
        drag(qtbot, s.windows[0], QPoint(100, 100), QPoint(104, 104))
    assert blocker.args[0].box_image_px == (100, 100, 4, 4)


def test_a_new_session_cancels_the_open_one(session, qtbot):
    first = session()
    with qtbot.waitSignal(first.cancelled, timeout=2000):
        second = session()
    assert second.is_open and not first.is_open
    assert set(live_selection_windows()) == set(second.windows)


def test_twenty_sessions_in_a_second_leave_one_set_of_windows(session, qtbot):
    # GIVEN twenty triggers within one second (each a fresh capture and session)
    ends = []
    for _ in range(20):
        s = session()
        s.cancelled.connect(lambda: ends.append("cancelled"))
        qtbot.wait(20)
    # THEN the first nineteen were cancelled and only the last one's windows are alive
    assert ends.count("cancelled") == 19
    assert set(live_selection_windows()) == set(s.windows)
    assert len(s.windows) == len(QGuiApplication.screens())


def test_painting_dims_outside_the_box_and_keeps_the_box_clear(session, qtbot):
    # GIVEN a uniform mid-grey capture so brightness is easy to compare
    g = QGuiApplication.primaryScreen().geometry()
    image = QImage(g.width(), g.height(), QImage.Format.Format_RGB32)
    image.fill(0xFF808080)
    info = ScreenInfo(QGuiApplication.primaryScreen().name(), g.getRect(), g.getRect(), 1.0)
    s = session({info.name: Capture(info, image)})
    window = s.windows[0]
    # WHEN a drag is in progress
    qtbot.mousePress(window, Qt.MouseButton.LeftButton, pos=QPoint(100, 300))
    qtbot.mouseMove(window, QPoint(400, 500))
    shot = window.grab().toImage()
    # THEN inside the box the frozen pixels show unchanged; outside they are dimmed
    assert shot.pixelColor(250, 400).name() == "#808080"
    assert shot.pixelColor(600, 650).lightness() < 0x80 * 0.7


def test_empty_captures_are_refused():
    with pytest.raises(ValueError, match="at least one"):
        SelectionSession({})


def test_a_session_starts_once(session):
    s = session()
    with pytest.raises(RuntimeError, match="starts once"):
        s.start()


def _scan_captures(name: str = "001a.jpg"):
    """One capture per screen, the first showing a real scan at its top left (the rest noise)."""
    import numpy as np
    from PIL import Image

    from tests.blocks.blocks_pages import PAGES

    captures = fake_captures()
    screen_name, capture = next(iter(captures.items()))
    w, h = capture.image.width(), capture.image.height()
    screen = Image.new("RGB", (w, h), "white")
    screen.paste(Image.open(PAGES / name).convert("RGB"), (0, 0))
    bgra = np.asarray(screen.convert("RGBA"))[..., [2, 1, 0, 3]].copy()
    image = QImage(bgra.data, w, h, 4 * w, QImage.Format.Format_RGB32).copy()
    captures[screen_name] = Capture(capture.screen, image)
    return captures, screen_name, np.asarray(screen)


@pytest.fixture
def held_back(monkeypatch):
    """The windows' detector runs, held until the test runs them: [(future, function, args)]."""
    from concurrent.futures import Future

    from app.ui import selection_window

    runs: list = []

    def hold(function, *args):
        runs.append((Future(), function, args))
        return runs[-1][0]

    monkeypatch.setattr(selection_window, "_in_background", hold)
    return runs


def _run_of(runs, rgb):
    """The held run over the screen showing `rgb`."""
    return next(r for r in runs if r[2][0].shape[:2] == rgb.shape[:2])


def test_a_click_before_the_blocks_are_in_waits_for_them_and_reads_the_block_at_its_point(
    session, qtbot, held_back
):
    """The detector runs over the frozen screen once, as the window shows; a click that comes
    before its answer says "finding text…" and waits (no second finder meanwhile); with the
    answer, the click is taken where it was: the block there, read as a whole page reads it."""
    from app.blocks import block_at, find_blocks
    from app.page.read import crop_box
    from app.ui.selection_window import FINDING

    captures, name, rgb = _scan_captures()
    s = session(captures)
    window = next(w for w in s.windows if w.capture.screen.name == name)
    qtbot.waitUntil(lambda: len(held_back) == len(s.windows))
    future, function, (bgra, bgr) = _run_of(held_back, rgb)
    assert function is find_blocks and bgr is True and (bgra[..., 2::-1] == rgb).all()
    assert bgra.flags.owndata  # not a view of the window's image, which may go mid-run
    selected = []
    s.selected.connect(selected.append)
    # WHEN the user clicks on a balloon of the scan (001a's first column) before the answer
    x, y = 704, 120
    drag(qtbot, window, QPoint(x, y), QPoint(x, y))
    qtbot.wait(50)
    # THEN it waits and says so, and nothing else looks for text
    assert selected == [] and s.is_open and window.notice == FINDING
    assert len(held_back) == len(s.windows)
    # WHEN the blocks come in
    blocks = find_blocks(bgra, bgr=True)
    future.set_result(blocks)
    # THEN the click is read: the block at its point, with a whole page's crop margin
    qtbot.waitUntil(lambda: bool(selected), timeout=5000)
    (selection,) = selected
    block = block_at(blocks, x, y)
    assert block is not None and selection.how == "click"
    x0, y0, x1, y1 = crop_box(block, rgb.shape[1], rgb.shape[0])
    assert selection.box_image_px == (x0, y0, x1 - x0, y1 - y0)
    # ... and the read knows the screen's blocks (the overlay keeps the block and the next clear)
    assert selection.nearby.vertical is True and len(selection.nearby.keep_clear) == 2


def test_the_resting_pointer_proposes_the_block_under_it_and_nothing_off_text(
    session, qtbot, held_back
):
    from PySide6.QtCore import QPointF

    from app.blocks import find_blocks

    captures, name, rgb = _scan_captures("002b.jpg")
    s = session(captures)
    window = next(w for w in s.windows if w.capture.screen.name == name)
    qtbot.waitUntil(lambda: len(held_back) == len(s.windows))
    future, _, (bgra, _) = _run_of(held_back, rgb)
    # before the blocks are in, a resting pointer proposes nothing
    window._mouse = QPointF(740, 160)
    window._propose_under_mouse()
    assert window.proposal is None
    future.set_result(find_blocks(bgra, bgr=True))
    qtbot.waitUntil(lambda: window.blocks is not None, timeout=5000)
    # once they are, the block under the resting pointer is proposed (asked again at once)
    proposal = window.proposal
    assert proposal is not None
    x0, y0, x1, y1 = proposal.box
    assert x0 <= 740 < x1 and y0 <= 160 < y1
    assert window._proposal_widget() is not None  # drawn dashed while the pointer rests
    # every block of the screen is known to the read's Nearby, in reading order
    assert [r for r, _ in window.screen_blocks][0] == (x0, y0, x1 - x0, y1 - y0)
    window._mouse = QPointF(354, 114)  # drawing (an art point of the truth), away from every block
    window._proposal_for = None
    window._propose_under_mouse()
    assert window.proposal is None


def test_a_detector_that_fails_leaves_the_drag_and_says_so_on_a_click(session, qtbot, held_back):
    from app.ui.selection_window import NOT_FOUND

    s = session()
    window = s.windows[0]
    qtbot.waitUntil(lambda: len(held_back) == len(s.windows))
    held_back[0][0].set_exception(RuntimeError("no model file"))
    qtbot.waitUntil(lambda: window.blocks == [], timeout=5000)
    drag(qtbot, window, QPoint(50, 50), QPoint(50, 50))
    assert window.notice == NOT_FOUND and s.is_open
    with qtbot.waitSignal(s.selected, timeout=2000):
        drag(qtbot, window, QPoint(100, 100), QPoint(160, 140))


def test_a_window_closed_before_its_run_starts_drops_the_run(session, qtbot, held_back):
    s = session()
    qtbot.waitUntil(lambda: len(held_back) == len(s.windows))
    s.cancel()
    assert all(future.cancelled() for future, _, _ in held_back)
