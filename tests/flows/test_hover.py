"""Hover to read's controller (app/flows/hover.py) on Qt's offscreen platform: the real detector and
popup dictionary over a drawn screen handed to the app as its grab, a stand-in engine, the pointer
and the key given by the test. How its reads share the worker's one waiting slot with a box's,
a block read again once its pixels change, typing ends it; where things are on mixed-scale
screens (app/hover/find.py). The whole of it on a desktop: tests/hover/test_hover_xvfb.py."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication, QImage

import app.flows.capture as capture_flow_module
from app.application import Application, Parts
from app.capture.models import ScreenInfo
from app.capture.region import Region
from app.engines.worker import OcrWorker
from app.flows.dictionary_hook import DictionaryHook
from app.history import History
from app.hover.bench import KnownText, text_screen
from app.hover.find import around, cut_by, logical_to_physical, to_logical, to_physical
from app.platform.qt_images import pil_to_qimage
from app.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # appcore_fakes, also in the child
from appcore_fakes import FakeSession, make_selection  # noqa: E402

BLOCKS = (
    (("今日はいい天気ですね。", "散歩に行きましょう。"), False, 60, 80, 30, (20, 20, 20), None),
    (("吾輩は猫である。", "名前はまだ無い。"), True, 640, 80, 32, (20, 20, 20), None),
)


class Gated(KnownText):
    """KnownText whose reads wait for `gate` while it is set up (a slow model)."""

    def __init__(self, drawn):
        super().__init__(drawn)
        self.gate: threading.Event | None = None
        self.started = threading.Event()

    def read(self, images, max_new_tokens: int = 128, num_beams: int = 1):
        self.started.set()
        if self.gate is not None:
            self.gate.wait(20)
        return super().read(images, max_new_tokens, num_beams)


@pytest.fixture
def hover_app(qtbot, tmp_path, monkeypatch, dictionary):
    """The app over a drawn screen (the offscreen screen's size), Hover to read driven by hand."""
    from app.ui.dictionary_popup_controller import DictionaryPopupController

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setattr(capture_flow_module, "REPAINT_MS", 0)
    monkeypatch.setattr(
        DictionaryHook, "make_controller", lambda self: DictionaryPopupController(dictionary)
    )
    g = QGuiApplication.primaryScreen().geometry()
    image, drawn = text_screen(g.width(), g.height(), blocks=BLOCKS)
    screen = {"picture": pil_to_qimage(image)}
    recognizer = Gated(drawn)
    settings = Settings(overrides={"anki/enabled": False})  # auto-copy on, as by default
    worker = OcrWorker(factory=lambda **_: recognizer)
    app = Application(
        settings,
        Parts(
            worker=worker,
            history=History(limit=50),
            grab_screens=lambda: {},
            grab_box=lambda name, image_box, desktop: screen["picture"].copy(*desktop),
            grab_region=lambda name, box: make_selection(box=box).image,
            selection_factory=FakeSession,
        ),
        use_tray=False,
    )
    pointer = {"at": QPoint(0, 0)}
    app.hover.pointer = lambda: QPoint(pointer["at"])
    with qtbot.waitSignal(worker.ready, timeout=10_000):
        app.start()
    app.window.hide()  # it would stand over the text (our windows are never read)
    qtbot.waitUntil(lambda: app.dictionary_hook.controller is not None, timeout=5000)
    app.dictionary_hook.controller.dictionary.prepare()
    app.dictionary_hook.controller._prepared_once = True
    app.drawn, app.recognizer, app.screen_picture, app.pointer = drawn, recognizer, screen, pointer
    yield app
    app.quit()
    worker.stop()


def point_at(app, block: int, word: str) -> None:
    app.pointer["at"] = QPoint(*app.drawn[block].where(word))


def marked(app) -> str:
    popup = app.dictionary_hook.controller.popup
    if not popup.isVisible() or popup.read is None:
        return ""
    text, start, length = popup.read
    return text[start : start + length]


@pytest.mark.gui
def test_the_word_under_the_pointer_then_another_of_the_same_block_without_a_read(hover_app, qtbot):
    app = hover_app
    QGuiApplication.clipboard().setText("mine")
    # GIVEN the pointer on 天 WHEN the key goes down THEN 天気's entry, from one read
    point_at(app, 0, "天気")
    app.hover.key_down()
    qtbot.waitUntil(lambda: marked(app) == "天気", timeout=60_000)
    assert app.dictionary_hook.controller.popup.result.entries[0].headword == "天気"
    assert app.recognizer.reads == ["今日はいい天気ですね。\n散歩に行きましょう。"]
    # WHEN the pointer moves to 散 THEN 散歩's, without reading again
    point_at(app, 0, "散歩")
    qtbot.waitUntil(lambda: marked(app).startswith("散歩"), timeout=10_000)
    assert len(app.recognizer.reads) == 1
    # AND Mine there makes the card of that text, with the block's picture
    assert (
        app.dictionary_hook.controller.popup.sentence
        == "今日はいい天気ですね。散歩に行きましょう。"
    )
    png, source = app.mining.context()
    assert png.startswith(b"\x89PNG") and source.startswith("Hayai · hover")
    # AND the read is in the history as source "hover", not in the overlay
    qtbot.waitUntil(lambda: len(app.history.entries()) == 1, timeout=5000)
    assert app.history.entries()[0].source == "hover"
    assert not app.overlay.isVisible()
    assert QGuiApplication.clipboard().text() == "mine"  # auto-copy is for the reads boxed


@pytest.mark.gui
def test_changed_pixels_are_read_again(hover_app, qtbot):
    app = hover_app
    point_at(app, 0, "天気")
    app.hover.key_down()
    qtbot.waitUntil(lambda: marked(app) == "天気", timeout=60_000)
    # WHEN the text on the screen changes under the block (a game's next line)
    image, _ = text_screen(
        app.screen_picture["picture"].width(),
        app.screen_picture["picture"].height(),
        blocks=(
            (("明日も天気になあれ。", "散歩に行きましょう。"),) + BLOCKS[0][1:],
            BLOCKS[1],
        ),
    )
    app.screen_picture["picture"] = pil_to_qimage(image)
    app.recognizer.drawn = [app.recognizer.drawn[0].__class__("明日も天気になあれ。\n散歩に行きましょう。", False, app.drawn[0].box, app.drawn[0].centres), app.drawn[1]]  # fmt: skip
    point_at(app, 0, "散歩")
    # THEN the pointer's next word finds the pixels changed: the block is found and read again
    qtbot.waitUntil(lambda: len(app.recognizer.reads) == 2, timeout=60_000)
    qtbot.waitUntil(lambda: marked(app).startswith("散歩"), timeout=60_000)
    assert app.dictionary_hook.controller.popup.read[0].startswith("明日も天気")


@pytest.mark.gui
def test_a_hover_read_never_pushes_out_a_box_read(hover_app, qtbot):
    app = hover_app
    recognizer = app.recognizer
    superseded = []
    app.worker.superseded.connect(superseded.append)
    # GIVEN the worker busy with a box's read and a second box's crop waiting behind it
    recognizer.gate = threading.Event()
    region = Region("fake-0", (20, 650, 40, 20), (20, 650, 40, 20), (20, 650, 40, 20))
    app.reads.submit(QImage(40, 20, QImage.Format.Format_RGB32), region, 0.0)
    assert recognizer.started.wait(5)
    app.reads.submit(QImage(300, 60, QImage.Format.Format_RGB32), region, 0.0)
    # WHEN the user holds the hover key over a block meanwhile (the overlay's "reading…" card
    # stands at the bottom, away from it)
    assert not app.overlay.frameGeometry().contains(QPoint(*app.drawn[0].where("天気")))
    point_at(app, 0, "天気")
    app.hover.key_down()
    qtbot.waitUntil(lambda: app.hover._area is not None, timeout=60_000)
    qtbot.wait(200)
    # THEN the hover read waits: the box's crop is still the one waiting
    assert superseded == []
    assert not any(p.hover for p in app.reads.pending.values())
    # WHEN the box reads are done THEN the box's text is the overlay's, then the hover read goes
    recognizer.gate.set()
    qtbot.waitUntil(lambda: marked(app) == "天気", timeout=60_000)
    assert superseded == []
    assert len(recognizer.reads) == 3
    assert app.overlay.isVisible()  # the second box's text, shown as any box's


@pytest.mark.gui
def test_typing_with_the_key_hides_the_popup_and_key_up_too_unless_pointer_in_it(hover_app, qtbot):
    app = hover_app
    popup = app.dictionary_hook.controller.popup
    assert not app.hover._timer.isActive()  # nothing looks at the pointer while the key is up
    point_at(app, 0, "天気")
    app.hover.key_down()
    assert app.hover._timer.isActive()
    qtbot.waitUntil(lambda: marked(app) == "天気", timeout=60_000)
    # another key while it is held: typing, not pointing
    app.hover.key_interrupted()
    assert not popup.isVisible() and not app.hover.held
    assert not app.hover._timer.isActive()
    # key down again on a read block: no new read; key up with the pointer in the popup keeps it
    app.hover.key_down()
    qtbot.waitUntil(lambda: marked(app) == "天気", timeout=60_000)
    assert len(app.recognizer.reads) == 1
    app.pointer["at"] = popup.frameGeometry().center()
    qtbot.wait(100)
    app.hover.key_up()
    assert popup.isVisible()
    # with the pointer on the text, key up hides it
    point_at(app, 0, "天気")
    app.hover.key_down()
    qtbot.waitUntil(lambda: marked(app) == "天気", timeout=60_000)
    app.hover.key_up()
    assert not popup.isVisible()
    assert not app.hover._timer.isActive()


@pytest.mark.gui
def test_a_block_under_our_popup_is_grabbed_again_without_it(hover_app, qtbot):
    app = hover_app
    popup = app.dictionary_hook.controller.popup
    # GIVEN the popup of a first word standing over the lower half of the vertical block
    point_at(app, 0, "天気")
    app.hover.key_down()
    qtbot.waitUntil(lambda: marked(app) == "天気", timeout=60_000)
    x0, y0, x1, y1 = app.drawn[1].box
    covered_from = (y0 + y1) // 2
    popup.move(x0 - 40, covered_from)
    assert popup.isVisible()
    # WHEN the pointer goes to the top of that block, beside the popup
    point_at(app, 1, "吾輩")
    # THEN the popup steps aside, the block is grabbed again and found with the letters that
    # were under it (painted over, they would be left out), and read
    qtbot.waitUntil(lambda: marked(app).startswith("吾輩"), timeout=60_000)
    found = app.hover.view.shown
    assert found.crop[1] <= y0 and found.crop[3] > covered_from + 64
    assert app.dictionary_hook.controller.popup.read[0] == "吾輩は猫である。名前はまだ無い。"


# --- where things are on mixed-scale screens ----------------------------------------------------

SCREENS_FILE = [
    {"name": "plain", "x": 0, "y": 0, "width": 800, "height": 600, "dpr": 1.0},
    {"name": "double", "x": 800, "y": 0, "width": 700, "height": 500, "dpr": 2.0},
]


@pytest.mark.gui
def test_on_a_2x_screen_beside_a_1x_one_the_word_and_the_popup_are_where_they_are(
    tmp_path, child, dictionary_index
):
    import json
    import os

    config = tmp_path / "screens.json"
    config.write_text(json.dumps({"screens": SCREENS_FILE}))
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={config}",
        PYTHONPATH=str(Path.cwd()),
        HAYAI_CONFIG_DIR=str(tmp_path / "cfg"),
        HAYAI_TEST_INDEX=str(dictionary_index),
    )
    out = child(Path(__file__), "hidpi", env=env, timeout_s=240).stdout
    result = json.loads(out.strip().splitlines()[-1])
    # the block drawn on the 2x screen, in logical px, and what the hover made of it
    bx0, by0, bx1, by1 = result["block_logical"]
    assert result["marked"] == "猫"
    assert result["read_text"] == "吾輩は猫である。名前はまだ無い。"
    # the grab was in that screen's physical px: the crop read is the block at twice its logical
    # size, give or take a letter (the crop's margin; the detector's edge of a 。)
    w, h = result["read_size"]
    assert abs(w - 2 * (bx1 - bx0)) <= 64 and abs(h - 2 * (by1 - by0)) <= 64
    # the popup's line is the block in logical px, and the popup stands beside it
    lx0, ly0, lx1, ly1 = result["line"]
    assert abs(lx0 - bx0) <= 16 and abs(ly0 - by0) <= 16
    assert abs(lx1 - bx1) <= 16 and abs(ly1 - by1) <= 16
    px0, py0, px1, py1 = result["popup"]
    assert px1 <= lx0 or px0 >= lx1 or py1 <= ly0 or py0 >= ly1  # never over the block
    assert result["reads"] == 1


