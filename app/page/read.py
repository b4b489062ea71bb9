"""A whole page at once: every text block found (app/blocks: the text detector's lines joined into
blocks), each read by the model in batches, in reading order. No Qt here: `hayai page` and the
app's OCR worker both call it.

`read_page(recognizer, image)` → a page record (a dict, JSON as it is):

    {"image": name, "img_width": w, "img_height": h, "ms": total,
     "blocks": [{"box": [x0, y0, x1, y1], "vertical": bool, "font_size": px,
                 "lines": [str, ...], "lines_coords": [[[x, y] * 4], ...],
                 "text": str, "ms": this block's share}]}

Boxes are image pixels, corners as mokuro writes them; a block's `lines` are its text spread over
the columns (right to left) or rows the finder found, each over its `lines_coords` quadrilateral,
as mokuro writes a block's lines. `mokuro_page(record)` turns a record into a page of mokuro's
`.mokuro` volume format, which its reader opens.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy and the detector load only to find blocks: `hayai --help` reads this
    from PIL.Image import Image

    from app.blocks import Block, Box
    from model.progress import Progress

CROP_MARGIN = 0.25  # of a block's font size: the margin around its letters in the crop read
PAGE_PATCHES = 2048  # budget a page is opened with: a scan up to ~2400 px a side keeps every pixel
MOKURO_VERSION = "0.2.5"  # the mokuro release whose format we write (pages, blocks, lines)
# Patches per crop ("fit"): a crop is read at the size where its letters are GLYPH_PX high, two
# patches, the size of the letters of the densest blocks the model reads at its full budget (a
# 256-patch crop of 5 columns of 10 letters); the full budget would enlarge a short line 3-8x, and
# the model's work grows with its patches. "full": every crop at the model's budget, as `hayai ocr`.
GLYPH_PX = 32
# Crops per batch of a page. With packed rows (docs/model.md) a batch's tower and prefill cost its
# crops' own patches whatever their sizes, and a decode step reads the decoder's weights (~70 MB)
# once for all its rows: a 15-block page is one batch. A page of more is split into batches of
# even sizes (17 blocks: 9 + 8, not 16 + 1).
BATCH_SIZE = 16
# A block's token limit: a block cannot need more tokens than its letters' UTF-8 bytes (the
# tokenizer is byte-level BPE: a token is one byte or more, and a kana, kanji or full-width mark is 3
# bytes), so at most TOKENS_PER_LETTER per letter, plus its end of text. Its letters are estimated
# from the finder's lines (`Block.letters`: each line's length over the font size, its letters'
# size). On the five test pages the ground truth's texts of the 59 blocks found whole have 0.5-2.2
# times the letters estimated (median 0.94): the most where a "．．．" (three characters in one
# letter's cell) ends a short block (あが．．．: 5 characters, 2.2 estimated). So the limit allows
# LETTER_SLACK times the estimate, 1.35x the worst seen, enough for a block of
# ellipses alone (three characters a cell): at the default 128 tokens it cuts blocks of under ~14
# estimated letters, to 10 tokens for an estimate of one letter (a mark, "わ", a false find in the
# drawing), whose runaway repetition would otherwise hold their whole batch for 128 decode steps.
# (Before the finder measured its lines, 2-3 close columns read as one wide line left the estimate
# up to 8x short, and the slack was 16.)
TOKENS_PER_LETTER = 3
LETTER_SLACK = 3
# px: the letter size a block's box is filled with for the other estimate of its letters
# (`letters_of`): a mark's box of 20×20 px still counts one letter (10 tokens); the test pages'
# letters are 18-35 px, so the box's count is the larger only where lines were taken for fewer
AREA_LETTER_PX = 20
PATCHES = ("fit", "full")
PATCHES_HELP = (
    "fit (default): each crop read with the patches its letters need (32 px high, at most the "
    "model's budget); full: every crop at the model's budget, as hayai ocr reads it"
)


# Marks a line never starts with (kinsoku): where a block's text is cut between its lines, a
# closing mark stays at the end of the line before, and an opening one goes to the next.
CLOSING = "、。，．,.!?！？…‥ー～）」』】〕〉》"
OPENING = "（「『【〔〈《"


def split_lines(text: str, lengths: Sequence[float]) -> list[str]:
    """A block's text spread over its lines, given their lengths along the text (in reading order).
    The model reads a block as one text: where it wrote one line break per line, its lines; otherwise
    each line gets a share of the letters in proportion to its length (lines of one block have one
    letter size), cut where no line starts with a closing mark. The lines joined are the text, less
    its line breaks."""
    if not lengths:
        return []
    parts = text.split("\n")
    if len(parts) == len(lengths):
        return parts
    flat = "".join(parts)
    total = sum(lengths) or 1.0
    cuts, run, prev = [], 0.0, 0
    for length in lengths[:-1]:
        run += length
        cut = max(prev, round(len(flat) * run / total))
        while prev < cut < len(flat) and flat[cut] in CLOSING:
            cut += 1
        while prev < cut - 1 and flat[cut - 1] in OPENING:
            cut -= 1
        cuts.append(cut)
        prev = cut
    bounds = [0, *cuts, len(flat)]
    return [flat[a:b] for a, b in zip(bounds, bounds[1:])]


def quad(box: Sequence[int]) -> list[list[int]]:
    """A box [x0, y0, x1, y1] as mokuro's line quadrilateral: its corners clockwise from top left."""
    x0, y0, x1, y1 = box
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def line_boxes(block: dict) -> list[list[int]]:
    """A record block's lines as boxes [x0, y0, x1, y1] (the box itself for a block without any)."""
    boxes = [
        [min(x for x, _ in q), min(y for _, y in q), max(x for x, _ in q), max(y for _, y in q)]
        for q in block.get("lines_coords", [])
    ]
    return boxes or [block["box"]]


