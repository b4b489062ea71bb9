"""A block's token limit (app/page/read.py, `token_limit`): never below what the block's real text can
need, on the five real pages and their ground truth; a block of a mark or two is cut short."""

import json
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from app.blocks import Block
from app.page.read import (
    LETTER_SLACK,
    TOKENS_PER_LETTER,
    blocks_of,
    budgets_of,
    letters_of,
    read_crops,
    token_limit,
)
from tests.blocks.blocks_pages import matches

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages"


def _overlap(truth, box) -> float:
    """Intersection over union of a truth box (x, y, w, h) and a found one (x0, y0, x1, y1)."""
    ax, ay, aw, ah = truth
    bx, by, bx1, by1 = box
    bw, bh = bx1 - bx, by1 - by
    w = max(0, min(ax + aw, bx1) - max(ax, bx))
    h = max(0, min(ay + ah, by1) - max(ay, by))
    return w * h / (aw * ah + bw * bh - w * h)


def test_no_real_block_needs_more_tokens_than_its_limit():
    truth = json.loads((PAGES / "blocks.json").read_text(encoding="utf-8"))["pages"]
    checked, worst = 0, 0.0
    for name, page in truth.items():
        image = Image.open(PAGES / name).convert("RGB")
        for block in blocks_of(image):
            best = max(page["blocks"], key=lambda g: _overlap(g["box"], block.box))
            if not matches(block.box, best["box"]):
                continue  # part of a block, a sound effect, a false find: its text is not known
            # the ground-truth text of the block found; each letter at most its UTF-8 bytes in
            # tokens (byte-level BPE), plus the end of text
            need = len(best["text"].replace("\n", "").encode("utf-8")) + 1
            assert token_limit(block, 10_000) >= need, (name, best["text"], block)
            worst = max(worst, len(best["text"]) / letters_of(block))
            checked += 1
    assert checked >= 52
    # some texts hold more characters than their cells (a "．．．" is three in one): the slack is
    # needed; and it keeps a margin over the worst block (2.2x on these pages: あが．．．)
    assert 1.5 < worst <= LETTER_SLACK / 1.25


def test_a_tiny_block_is_cut_short_and_a_line_of_letters_is_not():
    dot = Block(box=(10, 10, 30, 30), vertical=True, lines=((10, 10, 30, 30),), font_size=20.0)
    assert token_limit(dot, 128) == TOKENS_PER_LETTER * LETTER_SLACK + 1 < 128
    column = Block(
        box=(0, 0, 70, 300),
        vertical=True,
        lines=((40, 0, 70, 300), (0, 0, 30, 150)),  # two columns, of 10 and 5 letters
        font_size=30.0,
    )
    assert column.letters() == 15 and token_limit(column, 128) == 128
    assert token_limit(dot, 8) == 8  # never above max_new_tokens


@pytest.mark.parametrize("with_server_api", [False, True])
def test_each_crop_reads_what_it_reads_alone_with_its_limit(tiny_recognizer, with_server_api):
    rec = tiny_recognizer
    image = Image.open(PAGES / "001a.jpg").convert("RGB")
    crops = [image.crop((40 * i, 100, 40 * i + 60, 260)) for i in range(5)]
    limits = [2, 7, 1, 5, 3]

    lock = threading.Lock()  # a server reads one batch at a time; the requests come at once

    class Server:  # what read_crops sees of a Hayai server: `read` of one crop, no read_batches
        reads_batches = False

        def read(self, images, max_new_tokens=128):
            with lock:
                return rec.read(images, max_new_tokens=max_new_tokens)

    reader = Server() if with_server_api else rec
    results = read_crops(reader, crops, batch_size=3, max_new_tokens=12, limits=limits)
    for crop, limit, result in zip(crops, limits, results):
        assert result.token_ids == rec.read([crop], max_new_tokens=limit)[0].token_ids
        assert len(result.token_ids) <= limit


def test_an_engine_that_declares_no_batches_is_never_asked_for_them():
    """The page reader asks what the engine declares (`reads_batches`), not which methods it has."""

    class OneByOne:  # has a read_batches, but declares that it reads crop requests
        reads_batches = False
        config = SimpleNamespace(patch_budget=256, patch_size=16)

        def read(self, images, max_new_tokens=128):
            return [SimpleNamespace(text=f"{image.width}") for image in images]

        def read_batches(self, *args, **kwargs):
            raise AssertionError("an engine without batches was asked for them")

    crops = [Image.new("RGB", (20 + i, 40), "white") for i in range(5)]
    found = [
        Block(box=(0, 0, c.width, 40), vertical=True, lines=((0, 0, c.width, 40),), font_size=20.0)
        for c in crops
    ]
    assert budgets_of(OneByOne(), found, crops) is None  # each crop at the model's own budget
    results = read_crops(OneByOne(), crops, batch_size=2)
    assert [r.text for r in results] == ["20", "21", "22", "23", "24"]
