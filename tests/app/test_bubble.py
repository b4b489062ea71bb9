"""One click per bubble: the region proposal on drawn pages (app/capture/bubble.py), and the click in
the selection window that reads it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from app.capture.bubble import PageMap
from app.capture.sample_page import draw_screen


def contains(outer, inner) -> bool:
    ox, oy, ow, oh = outer
    ix, iy, iw, ih = inner
    return ox <= ix and oy <= iy and ix + iw <= ox + ow and iy + ih <= oy + oh


def bgra_of(image: Image.Image) -> np.ndarray:
    rgb = np.asarray(image.convert("RGB"))
    out = np.full(rgb.shape[:2] + (4,), 255, dtype=np.uint8)
    out[..., :3] = rgb[..., ::-1]
    return out


@pytest.fixture(scope="module")
def screen():
    bgra, regions = draw_screen(seed=3)
    return PageMap(bgra), {r.name: r for r in regions}


@pytest.mark.parametrize(
    "name", ["ellipse-vertical", "roundbox-horizontal", "on-a-stroke", "game-box"]
)
def test_a_click_proposes_a_box_with_all_the_text_and_little_else(screen, name):
    # GIVEN a drawn screen: manga bubbles in screentone panels, a graded game box
    page, regions = screen
    region = regions[name]
    # WHEN the user clicks where a reader would (for "on-a-stroke": right on a black stroke)
    proposal = page.propose(*region.click)
    # THEN the box holds every stroke of the text ...
    assert proposal is not None
    assert contains(proposal.box, region.ink), (proposal, region.ink)
    # ... with a small margin (at most 24 px a side, a third more area) and stays inside the outline
    bx, by, bw, bh = proposal.box
    ix, iy, iw, ih = region.ink
    assert ix - bx <= 24 and iy - by <= 24
    assert (bx + bw) - (ix + iw) <= 24 and (by + bh) - (iy + ih) <= 24
    assert bw * bh <= 1.5 * iw * ih
    assert contains(region.outline, proposal.box)
    assert proposal.kind == ("box" if name == "game-box" else "bubble")


def test_every_click_inside_a_bubble_gives_the_same_box(screen):
    page, regions = screen
    r = regions["ellipse-vertical"]
    ox, oy, ow, oh = r.outline
    points = [(ox + ow // 2, oy + 40), (ox + 40, oy + oh // 2), (ox + ow // 2, oy + oh - 40)]
    boxes = {page.propose(x, y).box for x, y in points}
    assert len(boxes) == 1


@pytest.mark.parametrize(
    "point",
    [
        (1400, 320),  # a photo (noise)
        (300, 470),  # screentone
        (20, 540),  # the white gutter around the panels
    ],
    ids=["photo", "screentone", "page-gutter"],
)
def test_nothing_sensible_gives_no_proposal(screen, point):
    page, _ = screen
    assert page.propose(*point) is None


def test_a_panel_of_sparse_dot_tone_gives_no_proposal():
    image = Image.new("RGB", (800, 600), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((40, 40, 760, 560), outline="black", width=4)
    for y in range(50, 550, 12):
        for x in range(50 + (y // 12 % 2) * 6, 750, 12):
            draw.ellipse((x, y, x + 3, y + 3), fill=(60, 60, 60))
    assert PageMap(bgra_of(image)).propose(400, 300) is None


def test_an_empty_bubble_and_an_empty_box_give_no_proposal():
    image = Image.new("RGB", (800, 600), (120, 120, 120))
    draw = ImageDraw.Draw(image)
    draw.ellipse((100, 100, 400, 400), fill=(255, 255, 255), outline=(0, 0, 0), width=3)
    draw.rectangle((450, 100, 750, 300), fill=(20, 30, 90))
    page = PageMap(bgra_of(image))
    assert page.propose(250, 250) is None
    assert page.propose(600, 200) is None


def punctuation_page():
    """A white page: a balloon holding a lone "！", one holding "…", an eye (a closed white with a
    pupil), and balloons with a "¡" (the dot above) and with a lying stroke and a dot."""
    image = Image.new("RGB", (900, 300), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    for x in (20, 200, 380, 560, 740):
        draw.ellipse((x, 60, x + 140, 240), outline=(0, 0, 0), width=3)
    draw.line((104, 110, 88, 160), fill=(0, 0, 0), width=3)  # a thin leaning "！" ...
    draw.ellipse((83, 167, 90, 174), fill=(0, 0, 0))  # ... and its dot
    for y in range(130, 175, 8):  # "……" standing in a column, dot after dot
        draw.rectangle((266, y, 271, y + 5), fill=(0, 0, 0))
    draw.ellipse((420, 120, 480, 180), fill=(10, 10, 10))  # a pupil
    draw.polygon([(626, 140), (636, 140), (633, 195), (625, 195)], fill=(0, 0, 0))  # a "¡"
    draw.ellipse((626, 122, 636, 132), fill=(0, 0, 0))
    draw.line((780, 150, 840, 152), fill=(0, 0, 0), width=5)  # a lying stroke
    draw.ellipse((850, 147, 858, 155), fill=(0, 0, 0))  # ... and a dot beyond it
    return image


def test_punctuation_alone_in_a_balloon_is_proposed_and_a_face_is_not():
    # GIVEN balloons with a lone "！" and a lone "…" (no letters for the block finder), an eye, a
    # "¡" and a lying stroke with a dot, each closed in a white area
    page = PageMap(bgra_of(punctuation_page()))
    # WHEN the user clicks in each
    bang, dots = page.propose(110, 200), page.propose(240, 100)
    # THEN the two balloons propose their punctuation, with a small margin
    assert bang is not None and contains(bang.box, (83, 110, 22, 65)), bang
    assert bang.box[2] * bang.box[3] <= 3 * 22 * 65
    assert dots is not None and contains(dots.box, (266, 130, 6, 46)), dots
    # ... and the eye, the "¡" and the lying stroke propose nothing
    assert page.propose(400, 100) is None
    assert page.propose(630, 210) is None
    assert page.propose(810, 200) is None


def test_punctuation_is_an_upright_stroke_with_its_dot_below_or_dots_in_a_row():
    from app.capture.blocks import punctuation

    bang = np.zeros((40, 20), dtype=bool)
    bang[4:26, 8:11] = True
    bang[30:34, 8:11] = True
    assert punctuation(bang)
    assert not punctuation(bang[::-1])  # the dot above: a "¡", or a stroke of fur and a speck
    assert not punctuation(bang.T)  # lying: a brow, a mouth
    assert not punctuation(bang[:28])  # a stroke without its dot
    blot = np.zeros((40, 40), dtype=bool)
    blot[6:30, 8:32] = True
    blot[33:37, 18:22] = True
    assert not punctuation(blot)  # a pupil is a blot
    dots = np.zeros((10, 40), dtype=bool)
    for x in (4, 16, 28):
        dots[3:7, x : x + 4] = True
    assert punctuation(dots)
    scattered = dots.copy()
    scattered[3:7, 16:20] = False
    scattered[0:3, 16:20] = True
    scattered = np.vstack([np.zeros((8, 40), dtype=bool), scattered])
    scattered[0:4, 16:20] = True
    assert not punctuation(scattered)  # dots off one straight row: tone, specks


def test_a_fill_first_tried_in_a_window_is_the_fill_of_the_whole_screen():
    """A level's first fill runs in a window around its seed (`NEAR`) and again on the whole screen
    when it reaches the window's edge: from every seed, the runs of the whole screen's fill, or None
    alike (small areas, areas past the window, the page background that leaks)."""
    from app.capture import bubble

    bgra, _ = draw_screen(seed=5)
    hh, hw = PageMap(bgra).lo.shape
    max_area = int(min(bubble.MAX_AREA_FRACTION * hh * hw, bubble.MAX_BALLOON**2))
    rng = np.random.default_rng(2)
    windowed = whole = 0
    for sx, sy in zip(rng.integers(0, hw, 300).tolist(), rng.integers(0, hh, 300).tolist()):
        page = PageMap(bgra)  # no table of any level yet: the window is tried first
        level = int(page.lo[sy, sx]) // 8 * 8 + 4
        ours = page._fill(sx, sy, level, max_area)
        theirs = bubble._Runs(page._level_mask(level, np.s_[:, :])).fill(sy, sx, max_area)
        assert (ours is None) == (theirs is None), (sx, sy)
        if ours is not None:
            assert sorted(zip(*(v.tolist() for v in ours))) == sorted(
                zip(*(v.tolist() for v in theirs))
            ), (sx, sy)
            if level in page._runs:
                whole += 1
            else:
                windowed += 1
    assert windowed and whole  # both ways were taken


@pytest.mark.parametrize("side", ["left", "top", "right", "bottom"])
def test_a_window_fill_that_ends_on_or_past_each_window_side_is_the_whole_fill(side):
    """An area ending one short of the window's side, on it, or one past it (outlined in black
    on white): the windowed fill is the whole screen's, however near the side it ends."""
    from app.capture import bubble

    near, sx, sy = bubble.NEAR, 150, 150  # half-res px
    for reach in (near - 1, near, near + 1):
        extent = dict.fromkeys(["left", "top", "right", "bottom"], near // 2) | {side: reach}
        gray = np.full((600, 600), 255, dtype=np.uint8)
        x0, y0 = 2 * (sx - extent["left"] - 1), 2 * (sy - extent["top"] - 1)
        x1, y1 = 2 * (sx + extent["right"] + 2), 2 * (sy + extent["bottom"] + 2)
        gray[y0:y1, x0:x1] = 0  # the outline: one half-res pixel round the area
        gray[y0 + 2 : y1 - 2, x0 + 2 : x1 - 2] = 255
        page = PageMap(gray)
        ours = page._fill(sx, sy, 252, 10**6)
        theirs = bubble._Runs(page._level_mask(252, np.s_[:, :])).fill(sy, sx, 10**6)
        assert sorted(zip(*(v.tolist() for v in ours))) == sorted(
            zip(*(v.tolist() for v in theirs))
        ), reach
        area = int((ours[2] - ours[1]).sum())
        assert area == (extent["left"] + extent["right"] + 1) * (
            extent["top"] + extent["bottom"] + 1
        )


def test_clicks_off_the_image_or_on_an_odd_sized_one_are_safe():
    image = Image.new("RGB", (301, 201), (255, 255, 255))
    page = PageMap(bgra_of(image))
    assert page.propose(-5, 10) is None
    assert page.propose(300, 200) is None  # the last odd row and column are outside the fill grid
    for shape in [(10,), (10, 10, 2)]:  # neither a screen's BGRA nor a page's luminance
        with pytest.raises(ValueError):
            PageMap(np.zeros(shape, dtype=np.uint8))
    gray = PageMap(np.asarray(image.convert("L")))  # a page read whole: its luminance
    assert np.array_equal(gray.lo, page.lo) and np.array_equal(gray.hi, page.hi)


# --- the selection window ----------------------------------------------------------------------


@pytest.mark.gui
def test_a_click_in_the_selection_reads_the_bubble_under_it(qtbot):
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QGuiApplication, QImage

    from app.capture import Capture, ScreenInfo
    from app.ui.selection import SelectionSession

    # GIVEN the drawn screen frozen on the (offscreen) screen, scaled to it like a HiDPI capture
    bgra, regions = draw_screen(seed=3)
    region = next(r for r in regions if r.name == "roundbox-horizontal")
    qscreen = QGuiApplication.primaryScreen()
    g = qscreen.geometry()
    image = QImage(bgra.tobytes(), 1920, 1080, 1920 * 4, QImage.Format.Format_RGB32).copy()
    info = ScreenInfo(qscreen.name(), (g.x(), g.y(), g.width(), g.height()), (0, 0, 1920, 1080), 1)
    s = SelectionSession({qscreen.name(): Capture(info, image)})
    s.start()
    qtbot.waitUntil(lambda: all(w.isVisible() for w in s.windows))
    window = s.windows[0]
    sx, sy = 1920 / window.width(), 1080 / window.height()
    at = QPoint(round(region.click[0] / sx), round(region.click[1] / sy))
    # WHEN the pointer rests on the bubble
    qtbot.mouseMove(window, at)
    qtbot.waitUntil(lambda: window.proposal is not None, timeout=2000)
    # THEN the proposal is drawn: the window shows the hint pill next to an undimmed box
    shot = window.grab().toImage()
    box = window._proposal_widget()
    inside = shot.pixelColor(QPointF(box.center()).toPoint())
    assert inside.lightness() > 200  # the white bubble, not dimmed
    # WHEN the user clicks without dragging
    with qtbot.waitSignal(s.selected, timeout=2000) as blocker:
        qtbot.mouseClick(window, Qt.MouseButton.LeftButton, pos=at)
    sel = blocker.args[0]
    # THEN the crop is the bubble's text, in image pixels
    assert contains(sel.box_image_px, region.ink)
    assert contains(region.outline, sel.box_image_px)
    assert sel.image.size().width() == sel.box_image_px[2]


def test_bench_bubble_reports_every_region(capsys):
    from argparse import Namespace

    from app.reading.bench import bubble

    assert bubble(Namespace(runs=1, json=True)) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    assert report["screen"] == "1920x1080"
    found = {name: r["found"] for name, r in report["regions"].items()}
    assert found == {
        "ellipse-vertical": True,
        "roundbox-horizontal": True,
        "on-a-stroke": True,
        "game-box": True,
        "photo": False,
    }
    assert report["first_proposal_ms"]["max"] > 0


NOTO = "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"


@pytest.mark.skipif(not Path(NOTO).is_file(), reason="needs fonts-noto-cjk (installed by .ci/run)")
@pytest.mark.parametrize("size", [20, 30, 40])
@pytest.mark.parametrize("jpeg", [0, 50], ids=["png", "jpeg-q50"])
def test_real_japanese_text_in_bubbles_is_boxed_whole(jpeg, size):
    import io

    from PIL import ImageFont

    # GIVEN a page drawn with a real font: vertical text in an ellipse, horizontal in a rounded box,
    # screentone around, anti-aliased strokes and punctuation at the ends of the lines
    font = ImageFont.truetype(NOTO, size)
    page = Image.new("RGB", (1000, 600), (255, 255, 255))
    draw = ImageDraw.Draw(page)
    for y in range(0, 600, 6):
        for x in range((y // 6 % 2) * 3, 1000, 6):
            draw.ellipse((x, y, x + 2, y + 2), fill=(90, 90, 90))
    draw.ellipse((60, 40, 360, 560), fill="white", outline="black", width=4)
    draw.rounded_rectangle((420, 200, 960, 380), 50, fill="white", outline="black", width=4)
    ink_layer = Image.new("L", page.size, 255)
    ink_draw = ImageDraw.Draw(ink_layer)
    columns = ["「ちょっと待って！", "どこへ行くの？」"]
    for i, column in enumerate(columns):  # right to left, one character per cell
        for j, char in enumerate(column):
            ink_draw.text((220 - i * (size + 12), 110 + j * (size + 6)), char, font=font, fill=0)
    ink_draw.text((470, 240), "今日はいい天気ですね。", font=font, fill=0)
    ink_draw.text((470, 256 + size), "明日も晴れるといいな。", font=font, fill=0)
    page.paste((0, 0, 0), mask=ink_layer.point(lambda v: 255 - v))
    if jpeg:
        buffer = io.BytesIO()
        page.save(buffer, "JPEG", quality=jpeg)
        page = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    ink = np.asarray(ink_layer) < 160
    pm = PageMap(bgra_of(page))
    for (x, y), (left, right) in (((210, 80), (60, 360)), ((440, 290), (420, 960))):
        proposal = pm.propose(x, y)
        assert proposal is not None, (x, y)
        region_ink = ink[:, left:right]
        ys, xs = np.nonzero(region_ink)
        truth = (left + xs.min(), ys.min(), xs.max() - xs.min() + 1, ys.max() - ys.min() + 1)
        # THEN every stroke is inside the box, with a small margin only
        assert contains(proposal.box, truth), (proposal.box, truth)
        bx, by, bw, bh = proposal.box
        tx, ty, tw, th = truth
        assert tx - bx <= 24 and ty - by <= 24, (proposal.box, truth)
        assert (bx + bw) - (tx + tw) <= 24 and (by + bh) - (ty + th) <= 24, (proposal.box, truth)