def block_record(block: Block, text: str, ms: float = 0.0, scale: float = 1.0) -> dict:
    """A found block and its text as a page record's block (the module's docstring); `scale` maps
    the pixels it was found in to the file's own."""

    def corners(r: Box) -> list[int]:
        return [round(v * scale) for v in r]

    lengths = [(y1 - y0) if block.vertical else (x1 - x0) for x0, y0, x1, y1 in block.lines]
    return {
        "box": corners(block.box),
        "vertical": block.vertical,
        "font_size": round(block.font_size * scale, 1),
        "lines": split_lines(text, lengths),
        "lines_coords": [quad(corners(r)) for r in block.lines],
        "text": text,
        "ms": round(ms, 2),
    }


def blocks_of(image: Image) -> list[Block]:
    """The text blocks of an RGB PIL image, in reading order (app/blocks' `find_blocks`: the same
    blocks a click in the selection proposes)."""
    from app.blocks import find_blocks

    return find_blocks(image)


def crop_margin(block: Block) -> int:
    """Px of margin around a block's letters in the crop read: CROP_MARGIN of its font size."""
    return max(2, round(block.font_size * CROP_MARGIN))


def crop_box(block: Block, width: int, height: int) -> Box:
    """The box a block is read from: its letters' box and CROP_MARGIN of its font size around
    them, inside the image (`width` × `height`)."""
    margin = crop_margin(block)
    x0, y0, x1, y1 = block.box
    return (
        max(0, x0 - margin),
        max(0, y0 - margin),
        min(width, x1 + margin),
        min(height, y1 + margin),
    )


def crop_of(image: Image, block: Block) -> Image:
    return image.crop(crop_box(block, image.width, image.height))


def letters_of(block: Block) -> float:
    """The letters a block's read may hold: its lines' estimate (`Block.letters`), or as many
    letters of AREA_LETTER_PX as its box holds where that is more. The detector sometimes takes two
    close columns for one line twice as thick (the int8 model, 002a's 遠くまで捨てに行く: one 53×73
    px line of 35.5 px "letters", 2.1 estimated for 9), which counts a quarter of the letters."""
    x0, y0, x1, y1 = block.box
    return max(block.letters(), (x1 - x0) * (y1 - y0) / AREA_LETTER_PX**2)


def token_limit(block: Block, max_new_tokens: int) -> int:
    """The most tokens a block's read may take (see TOKENS_PER_LETTER), at most max_new_tokens."""
    letters = math.ceil(LETTER_SLACK * letters_of(block))
    return min(max_new_tokens, TOKENS_PER_LETTER * letters + 1)


def crop_budget(block: Block, crop: Image, full: int, patch: int = 16) -> int:
    """The patches a crop of `block` is read with ("fit"): its letters GLYPH_PX high, at most `full`."""
    scale = GLYPH_PX / max(1.0, block.font_size)
    return min(full, math.ceil(crop.height * scale / patch) * math.ceil(crop.width * scale / patch))


def budgets_of(
    recognizer, found: list[Block], crops: list[Image], patches: str = "fit"
) -> list[int] | None:
    """Each crop's patch budget, or None: the model's own for every crop ("full", and a server,
    which reads every crop as `hayai ocr` does)."""
    if patches not in PATCHES:
        raise ValueError(f"patches must be one of {', '.join(PATCHES)}, not {patches!r}")
    if patches == "full" or not recognizer.reads_batches:
        return None
    config = recognizer.config
    return [crop_budget(b, c, config.patch_budget, config.patch_size) for b, c in zip(found, crops)]