def _hidpi() -> None:
    """The child of the 2x test: the app on the offscreen screens of SCREENS_FILE, the block
    drawn at twice its size on the 2x screen's picture, the pointer on 猫."""
    import json
    import os

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.dictionary import Dictionary
    from app.ui.dictionary_popup_controller import DictionaryPopupController

    qapp = QApplication([])
    screens = {s.name(): s.geometry() for s in qapp.screens()}
    double = screens["double"]
    image, drawn = text_screen(
        double.width(),
        double.height(),
        scale=2.0,
        blocks=(BLOCKS[1][:2] + (200, 60) + BLOCKS[1][4:],),
    )
    picture = pil_to_qimage(image)
    block = drawn[0]
    recognizer = KnownText(drawn, scale=2.0)
    dictionary = Dictionary(index_file=Path(os.environ["HAYAI_TEST_INDEX"]))
    DictionaryHook.make_controller = lambda self: DictionaryPopupController(dictionary)
    capture_flow_module.REPAINT_MS = 0
    sizes = []

    def grab_box(name, image_box, desktop):
        assert name == "double", name
        return picture.copy(*image_box)

    class Sized(KnownText):
        def read(self, images, max_new_tokens=128, num_beams=1):
            sizes.append(images[0].size)
            return super().read(images, max_new_tokens, num_beams)

    recognizer = Sized(drawn, scale=2.0)
    settings = Settings(overrides={"anki/enabled": False, "output/auto_copy": False})
    worker = OcrWorker(factory=lambda **_: recognizer)
    app = Application(settings, Parts(worker=worker, history=History(limit=5), grab_screens=lambda: {}, grab_box=grab_box), use_tray=False)  # fmt: skip
    cx, cy = block.where("猫")
    at = QPoint(double.x() + cx, double.y() + cy)
    app.hover.pointer = lambda: QPoint(at)
    app.start()
    app.window.hide()

    def go() -> None:
        controller = app.dictionary_hook.controller
        if controller is None or app.status.state != "ready":
            QTimer.singleShot(50, go)
            return
        controller.dictionary.prepare()
        controller._prepared_once = True
        app.hover.key_down()
        QTimer.singleShot(50, wait)

    def wait() -> None:
        popup = app.dictionary_hook.controller.popup
        if not (popup.isVisible() and popup.read):
            QTimer.singleShot(50, wait)
            return
        text, start, length = popup.read
        g, line = popup.frameGeometry(), app.hover.view.rect
        x0, y0, x1, y1 = block.box
        print(json.dumps({
            "marked": text[start : start + length],
            "read_text": text,
            "read_size": list(sizes[0]),
            "reads": len(sizes),
            "block_logical": [double.x() + x0, double.y() + y0, double.x() + x1, double.y() + y1],
            "line": [line.x(), line.y(), line.x() + line.width(), line.y() + line.height()],
            "popup": [g.x(), g.y(), g.x() + g.width(), g.y() + g.height()],
        }, ensure_ascii=False), flush=True)  # fmt: skip
        app.quit()

    QTimer.singleShot(0, go)
    qapp.exec()
    worker.stop()


