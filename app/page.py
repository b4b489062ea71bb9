"""A whole page at once: every text block found (app/capture/blocks.py), each read by the model in
batches, in reading order. No Qt here: `hayai page` and the app's OCR worker both call it.

`read_page(recognizer, image)` → a page record (a dict, JSON as it is):

    {"image": name, "width": w, "height": h, "ms": total,
     "blocks": [{"box": [x0, y0, x1, y1], "vertical": bool, "font_size": px,
                 "lines": [[x0, y0, x1, y1], ...], "text": str, "ms": this block's share}]}

Boxes are image pixels, corners as mokuro writes them. `mokuro_page(record)` turns a record into a
page of mokuro's `.mokuro` volume format, which its reader opens.
"""

from __future__ import annotations

import time

import numpy as np

from app.capture.blocks import Block, find_blocks, luminance

CROP_MARGIN = 0.25  # of a block's font size: the margin around its letters in the crop read
PAGE_PATCHES = 2048  # budget a page is opened with: a scan up to ~2400 px a side keeps every pixel
MOKURO_VERSION = "0.2.5"  # the mokuro release whose format we write (pages, blocks, lines)


def blocks_of(image) -> list[Block]:
    """The text blocks of an RGB PIL image, in reading order."""
    return find_blocks(luminance(np.asarray(image)))


def crop_of(image, block: Block):
    margin = max(2, round(block.font_size * CROP_MARGIN))
    x, y, w, h = block.grown(margin, image.width, image.height)
    return image.crop((x, y, x + w, y + h))


def read_crops(
    recognizer, crops, batch_size: int = 8, max_new_tokens: int = 128, progress=None
) -> list:
    """Results (with .text and .ms) for the crops, in order, batch by batch: the local model's
    `read_batches` when it has one, otherwise (a Hayai server) `read` of each crop of a batch at
    once. A batch that fails raises its error. `progress("blocks", done, total)` (model/progress.py) is called after each batch."""
    chunks = [crops[i : i + batch_size] for i in range(0, len(crops), batch_size)]
    pool = None
    if hasattr(recognizer, "read_batches"):
        outcomes = recognizer.read_batches(chunks, max_new_tokens=max_new_tokens)
    else:
        # a server: a batch's crops go as concurrent requests, which it reads as one batch
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(batch_size, thread_name_prefix="hayai-page")

        def one(crop):
            return recognizer.read([crop], max_new_tokens=max_new_tokens)[0]

        outcomes = (list(pool.map(one, chunk)) for chunk in chunks)
    results = []
    try:
        for outcome in outcomes:
            if isinstance(outcome, Exception):
                raise outcome
            results += outcome
            if progress is not None:
                progress("blocks", len(results), len(crops))
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return results


def read_page(
    recognizer,
    image,
    name: str = "",
    batch_size: int = 8,
    max_new_tokens: int = 128,
    scale=1.0,
    progress=None,
) -> dict:
    """The page record of one RGB PIL image (see the module's docstring). `scale` maps the pixels
    of `image` to the file's own (a JPEG decoded at a reduced size); `progress("blocks", done, total)` is
    called once the blocks are found (0, total) and after each batch."""
    started = time.perf_counter()
    found = blocks_of(image)
    if progress is not None:
        progress("blocks", 0, len(found))
    crops = [crop_of(image, b) for b in found]
    results = read_crops(recognizer, crops, batch_size, max_new_tokens, progress)

    def corners(r):
        x, y, w, h = r
        return [round(x * scale), round(y * scale), round((x + w) * scale), round((y + h) * scale)]

    blocks = [
        {
            "box": corners(b.box),
            "vertical": b.vertical,
            "font_size": round(b.font_size * scale, 1),
            "lines": [corners(r) for r in b.lines],
            "text": result.text,
            "ms": round(float(getattr(result, "ms", 0.0)), 2),
        }
        for b, result in zip(found, results)
    ]
    return {
        "image": name,
        "width": round(image.width * scale),
        "height": round(image.height * scale),
        "ms": round((time.perf_counter() - started) * 1000, 1),
        "blocks": blocks,
    }


def mokuro_page(record: dict, img_path: str) -> dict:
    """A page of mokuro's volume format. The model reads a block as one text, so each block has
    one line: its text, over the block's box."""
    blocks = []
    for b in record["blocks"]:
        x0, y0, x1, y1 = b["box"]
        blocks.append(
            {
                "box": [x0, y0, x1, y1],
                "vertical": b["vertical"],
                "font_size": b["font_size"],
                "lines_coords": [[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]],
                "lines": [b["text"]],
            }
        )
    return {
        "version": MOKURO_VERSION,
        "img_width": record["width"],
        "img_height": record["height"],
        "blocks": blocks,
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