def batches_of(order: list[int], batch_size: int) -> list[list[int]]:
    """`order` cut into the fewest batches of at most `batch_size`, of even sizes (the first ones
    one more where they cannot all be equal)."""
    count = -(-len(order) // batch_size)
    size, extra = divmod(len(order), count) if count else (0, 0)
    out, start = [], 0
    for i in range(count):
        end = start + size + (i < extra)
        out.append(order[start:end])
        start = end
    return out


def read_crops(
    recognizer,
    crops: list[Image],
    batch_size: int = BATCH_SIZE,
    max_new_tokens: int = 128,
    progress: Progress | None = None,
    budgets: list[int] | None = None,
    limits: list[int] | None = None,
) -> list:
    """Results (with .text and .ms) for the crops, in order, batch by batch: the local model's
    `read_batches` where it reads batches (`reads_batches`), otherwise (a Hayai server) `read` of
    each crop of a batch at once. A batch that fails raises its error. `progress("blocks", done, total)` (model/progress.py) is called after each batch.
    budgets: each crop's patch budget (local model only); crops of similar budgets share a batch, so
    that little is padded, and each reads as it would alone at its own budget. limits: each crop's
    token limit (at most max_new_tokens): it reads what it reads alone with that many."""
    order = sorted(range(len(crops)), key=lambda i: budgets[i]) if budgets else range(len(crops))
    ranks = batches_of(list(order), batch_size)
    chunks = [[crops[i] for i in rank] for rank in ranks]
    pool = None
    if recognizer.reads_batches:
        outcomes = recognizer.read_batches(
            chunks,
            max_new_tokens=max_new_tokens,
            budgets=None if budgets is None else [[budgets[i] for i in rank] for rank in ranks],
            limits=None if limits is None else [[limits[i] for i in rank] for rank in ranks],
        )
    else:
        # a server: a batch's crops go as concurrent requests, which it reads as one batch
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(batch_size, thread_name_prefix="hayai-page")

        def one(i):
            tokens = max_new_tokens if limits is None else limits[i]
            return recognizer.read([crops[i]], max_new_tokens=tokens)[0]

        outcomes = (list(pool.map(one, rank)) for rank in ranks)
    results: list = [None] * len(crops)
    done = 0
    try:
        for rank, outcome in zip(ranks, outcomes):
            if isinstance(outcome, Exception):
                raise outcome
            for i, result in zip(rank, outcome):
                results[i] = result
            done += len(rank)
            if progress is not None:
                progress("blocks", done, len(crops))
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return results


def read_page(
    recognizer,
    image: Image,
    name: str = "",
    batch_size: int = BATCH_SIZE,
    max_new_tokens: int = 128,
    scale: float = 1.0,
    progress: Progress | None = None,
    patches: str = "fit",
) -> dict:
    """The page record of one RGB PIL image (see the module's docstring). `scale` maps the pixels
    of `image` to the file's own (a JPEG decoded at a reduced size); `progress("blocks", done, total)`
    is called once the blocks are found (0, total) and after each batch; `patches`: "fit" or "full"
    (see GLYPH_PX)."""
    started = time.perf_counter()
    found = blocks_of(image)
    if progress is not None:
        progress("blocks", 0, len(found))
    crops = [crop_of(image, b) for b in found]
    budgets = budgets_of(recognizer, found, crops, patches)
    limits = [token_limit(b, max_new_tokens) for b in found]
    results = read_crops(recognizer, crops, batch_size, max_new_tokens, progress, budgets, limits)

    blocks = [
        block_record(b, result.text, float(getattr(result, "ms", 0.0)), scale)
        for b, result in zip(found, results)
    ]
    return {
        "image": name,
        "img_width": round(image.width * scale),
        "img_height": round(image.height * scale),
        "ms": round((time.perf_counter() - started) * 1000, 1),
        "blocks": blocks,
    }


MOKURO_BLOCK = ("box", "vertical", "font_size", "lines_coords", "lines")


def mokuro_page(record: dict, img_path: str) -> dict:
    """A page of mokuro's volume format: the record's blocks as they are, less the text and time
    mokuro does not keep."""
    return {
        "version": MOKURO_VERSION,
        "img_width": record["img_width"],
        "img_height": record["img_height"],
        "blocks": [{k: b[k] for k in MOKURO_BLOCK} for b in record["blocks"]],
        "img_path": img_path,
    }


def mokuro_volume(title: str, volume: str, pages: list[dict]) -> dict:
    """The `.mokuro` file: the volume's names, stable ids (the same names give the same ids, so a
    re-run keeps the reader's place) and its pages."""
    import uuid

    title_uuid = uuid.uuid5(uuid.NAMESPACE_URL, f"hayai-title:{title}")
    return {
        "version": MOKURO_VERSION,
        "title": title,
        "title_uuid": str(title_uuid),
        "volume": volume,
        "volume_uuid": str(uuid.uuid5(title_uuid, volume)),
        "pages": pages,
    }