if __name__ == "__main__":
    _hidpi()


# --- where things are on mixed-scale screens (no Qt) ----------------------------------------------

SCREENS = [
    ScreenInfo("left", (0, 0, 1000, 600), (0, 0, 1000, 600), 1.0),
    ScreenInfo("right", (1000, 0, 800, 500), (1000, 0, 1600, 1000), 2.0),
]


def test_points_and_boxes_between_logical_and_physical_pixels():
    # on the 2x screen, a logical point's offset from the screen's corner doubles
    assert to_physical(1100, 50, SCREENS) == (1200, 100)
    assert to_physical(10, 20, SCREENS) == (10, 20)
    assert to_physical(5000, 20, SCREENS) is None
    # a block found in physical px comes back to logical px on its screen
    assert to_logical((1200, 100, 1400, 300), SCREENS[1]) == (1100, 50, 1200, 150)
    # one of our windows, logical, is painted over where it is in physical px
    assert logical_to_physical((1100, 50, 1200, 150), SCREENS) == (1200, 100, 1400, 300)


def test_the_grab_around_the_pointer_stays_on_its_screen_and_reports_cut_blocks():
    right = SCREENS[1]
    assert around(1010, 20, (512, 320), right) == (1000, 0, 1512, 320)  # moved onto the screen
    assert around(2590, 990, (512, 320), right) == (2088, 680, 2600, 1000)
    area = (1200, 200, 1712, 520)
    assert cut_by((1300, 300, 1400, 400), area, right) == (False, False)
    assert cut_by((1202, 300, 1400, 400), area, right) == (True, False)  # runs on to the left
    assert cut_by((1300, 300, 1400, 519), area, right) == (False, True)
    # an edge that is the screen's cuts nothing
    assert cut_by((1000, 0, 1100, 100), (1000, 0, 1512, 320), right) == (False, False)
    # with the grab's pixels: a block whose margin reaches the edge over bare paper ends there;
    # one whose letters' ink reaches it runs on
    import numpy as np

    paper = np.full((320, 512, 4), 250, dtype=np.uint8)
    assert cut_by((1300, 300, 1400, 519), area, right, paper) == (False, False)
    inked = paper.copy()
    inked[318:, 120:160, :3] = 20  # a letter cut by the bottom edge, under the block
    assert cut_by((1300, 300, 1400, 519), area, right, inked) == (False, True)
    inked_elsewhere = paper.copy()
    inked_elsewhere[318:, 400:440, :3] = 20  # ink on that edge, but not along the block
    assert cut_by((1300, 300, 1400, 519), area, right, inked_elsewhere) == (False, False)


