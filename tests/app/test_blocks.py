"""The text block finder (app/capture/blocks.py) on real manga scans (tests/data/pages, ground truth
by us) and on game screens rendered here; the click path through PageMap (app/capture/bubble.py)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from app.capture import blocks
from app.capture.bubble import PageMap

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages"
SCORED = ("speech", "narration", "caption")
NOTO = "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"
NOTO_REGULAR = NOTO.replace("Bold", "Regular")
needs_noto = pytest.mark.skipif(
    not Path(NOTO).is_file(), reason="needs fonts-noto-cjk (installed by .ci/run)"
)

# What the finder achieves on tests/data/pages today (issue #24's targets are 90% and 100%):
# a floor, so that a change that loses blocks fails here; raise it as the finder improves.
BLOCKS_FLOOR = 0.91  # 53 of 58 block centres (002b, held out while tuning: 8 of its 10)
ANY_POINT_FLOOR = 0.94  # 260 of 276 points on the blocks' lines
ART_FLOOR = 1.0  # 50 of 50 art clicks quiet


def bgra_of(gray: np.ndarray) -> np.ndarray:
    out = np.full(gray.shape + (4,), 255, dtype=np.uint8)
    out[..., 0] = out[..., 1] = out[..., 2] = gray
    return out


@pytest.fixture(scope="module")
def pages():
    truth = json.loads((PAGES / "blocks.json").read_text(encoding="utf-8"))["pages"]
    out = {}
    for name, page in truth.items():
        gray = np.asarray(Image.open(PAGES / name).convert("L"))
        assert list(gray.shape[::-1]) == page["size"]
        out[name] = (gray, PageMap(bgra_of(gray)), page)
    return out


def proposes_block(gray, box, proposal) -> tuple[bool, str]:
    """Whether a proposal holds >= 90% of a block's ink within 3x its box (and why not)."""
    if proposal is None:
        return False, "nothing"
    x, y, w, h = box
    px, py, pw, ph = proposal.box
    ink = gray[y : y + h, x : x + w] < 128
    inside = np.zeros_like(ink)
    inside[max(py - y, 0) : max(py + ph - y, 0), max(px - x, 0) : max(px + pw - x, 0)] = True
    share = (ink & inside).sum() / max(1, ink.sum())
    ok = share >= 0.9 and pw * ph <= 3 * w * h
    return bool(ok), f"{share:.0%} of its ink, {pw * ph / (w * h):.1f}x"


def holds_ink(box, gray) -> bool:
    """Whether a box holds every dark pixel of a drawn test image."""
    ink_y, ink_x = (np.flatnonzero((gray < 128).any(axis=a)) for a in (1, 0))
    x, y, w, h = box
    return x <= ink_x[0] and ink_x[-1] < x + w and y <= ink_y[0] and ink_y[-1] < y + h


def line_points(gray, block) -> list[tuple[int, int]]:
    """Points on a block's letters: a quarter, half and three quarters down (or along) each of its
    lines, the lines being where its ink stands across (gaps over 3 px part them; spans under 4 px,
    a ruby's or a dot's, are left out)."""
    x, y, w, h = block["box"]
    ink = gray[y : y + h, x : x + w] < 128
    vertical = block.get("vertical", h > w)
    across = np.flatnonzero(ink.any(axis=0) if vertical else ink.any(axis=1))
    spans, start = [], across[0]
    for a, b in zip(across[:-1], across[1:]):
        if b - a > 3:
            spans.append((start, a + 1))
            start = b
    spans.append((start, across[-1] + 1))
    points = []
    for s, e in spans:
        if e - s < 4:
            continue
        band = ink[:, s:e].any(axis=1) if vertical else ink[s:e, :].any(axis=0)
        along = np.flatnonzero(band)
        for f in (0.25, 0.5, 0.75):
            a, c = int(along[0] + f * (along[-1] - along[0])), (s + e) // 2
            points.append((x + c, y + a) if vertical else (x + a, y + c))
    return points


