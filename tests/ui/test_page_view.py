"""Read the whole screen: the page read in the OCR worker, its blocks as boxes over the frozen
screen (app/ui/page_view.py), hover for the dictionary, a click for the overlay."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import wired_app
from appcore_fakes import FakeRecognizer, FakeResult
from PIL import Image
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QImage

from app.capture import Capture, ScreenInfo
from app.ui.page_view import PageView, char_index

env, make_app = wired_app.env, wired_app.make_app  # the wired app's fixtures

pytestmark = pytest.mark.gui

PAGE = Path(__file__).resolve().parents[1] / "data" / "pages" / "001b.jpg"


class PageRecognizer(FakeRecognizer):
    """One result per crop, named by the crop's size; remembers the threads it ran on."""

    def __init__(self):
        super().__init__()
        self.threads = set()

    def read(self, images, max_new_tokens: int = 128, num_beams: int = 1):
        self.threads.add(threading.current_thread().name)
        return [FakeResult(f"読{i.width}x{i.height}", [5]) for i in images]


def page_captures():
    rgb = Image.open(PAGE).convert("RGB")
    data = rgb.convert("RGBA").tobytes("raw", "BGRA")
    image = QImage(data, rgb.width, rgb.height, rgb.width * 4, QImage.Format.Format_RGB32).copy()
    screen = ScreenInfo("page-0", (0, 0, rgb.width, rgb.height), (0, 0, rgb.width, rgb.height), 1.0)
    return {"page-0": Capture(screen, image)}


def test_the_whole_screen_is_read_in_the_worker_and_a_block_opens_in_the_overlay(
    make_app, qtbot, tmp_path
):
    rec = PageRecognizer()
    app = make_app(recognizer=rec, grab_screens=page_captures)
    progress = []
    app.worker.page_progress.connect(lambda rid, done, total: progress.append((done, total)))
    # WHEN "Read the whole screen" is chosen (tray or window)
    with qtbot.waitSignal(app.worker.page_finished, timeout=60_000) as finished:
        app.views[0].page_requested.emit()
        view = app.page.view
        assert view is not None and view.isVisible()
    record = finished.args[1]
    # THEN the model ran in the worker thread, never on the GUI thread, with a progress bar
    assert rec.threads and threading.main_thread().name not in rec.threads
    assert progress[0][0] == 0 and progress[-1][0] == progress[-1][1] == len(record["blocks"])
    assert len(view.blocks) == len(record["blocks"]) >= 5
    view.resize(827, 1170)
    view.grab().save(str(tmp_path / "page-view.png"))
    # hovering a box asks the dictionary about a character of its text
    block = view.blocks[0]
    x0, y0, x1, y1 = block["box"]
    with qtbot.waitSignal(view.word_hovered, timeout=2000) as hovered:
        qtbot.mouseMove(view, QPoint((x0 + x1) // 2, (y0 + y1) // 2))
    text, index, _pos = hovered.args
    assert text == block["text"] and 0 <= index < len(text)
    # a click on it closes the page and shows its text in the overlay, kept in the history
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint((x0 + x1) // 2, (y0 + y1) // 2))
    qtbot.waitUntil(lambda: app.overlay.isVisible() and app.overlay.text() == block["text"])
    assert app.page.view is None
    qtbot.waitUntil(lambda: [e.text for e in app.history.entries()] == [block["text"]])


def test_esc_closes_the_page_and_a_late_result_is_dropped(make_app, qtbot):
    rec = PageRecognizer()
    gate = threading.Event()
    original = rec.read

    def slow(images, **kw):
        gate.wait(10)
        return original(images, **kw)

    rec.read = slow
    app = make_app(recognizer=rec, grab_screens=page_captures)
    app.views[0].page_requested.emit()
    view = app.page.view
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert app.page.view is None
    with qtbot.waitSignal(app.worker.page_finished, timeout=60_000):
        gate.set()
    assert app.page.view is None and not app.overlay.isVisible()


def test_a_failed_page_read_says_so_on_the_page(make_app, qtbot):
    rec = PageRecognizer()
    rec.read = lambda images, **kw: (_ for _ in ()).throw(RuntimeError("boom"))
    app = make_app(recognizer=rec, grab_screens=page_captures)
    with qtbot.waitSignal(app.worker.failed, timeout=60_000):
        app.views[0].page_requested.emit()
    view = app.page.view
    assert view is not None and "failed" in view.status.text() and "boom" in view.status.text()
    assert not view.progress.isVisible()
    view.close()


def columns(*boxes) -> list:
    return [[[x0, y0], [x1, y0], [x1, y1], [x0, y1]] for x0, y0, x1, y1 in boxes]


def test_char_index_follows_columns_right_to_left():
    block = {
        "text": "あいうえおかきくけこさ",
        "vertical": True,
        "lines": ["あいうえお", "かきくけこさ"],
        "lines_coords": columns([100, 0, 120, 100], [70, 0, 90, 100]),  # right column first
    }
    assert char_index(block, 110, 5) == 0
    assert char_index(block, 110, 95) == 4
    assert char_index(block, 80, 5) == 5
    assert char_index(block, 80, 99) == 10
    empty = {"text": "", "vertical": True, "lines": [], "lines_coords": [], "box": [0, 0, 1, 1]}
    assert char_index(empty, 0, 0) == 0


def vertical_block_view(qtbot) -> PageView:
    """A page view at scale 1 showing one vertical block of two columns (right: あ-お, left: か-こ)."""
    view = PageView(next(iter(page_captures().values())))
    qtbot.addWidget(view)
    view.resize(view.capture.image.width(), view.capture.image.height())  # scale 1
    block = {
        "box": [60, 0, 130, 100],
        "text": "あいうえおかきくけこ",
        "vertical": True,
        "lines": ["あいうえお", "かきくけこ"],
        "lines_coords": columns([100, 0, 120, 100], [70, 0, 90, 100]),
        "ms": 1.0,
    }
    view.set_record({"blocks": [block]})
    return view


def test_the_popup_is_placed_beside_the_hovered_column(qtbot):
    """The page view answers line_at as the overlay does (the app's one popup asks it)."""
    from PySide6.QtCore import QPointF

    view = vertical_block_view(qtbot)
    assert view.line_at(0) == (QRect(), False)  # nothing hovered
    view._hovered = view.block_at(QPointF(110, 50))
    right, vertical = view.line_at(2)
    left, _ = view.line_at(7)
    origin = view.mapToGlobal(QPoint(0, 0))
    assert vertical
    assert right.translated(-origin) == QRect(100, 0, 20, 100)
    assert left.translated(-origin) == QRect(70, 0, 20, 100)