@pytest.mark.gui
def test_the_grab_is_seen_at_its_size_and_enlarged_only_for_small_letters(
    hover_app, qtbot, monkeypatch
):
    """The wait for a new block is mostly the detector's, whose time grows with the pixels: the
    grab is seen at its size (HOVER); where the letters under the pointer are small (or no block
    is there) it is found again enlarged as a page is (PARAMS), and the next grab starts there."""
    from app.blocks.params import HOVER, PARAMS

    app = hover_app
    seen = []
    find = app.hover.finder.find

    def spy(job, bgra, *params):
        seen.append(params[0] if params else PARAMS)
        find(job, bgra, *params)

    monkeypatch.setattr(app.hover.finder, "find", spy)
    # GIVEN letters of 30 px: found at the grab's size, once
    point_at(app, 0, "天気")
    app.hover.key_down()
    qtbot.waitUntil(lambda: marked(app) == "天気", timeout=60_000)
    assert seen == [HOVER]
    app.hover.key_up()
    # GIVEN letters of 12 px (a page shown small) beside them
    small = (
        (("今日はいい天気ですね。",), False, 60, 450, 12, (20, 20, 20), None),
        (("吾輩は猫である。",), False, 620, 450, 12, (20, 20, 20), None),
    )
    g = QGuiApplication.primaryScreen().geometry()
    image, drawn = text_screen(g.width(), g.height(), blocks=BLOCKS + small)
    app.screen_picture["picture"] = pil_to_qimage(image)
    app.recognizer.drawn = app.drawn = drawn
    # WHEN the key goes down on them THEN they are found again enlarged, and read
    point_at(app, 2, "天気")
    app.hover.key_down()
    qtbot.waitUntil(lambda: marked(app) == "天気", timeout=60_000)
    assert seen == [HOVER, HOVER, PARAMS]
    app.hover.key_up()
    # AND the next new block starts enlarged
    point_at(app, 3, "猫")
    app.hover.key_down()
    qtbot.waitUntil(lambda: marked(app) == "猫", timeout=60_000)
    assert seen == [HOVER, HOVER, PARAMS, PARAMS]