def click_scores(pages, anywhere: bool = False):
    """(share of scored blocks proposed well, misses): a click at each block's centre, or with
    `anywhere` at points on each of its lines."""
    good, total, misses = 0, 0, []
    for name, (gray, page_map, page) in pages.items():
        for block in page["blocks"]:
            if block["kind"] not in SCORED:
                continue
            x, y, w, h = block["box"]
            points = line_points(gray, block) if anywhere else [(x + w // 2, y + h // 2)]
            for px, py in points:
                ok, why = proposes_block(gray, block["box"], page_map.propose(px, py))
                total += 1
                good += ok
                if not ok:
                    misses.append(f"{name} {block['text']} at ({px}, {py}): {why}")
    return good / total, misses


def art_score(pages):
    quiet, total, loud = 0, 0, []
    for name, (_, page_map, page) in pages.items():
        for x, y in page["art_clicks"]:
            total += 1
            proposal = page_map.propose(x, y)
            if proposal is None:
                quiet += 1
            else:
                loud.append(f"{name} ({x}, {y}) → {proposal.box}")
    return quiet / total, loud


def test_a_click_on_a_text_block_of_a_real_page_proposes_that_block(pages):
    # GIVEN five real scanned pages and our boxes of their 58 scored text blocks
    # WHEN a reader clicks the centre of each block
    score, misses = click_scores(pages)
    # THEN the proposed box holds ≥ 90% of the block's ink and is at most 3× its box, for at least
    # the share the finder reaches today
    assert score >= BLOCKS_FLOOR, (score, misses)


def test_a_click_anywhere_on_the_letters_of_a_real_page_proposes_their_block(pages):
    # GIVEN the same blocks, WHEN a reader clicks a quarter, half and three quarters along each
    # of their lines (not only the centres the rules were looked at with)
    score, misses = click_scores(pages, anywhere=True)
    # THEN as many points propose their block as the floor says
    assert score >= ANY_POINT_FLOOR, (score, misses)


def test_a_click_on_art_of_a_real_page_proposes_nothing(pages):
    score, loud = art_score(pages)
    assert score >= ART_FLOOR, (score, loud)


def test_the_issue_targets_on_real_pages(pages):
    # issue #24: ≥ 90% of the blocks proposed (centres and points along their lines), art quiet
    blocks_score, _ = click_scores(pages)
    anywhere, _ = click_scores(pages, anywhere=True)
    art, _ = art_score(pages)
    assert blocks_score >= 0.9 and anywhere >= 0.9 and art == 1.0


def test_whole_page_blocks_are_in_reading_order_with_direction_and_lines(pages):
    gray, _, _ = pages["000b.jpg"]
    found = blocks.find_blocks(gray)
    assert len(found) >= 5
    # the page is vertical Japanese: most blocks vertical, read right to left along the top row
    assert sum(b.vertical for b in found) > len(found) / 2
    top = [b for b in found if b.box[1] < 150 and b.vertical]
    rights = [b.box[0] + b.box[2] for b in top]
    assert rights == sorted(rights, reverse=True)
    for b in found:
        x, y, w, h = b.box
        assert b.lines and b.font_size > 0
        for lx, ly, lw, lh in b.lines:  # every line inside its block
            assert x <= lx and y <= ly and lx + lw <= x + w and ly + lh <= y + h


def _iou(a, b) -> float:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    w = max(0, min(ax + aw, bx + bw) - max(ax, bx))
    h = max(0, min(ay + ah, by + bh) - max(ay, by))
    return w * h / (aw * ah + bw * bh - w * h)


def test_a_whole_page_block_has_its_real_lines_and_letter_size(pages):
    # GIVEN the five real pages, and per block of the ground truth its text and how many lines
    # (columns or rows) its letters stand in, counted by eye
    letters, sizes, counts = [], [], []
    for gray, _, page in pages.values():
        # WHEN the finder reads each whole page
        for block in blocks.find_blocks(gray):
            best = max(page["blocks"], key=lambda g: _iou(g["box"], block.box))
            if _iou(best["box"], block.box) < 0.2:
                continue  # not a block of the ground truth (a sound effect, a false find)
            x, y, w, h = best["box"]
            vertical = best.get("vertical", h > w)
            # the truth's letter size, at most: its box's narrow side per line (the gaps between
            # its lines and a ruby beside them count in, so a block's letters measure 0.6-1.0 of it)
            pitch = (w if vertical else h) / best["line_count"]
            # the finder's letters: its lines' lengths over its font size (blocks.letters_in)
            length = sum(lh if block.vertical else lw for _, _, lw, lh in block.lines)
            letters.append(length / block.font_size / len(best["text"]))
            sizes.append(block.font_size / pitch)
            counts.append(len(block.lines) == best["line_count"])
    assert len(letters) >= 50
    letters_, sizes_ = np.array(letters), np.array(sizes)
    # THEN its letters, as its lines and font size count them, are those of its text: within half
    # to twice for 9 in 10 blocks (53 of 55; a block over hatching counts its strokes, one that
    # took only part of its balloon counts that part) and never below a third (a line that spans
    # two or three columns, its font size their width, counted 1/8 of its letters)
    assert np.mean((letters_ >= 0.5) & (letters_ <= 2)) >= 0.9, letters
    assert letters_.min() >= 1 / 3, letters
    # its font size is its letters' size: within 0.5-1.35 of the truth's line pitch for 9 in 10
    # blocks (54 of 55: a ruby taken alone for its block is the one below) and never above 1.5
    assert np.mean((sizes_ >= 0.5) & (sizes_ <= 1.35)) >= 0.9, sizes
    assert sizes_.max() <= 1.5, sizes
    # and its lines are as many as the truth's (49 of 55: blocks that missed a short column or
    # took in a sound effect or hatching beside their own are the rest)
    assert np.mean(counts) >= 0.85, counts


def test_a_whole_page_reads_whole_balloons_and_the_balloons_the_finder_misses(pages):
    """A whole page's read (`app.page.blocks_of`) takes each found block as a click at its middle
    does: the balloon around a block that took one or two of its three columns, with a line for
    each column. It also clicks the balloons holding no line of letters (a lone "！", one letter),
    and takes long lines of outlined letters (`blocks.outlined_blocks`). It keeps every block the
    finder holds, puts no new or grown block on the art clicks, and holds more of the ground
    truth."""
    from app.page import blocks_of

    def held(found, box, share=0.5) -> bool:  # this share of a truth block's box under one block
        return any(blocks.overlap(b.box, box) >= share * box[2] * box[3] for b in found)

    by_page = on_nothing = 0
    gained = {}
    for name, (gray, _, page) in pages.items():
        found = blocks.find_blocks(gray)
        read = blocks_of(Image.fromarray(gray).convert("RGB"))
        changed = [b for b in read if b not in found]
        for truth in page["blocks"]:
            finder, whole = held(found, truth["box"]), held(read, truth["box"])
            assert whole or not finder, (name, truth["text"])
            by_page += whole
            if whole and not finder:
                gained[truth["text"]] = [len(b.lines) for b in read if held([b], truth["box"])]
        for x, y in page["art_clicks"]:
            assert not any(
                bx <= x < bx + bw and by <= y < by + bh
                for bx, by, bw, bh in (b.box for b in changed)
            )
        for block in changed:  # one text each: no balloon grown over a neighbour's text
            texts = [t["text"] for t in page["blocks"] if held([block], t["box"], 0.25)]
            assert len(texts) <= 1, (name, block.box, texts)
            on_nothing += not texts
        for block in read:  # lines in the box, in reading order
            bx, by, bw, bh = block.box
            for x, y, w, h in block.lines:
                assert bx <= x and by <= y and x + w <= bx + bw and y + h <= by + bh, block
            assert blocks.in_reading_order(block.lines, block.vertical) == block.lines, block
    # 54 → 64 of the 64 blocks (notes included) on these pages; 2 balloons of drawing (a floor, a
    # cat's back) hold no text
    assert by_page == sum(len(page["blocks"]) for _, _, page in pages.values()), by_page
    assert on_nothing <= 2, on_nothing
    assert {"わ", "！"} <= gained.keys()
    for text in ("あっまたヤモリ！", "お来てるなノラボス", "おいでおいで！ニャ～っ"):  # 3 columns
        assert gained.get(text) == [3], (text, gained)
    # outlined letters: a caption whose letters touch the rules beside them, one line, found
    # whole though it is found as two overlapping pieces
    assert gained.get("ノラボス・ハードボイルド") == [1], gained


@needs_noto
def test_a_short_column_of_letters_in_pieces_lines_up_by_their_pieces():
    """はい？ in 15 px letters (a balloon on a page of another title): once pooled, は is its left
    stroke and the rest, い its two strokes, and the marks that are letters stand off one axis,
    their pieces beside them. Lined up by their pieces' centres, the three are one column, found
    and proposed by a click on any of them."""
    font = ImageFont.truetype(NOTO_REGULAR, 15)
    image = Image.new("L", (200, 200), 255)
    draw = ImageDraw.Draw(image)
    for i, letter in enumerate("はい？"):
        draw.text((100, 60 + 17 * i), letter, font=font, fill=0)
    gray = np.asarray(image)
    (column,) = blocks.find_blocks(gray)
    assert column.vertical and holds_ink(column.box, gray), column
    page_map = PageMap(gray)
    for y in (68, 85, 102):  # は, い, ？
        proposal = page_map.propose(107, y)
        assert proposal is not None and proposal.region == column.box, (y, proposal)


@needs_noto
def test_letters_that_touch_in_one_mark_count_as_letters_of_a_short_note(pages):
    """A hand-lettered note over a drawing (002a's ネズミ算式): its first letter stands alone, the
    next three touch in one mark. Two marks make a short block, which must stand alone in paper,
    and blots of the drawing lie beside it; the mark counts as the letters of the block's size it
    is long (ロコロ: 2, so the block 3), so the finder takes the note as one block of all four, here
    and on the test scan."""
    font = ImageFont.truetype(NOTO_REGULAR, 16)
    image = Image.new("L", (160, 160), 255)
    draw = ImageDraw.Draw(image)
    for i, letter in enumerate("カロコロ"):  # ロコロ 12 px apart: one mark
        draw.text((80, 40 + (18 + 12 * (i - 1) if i else 0)), letter, font=font, fill=0)
    for k in range(3):  # blots of the drawing, a letter's size, beside the note
        x, y = 72, 52 + 14 * k
        draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=0)
    gray = np.asarray(image)
    ink_y = np.flatnonzero((gray[:, 78:] < 128).any(axis=1))  # the letters' rows
    (note,) = blocks.find_blocks(gray)
    assert note.vertical and note.box[1] <= ink_y[0] and ink_y[-1] < note.box[1] + note.box[3]
    scan, _, truth = pages["002a.jpg"]
    (box,) = [b["box"] for b in truth["blocks"] if b["text"] == "ネズミ"]
    found = blocks.find_blocks(scan)
    assert any(blocks.overlap(b.box, box) >= 0.5 * box[2] * box[3] for b in found)


@needs_noto
def test_outlined_letters_over_a_block_add_the_line_it_left_out():
    """A caption's last row whose letters touch once pooled (a comic's "IN A SECOND!") is no line
    to the finder, which gives the caption's other two rows; the outlined letters give all three.
    A whole page reads the caption as one block of three rows, not the finder's two alone. (Here
    the finder finds all three: its block of two rows is made by hand.)"""
    font = ImageFont.truetype(NOTO, 18)
    image = Image.new("L", (400, 200), 255)
    draw = ImageDraw.Draw(image)
    for k, row in enumerate(("HOLD STILL, TIM!", "I'LL HAVE YOU FREE", "IN A SECOND!")):
        draw.text((60, 50 + 26 * k), row, font=font, fill=0)
    gray = np.asarray(image)
    (caption,) = blocks.find_blocks(gray)
    assert len(caption.lines) == 3, caption
    first_two = caption.lines[:2]
    found = blocks.Block(blocks.bounds(first_two), False, first_two, caption.font_size, False)
    (read,) = PageMap(gray).whole_page([found])
    assert len(read.lines) == 3 and read.lines[:2] == first_two, read
    assert blocks.overlap(read.box, caption.box) >= 0.9 * caption.box[2] * caption.box[3], read


@needs_noto
def test_two_balloons_drawn_into_one_white_are_two_blocks():
    """Two balloons whose outlines meet only outside make one white area (a page of another title
    drew two lines of one speaker so, twice on one page). The texts stand 2.4 letters apart, where
    the columns of one balloon stand one letter apart at most: a click on either proposes its own
    text, and a whole page reads two blocks, not one box over both."""
    from app.page import blocks_of

    font = ImageFont.truetype(NOTO_REGULAR, 20)
    image = Image.new("L", (700, 500), 255)
    draw = ImageDraw.Draw(image)
    right_x = [470 - 26 * i for i in range(5)]  # columns 26 px apart, right to left
    left_x = [right_x[-1] - 64 - 26 * i for i in range(3)]  # 48 px of white between the texts
    balloons = ((left_x[-1] - 40, 110, left_x[0] + 60, 330), (right_x[-1] - 30, 90, 530, 330))
    for balloon in balloons:
        draw.ellipse(balloon, outline=0, width=3)
    for x0, y0, x1, y1 in balloons:  # the inner arcs erased: one white inside
        draw.ellipse((x0 + 3, y0 + 3, x1 - 3, y1 - 3), fill=255)
    texts = {
        "right": (
            right_x,
            ("いいえ、また", "授業の時間と", "重なっちゃう", "のが多くて", "困ります…"),
        ),
        "left": (left_x, ("でも", "ちゃんと自分", "で見つけます")),
    }
    for xs, columns in texts.values():
        for x, column in zip(xs, columns):
            for i, letter in enumerate(column):
                draw.text((x, 130 + i * 22), letter, font=font, fill=0)
    gray = np.asarray(image)
    spans = {side: (xs[-1], xs[0] + 20) for side, (xs, _) in texts.items()}  # x of each text

    def holds(box, side) -> bool:
        x0, x1 = spans[side]
        return box[0] <= x0 and x1 <= box[0] + box[2]

    def meets(box, side) -> bool:
        x0, x1 = spans[side]
        return box[0] < x1 and x0 < box[0] + box[2]

    page_map = PageMap(gray)
    for side, other in (("right", "left"), ("left", "right")):
        proposal = page_map.propose(texts[side][0][1] + 10, 200)
        assert proposal is not None and holds(proposal.box, side), proposal
        assert not meets(proposal.box, other), proposal
    read = blocks_of(image.convert("RGB"))
    assert len(read) == 2, read
    assert all(sum(meets(b.box, side) for side in texts) == 1 for b in read), read


@needs_noto
def test_a_long_vowel_bar_between_two_letters_links_them_as_a_letter_would():
    """ふーん and へーえ set in two columns on the page: the letters on either side of each ー stand
    2 letters apart, further than two letters of a line may, and a ー is a solid bar, no letter by
    itself. The bar stands as a letter between them, so the six are one block of two columns (not
    rows across them): found on a whole page, and proposed by a click on any of them."""
    from app.page import blocks_of

    font = ImageFont.truetype(NOTO, 18)
    image = Image.new("L", (300, 300), 255)
    draw = ImageDraw.Draw(image)
    bar = Image.new("L", (18, 18), 255)  # a column's ー: the row's glyph turned upright
    ImageDraw.Draw(bar).text((0, -4), "ー", font=font, fill=0)
    y, columns = 110, ((161, "ふん"), (131, "へえ"))
    for x, (first, last) in columns:
        draw.text((x, y), first, font=font, fill=0)
        image.paste(bar.rotate(90, fillcolor=255), (x, y + 24))
        draw.text((x, y + 48), last, font=font, fill=0)
    gray = np.asarray(image)
    found = blocks.find_blocks(gray)
    assert len(found) == 1 and found[0].vertical and len(found[0].lines) == 2, found
    assert holds_ink(found[0].box, gray), found
    assert blocks_of(image.convert("RGB")) == found
    page_map = PageMap(gray)
    for x, _ in columns:
        for click_y in (y + 9, y + 33, y + 57):  # the letters and the bar
            proposal = page_map.propose(x + 9, click_y)
            assert proposal is not None and proposal.region == found[0].box, (x, click_y)


def test_a_page_shown_small_is_read_enlarged_to_the_letters_the_finder_is_made_for(pages):
    """A page shown at 60% of its size (a volume read fit to a laptop's screen): letters of 10-15
    px, whose strokes the finder's pooling merges or breaks. The whole page is found on it enlarged
    to letters of `LETTER_PX`, in the shown page's own pixels (docs/reading.md, "Pages shown
    small": 40 of the 64 blocks as they are)."""
    from app.capture.bubble import SMALL_LETTERS, resized, screen_letter
    from app.page import blocks_of

    scale, held, on_art = 0.6, 0, 0
    for gray, _, page in pages.values():
        shown = resized(gray, scale)
        size = shown.shape[::-1]
        assert screen_letter(blocks.find_blocks(shown)) < SMALL_LETTERS  # so searched enlarged
        read = blocks_of(Image.fromarray(shown).convert("RGB"))
        letter = screen_letter(read)  # the shown page's letters, not the enlarged LETTER_PX
        assert 8 <= letter < SMALL_LETTERS, letter
        for truth in page["blocks"]:
            box = [round(v * scale) for v in truth["box"]]
            held += any(blocks.overlap(b.box, box) >= 0.5 * box[2] * box[3] for b in read)
        for x, y in page["art_clicks"]:
            x, y = x * scale, y * scale
            on_art += any(
                bx <= x < bx + bw and by <= y < by + bh for bx, by, bw, bh in (b.box for b in read)
            )
        for block in read:  # in the shown page's pixels, lines in the box
            bx, by, bw, bh = block.box
            assert bx >= 0 and by >= 0 and bx + bw <= size[0] and by + bh <= size[1], block
            for x, y, lw, lh in block.lines:
                assert bx <= x and by <= y and x + lw <= bx + bw and y + lh <= by + bh, block
    assert held >= 57, held
    assert on_art <= 1, on_art


@needs_noto
def test_a_dialogue_of_large_letters_on_a_screen_of_small_text_is_read_as_it_is():
    """A screen of mostly small letters (40 lines of 12 px menu text) is searched enlarged, but a
    game's dialogue of 64 px letters on it is proposed, and kept by a whole page, as it is: enlarged
    to ~100 px, its letters pass the finder's sizes and the box breaks into pieces."""
    from app.capture.bubble import PageMap, ScaledPageMap

    image = Image.new("L", (1920, 1080), 235)
    draw = ImageDraw.Draw(image)
    menu = ImageFont.truetype(NOTO_REGULAR, 12)
    for i in range(40):
        draw.text(
            (20, 10 + i * 18),
            f"ファイル 編集 表示 設定 ヘルプ メニュー項目の説明文です {i}",
            font=menu,
            fill=20,
        )
    draw.rectangle((500, 700, 1800, 1000), fill=250, outline=0, width=4)
    dialogue = ImageFont.truetype(NOTO_REGULAR, 64)
    draw.text((540, 730), "これは大きな台詞の文字です", font=dialogue, fill=10)
    draw.text((540, 840), "次の行も同じ大きさ", font=dialogue, fill=10)
    gray = np.asarray(image)
    scaled, plain = ScaledPageMap(gray), PageMap(gray)
    assert scaled.scale >= 1.5
    # the whole box, as on the screen as it is (enlarged: a piece of 134×181 around the click)
    for click in ((700, 770), (1100, 880)):
        proposal = scaled.propose(*click)
        assert proposal == plain.propose(*click) and proposal.box[2] > 800, proposal
    found = [b for b in blocks.find_blocks(gray) if b.box[1] > 650]  # the dialogue, one block
    assert len(found) == 1
    assert [b for b in scaled.whole_page() if b.box[1] > 650] == found  # not 6 pieces
    assert scaled.propose(100, 100) is not None  # the menu text, enlarged


def test_a_rect_found_enlarged_maps_back_to_whole_pixels_inside_the_image():
    from app.capture.bubble import unscaled

    # starts down, ends up: 10/1.5 = 6.67 → 6, (10 + 10)/1.5 = 13.3 → 14
    assert unscaled((10, 10, 10, 10), 1.5, 100, 100) == (6, 6, 8, 8)
    # ... and inside the image: (10 + 31)/1.5 = 27.3 → 28, kept at its 27; 61/1.5 = 40.7, at its 40
    assert unscaled((10, 21, 31, 40), 1.5, 27, 40) == (6, 14, 21, 26)
    assert unscaled((0, 0, 30, 60), 1.5, 27, 40) == (0, 0, 20, 40)


def test_outlined_letters_packed_into_one_mark_are_read_as_letters_of_their_size(pages):
    """000b's みてみて〜〜♪: dark letters outlined in white on tone, set so close that they touch
    once pooled, so the finder takes the four for one 74 px letter. A whole page reads them as
    one column of letters of their own size, so that its crop is scaled and its read is long
    enough for four letters; the column runs on through the 〜〜♪ below them, outlined on black
    by a halo too thin to be paper all round (`_run_on_dark`)."""
    from app.page import blocks_of, token_limit

    gray, _, page = pages["000b.jpg"]
    truth = next(t["box"] for t in page["blocks"] if t["text"].startswith("みてみて"))
    assert not any(blocks.overlap(b.box, truth) for b in blocks.find_blocks(gray))
    page_blocks = blocks_of(Image.fromarray(gray).convert("RGB"))
    read = [b for b in page_blocks if blocks.overlap(b.box, truth)]
    assert len(read) == 1, read
    block = read[0]
    assert block.vertical and 15 <= block.font_size <= 25, block
    assert blocks.overlap(block.box, truth) >= 0.8 * truth[2] * truth[3], block  # and 〜〜♪
    assert block.box[1] + block.box[3] >= truth[1] + truth[3] - 8, block  # down to ♪'s foot
    assert blocks.letters_in(block) >= 3 and token_limit(block, 300) >= 4 * 3, block


@needs_noto
def test_columns_set_so_close_that_they_touch_once_pooled_are_read_enlarged():
    """Narration of three columns 6 px apart with ruby between them (a page of another title):
    once pooled, ruby and letters join into marks over two or three columns, which the finder
    takes for odd letters, and it finds only the first column. Such marks (`packed_marks`) are
    read again on the image around them enlarged twice: the whole page holds every column, and
    a click on any letter proposes a block that holds it."""
    size, pitch = 17, 23
    letters = ImageFont.truetype(NOTO, size)
    ruby = ImageFont.truetype(NOTO_REGULAR, 6)
    image = Image.new("L", (300, 240), 255)
    draw = ImageDraw.Draw(image)
    columns = (("今のセリフも", "", 0), ("あの不気味な", "ぶきみ", 2), ("笑顔も…", "えがお", 0))
    for k, (column, reading, first) in enumerate(columns):
        x = 200 - k * pitch
        for i, letter in enumerate(column):
            draw.text((x, 60 + size * i), letter, font=letters, fill=0, anchor="lt")
        for i, kana in enumerate(reading):  # in the gap to the column's right, by its letters
            y = 60 + size * first + 2 * size * i // 3
            draw.text((x + size + (pitch - size - 6) // 2, y), kana, font=ruby, fill=0, anchor="lt")
    gray = np.asarray(image)
    ink = gray < 128

    def share_held(found) -> float:
        held = np.zeros_like(ink)
        for x, y, w, h in (b.box for b in found):
            held[y : y + h, x : x + w] = True
        return (ink & held).sum() / ink.sum()

    found = blocks.find_blocks(gray)
    assert share_held(found) < 0.5, found  # the first column only
    assert blocks.packed_marks(gray, [b.box for b in found])
    page_map = PageMap(gray)
    whole = page_map.whole_page(found)
    assert share_held(whole) >= 0.97 and len(whole) <= 3, whole
    assert all(b.vertical for b in whole), whole
    # the outlined look finds these letters too (with no block of the finder's before it): the
    # enlarged read of the same letters is not added again
    alone = page_map.whole_page([])
    assert share_held(alone) >= 0.97, alone
    for a, b in itertools.combinations(alone, 2):
        assert not blocks.overlap(a.box, b.box), alone
    for k, (column, _, _) in enumerate(columns):
        x = 200 - k * pitch + size // 2
        for i, letter in enumerate(column.rstrip("…")):
            y = 60 + size * i + size // 2
            proposal = page_map.propose(x, y)
            assert proposal is not None, (letter, x, y)
            rx, ry, rw, rh = proposal.region
            assert rx <= x < rx + rw and ry <= y < ry + rh, (letter, proposal)


def test_each_pixel_of_a_mark_is_labelled_with_its_index():
    """`_Marks.labelled` paints every mark's index + 1 on its pixels at once (the full-resolution
    look at packed letters takes a mark's own ink from it): the same as painting marks one by one."""
    rng = np.random.default_rng(7)
    for _ in range(30):
        h, w = rng.integers(1, 60, size=2)
        ink = rng.random((h, w)) < rng.uniform(0.1, 0.6)
        marks = blocks._Marks(ink)
        if marks.empty:
            continue
        expected = np.zeros((h, w), dtype=np.int64)
        for k in range(len(marks.size)):
            expected[marks.paint(np.arange(len(marks.size)) == k, (h, w))] = k + 1
        assert np.array_equal(marks.labelled((h, w)), expected)


def test_a_packed_column_runs_on_over_black_through_outlined_marks_and_not_through_a_line():
    """`_run_on_dark`: below a packed column of outlined letters, a mark outlined in white on a
    black ground (a ♪ with a 2 px halo) lengthens it; a drawn line on paper below it does not."""
    column = blocks.Block((50, 20, 20, 40), True, ((50, 20, 20, 40),), 20.0, False)
    gray = np.full((200, 120), 255, dtype=np.uint8)
    gray[64:104, 40:80] = 0  # black ground, starting 4 px below the column
    gray[70:90, 52:68] = 255  # the halo ...
    gray[72:88, 54:66] = 0  # ... around a mark of ink
    assert blocks._run_on_dark(column, gray).box == (50, 20, 20, 68)
    paper = np.full((200, 120), 255, dtype=np.uint8)
    paper[64:124, 59:62] = 0  # a 3 px line on paper, along the column
    assert blocks._run_on_dark(column, paper) == column


def test_reading_order_is_right_to_left_then_down_for_vertical_blocks():
    def block(x, y, w=30, h=120):
        return blocks.Block((x, y, w, h), True, ((x, y, w, h),), 30.0, False)

    a, b, c = block(500, 10), block(300, 30), block(600, 400)
    assert blocks.reading_order([b, c, a]) == [a, b, c]


def test_connected_components_match_a_flood_fill():
    rng = np.random.default_rng(7)
    mask = rng.random((60, 80)) < 0.45
    x0, y0, x1, y1, area, run_label, runs = blocks.components(mask)
    # a brute-force 8-connected flood fill gives the same pieces (count, sizes, boxes)
    seen = np.zeros_like(mask)
    pieces = []
    for sy, sx in zip(*np.nonzero(mask)):
        if seen[sy, sx]:
            continue
        stack, pts = [(sy, sx)], []
        seen[sy, sx] = True
        while stack:
            y, x = stack.pop()
            pts.append((y, x))
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    ny, nx = y + dy, x + dx
                    if 0 <= ny < 60 and 0 <= nx < 80 and mask[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        stack.append((ny, nx))
        ys, xs = zip(*pts)
        pieces.append((min(xs), min(ys), max(xs) + 1, max(ys) + 1, len(pts)))
    ours = sorted(zip(x0.tolist(), y0.tolist(), x1.tolist(), y1.tolist(), area.tolist()))
    assert ours == sorted(pieces)


@needs_noto
@pytest.mark.parametrize("light", [True, False], ids=["light-on-dark", "dark-on-light"])
def test_a_game_dialogue_box_is_one_horizontal_block(light):
    # GIVEN a game screen: a scene (gradient), a dialogue box with a name tag and two lines of text
    font = ImageFont.truetype(NOTO, 30)
    sky = np.linspace(60, 200, 720)[:, None].repeat(1280, axis=1).astype(np.uint8)
    screen = Image.fromarray(sky).convert("RGB")
    draw = ImageDraw.Draw(screen)
    fill, ink = ((20, 24, 60), (245, 245, 245)) if light else ((250, 248, 240), (30, 30, 30))
    draw.rounded_rectangle((80, 480, 1200, 690), 16, fill=fill, outline=(120, 120, 130), width=3)
    draw.text((130, 520), "「今日はどこへ行くの？」", font=font, fill=ink)
    draw.text((130, 570), "「駅の向こうの本屋さんまで。」", font=font, fill=ink)
    gray = np.asarray(screen.convert("L"))
    text_ink = (gray > 200) if light else (gray < 100)
    text_ink[:, :100] = False
    text_ink[:500] = False
    ys, xs = np.nonzero(text_ink[:, :1180])
    truth = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    # WHEN the user clicks between the two lines
    page_map = PageMap(bgra_of(gray))
    proposal = page_map.propose(400, 565)
    # THEN both lines are in the box, and not the whole dialogue box
    assert proposal is not None
    px, py, pw, ph = proposal.box
    assert px <= truth[0] and py <= truth[1] and px + pw >= truth[2] and py + ph >= truth[3]
    assert pw * ph <= 2 * (truth[2] - truth[0]) * (truth[3] - truth[1])
    found = [b for b in blocks.find_blocks(gray) if b.box[1] > 480]
    assert len(found) == 1 and not found[0].vertical and len(found[0].lines) == 2
    assert found[0].light_text == light
    # and a whole page's read of the screen keeps that block as the finder found it (the box's
    # fill around it holds no more letters)
    from app.page import blocks_of

    assert blocks_of(screen) == blocks.find_blocks(blocks.luminance(np.asarray(screen)))