def test_a_key_that_cannot_be_listened_for_is_said_and_never_escapes_the_settings_slot(
    hover_app, monkeypatch
):
    # GIVEN a desktop whose keyboard listener fails with an error of its own (not a HotkeyError)
    from app.hotkey.hold import HeldKey

    def refused(self):
        raise RuntimeError("the X server refused the keyboard listener")

    monkeypatch.setattr(HeldKey, "start", refused)
    said = []
    monkeypatch.setattr(
        hover_app.toast, "show_message", lambda title, text, *_: said.append((title, text))
    )
    # WHEN Hover to read is turned on THEN the problem is kept and told, and nothing is listening
    hover_app.settings.set("hover/enabled", True)
    hover_app.hover.apply()
    assert "refused the keyboard listener" in hover_app.hover.problem
    assert said and "refused the keyboard listener" in said[-1][1]
    assert hover_app.hover.key is None


def test_a_hover_crop_is_the_crop_a_click_or_a_page_reads():
    # GIVEN a block of small letters (a margin of a quarter letter rounds below the page's 2 px)
    from app.blocks import Block
    from app.hover.find import Job, found_in
    from app.page.read import crop_box

    block = Block(box=(40, 30, 52, 90), vertical=True, lines=((40, 30, 52, 90),), font_size=5.0)
    screen = ScreenInfo("s", (0, 0, 200, 120), (0, 0, 200, 120), 1.0)
    job = Job(
        id=1,
        rect=(0, 0, 200, 120),
        screen=screen,
        image=QImage(200, 120, QImage.Format.Format_ARGB32),
        covered=[],
        grows=0,
        again=False,
        started=0.0,
    )
    # WHEN hover finds it THEN its crop is the one hayai page and a click read
    assert found_in(block, job, False).crop == crop_box(block, 200, 120)
