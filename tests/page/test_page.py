"""`hayai page`: whole pages read block by block (app/page/read.py, app/page/cli.py), as JSON and as a
mokuro volume, resumed, and through `hayai serve`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from app.cli import main
from app.page.read import BATCH_SIZE, blocks_of, crop_of, read_crops, read_page, split_lines

pytestmark = pytest.mark.slow  # whole pages through the tiny model: seconds each on 2 cores

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages"


def volume(tmp_path, names=("000b.jpg", "002a.jpg")) -> Path:
    folder = tmp_path / "Nyan" / "vol1"
    folder.mkdir(parents=True)
    for name in names:
        shutil.copy(PAGES / name, folder / name)
    return folder


def test_page_json_has_every_block_read_in_order(tmp_path, tiny_v21, capsys):
    folder = volume(tmp_path)
    # WHEN a folder of two real pages is read as JSON
    code = main(["page", str(folder), "--json", "--model", str(tiny_v21), "--max-new-tokens", "4"])
    out = capsys.readouterr()
    assert code == 0, out.err
    records = [json.loads(line) for line in out.out.splitlines()]
    # THEN one object per page, in name order, with its blocks: box, vertical, lines, text, ms
    assert [Path(r["image"]).name for r in records] == ["000b.jpg", "002a.jpg"]
    for r in records:
        assert (r["img_width"], r["img_height"]) == (827, 1170) and r["ms"] > 0
        assert len(r["blocks"]) >= 5
        for b in r["blocks"]:
            x0, y0, x1, y1 = b["box"]
            assert 0 <= x0 < x1 <= 827 and 0 <= y0 < y1 <= 1170
            assert isinstance(b["vertical"], bool) and b["font_size"] > 0
            # its lines: the text spread over the line quadrilaterals, all inside the box
            assert b["lines_coords"] and len(b["lines"]) == len(b["lines_coords"])
            assert all(x0 <= x <= x1 and y0 <= y <= y1 for q in b["lines_coords"] for x, y in q)
            assert isinstance(b["text"], str) and b["ms"] >= 0
            assert "".join(b["lines"]) == b["text"].replace("\n", "")
    # ... and a progress line per page on stderr
    assert "page 1/2 000b.jpg" in out.err and "page 2/2 002a.jpg" in out.err


def test_a_blocks_text_is_spread_over_its_lines_by_their_lengths():
    # two columns, the second half as long: two thirds of the letters, then one third
    assert split_lines("あいうえおかきくけ", [200, 100]) == ["あいうえおか", "きくけ"]
    # the model's own line breaks, one per line, are the lines
    assert split_lines("あいう\nえおかきくけ", [200, 100]) == ["あいう", "えおかきくけ"]
    # a line never starts with a closing mark, nor ends with an opening one
    assert split_lines("あいうえ。かき", [4, 3]) == ["あいうえ。", "かき"]
    assert split_lines("あい」うえ", [3, 2]) == ["あい」", "うえ"]
    assert split_lines("あいう「えお」", [3, 4]) == ["あいう", "「えお」"]
    assert split_lines("あいうえ「お」", [5, 2]) == ["あいうえ", "「お」"]
    # fewer letters than lines: the last lines are empty, and nothing is lost
    assert "".join(split_lines("あ", [10, 10, 10])) == "あ"
    assert split_lines("", [10, 10]) == ["", ""] and split_lines("あ", []) == []


def test_the_texts_are_the_models_reading_of_each_block_crop(tiny_recognizer):
    from app.page.read import blocks_of, budgets_of, crop_of

    image = Image.open(PAGES / "001a.jpg").convert("RGB")
    record = read_page(tiny_recognizer, image, "001a.jpg", batch_size=3, max_new_tokens=6)
    found = blocks_of(image)
    crops = [crop_of(image, b) for b in found]
    budgets = budgets_of(tiny_recognizer, found, crops)
    # each crop has the patches its letters need, fewer than the model's budget for small blocks
    assert len(set(budgets)) > 2 and min(budgets) < tiny_recognizer.config.patch_budget
    one_by_one = [
        tiny_recognizer.read([c], max_new_tokens=6, budgets=[n])[0].text
        for c, n in zip(crops, budgets)
    ]
    # batching (by similar budgets, out of reading order) does not change what each block reads,
    # and the blocks come in reading order
    assert [b["text"] for b in record["blocks"]] == one_by_one
    assert [b["box"][:2] for b in record["blocks"]] == [[b.box[0], b.box[1]] for b in found]


def test_with_full_patches_a_block_reads_what_hayai_ocr_reads_of_its_crop(
    tmp_path, tiny_v21, tiny_recognizer, capsys
):
    from app.page.read import blocks_of, crop_of

    image = Image.open(PAGES / "001a.jpg").convert("RGB")
    record = read_page(tiny_recognizer, image, batch_size=4, max_new_tokens=6, patches="full")
    names = []
    for i, b in enumerate(blocks_of(image)):
        names.append(str(tmp_path / f"{i:02}.png"))
        crop_of(image, b).save(names[-1])  # lossless: the same pixels
    # the same precision as tiny_recognizer's: `auto` may take a faster path on this CPU (AVX-512
    # BF16), whose random tiny model's near-tied logits can pick another token for some crop
    ocr = ["ocr", *names, "--json", "--model", str(tiny_v21), "--max-new-tokens", "6"]
    assert main([*ocr, "--precision", "exact"]) == 0
    texts = [json.loads(line)["text"] for line in capsys.readouterr().out.splitlines()]
    assert [b["text"] for b in record["blocks"]] == texts


def test_mokuro_volume_and_resume(tmp_path, tiny_v21, capsys):
    folder = volume(tmp_path)
    out_file = folder.parent / "vol1.mokuro"
    args = ["page", str(folder), "--mokuro", str(folder.parent / "vol1"), "--model"]
    assert main(args + [str(tiny_v21), "--max-new-tokens", "4"]) == 0
    capsys.readouterr()
    data = json.loads(out_file.read_text(encoding="utf-8"))
    # mokuro's volume format: names and ids, pages with their size, image path and blocks
    assert data["title"] == "Nyan" and data["volume"] == "vol1"
    assert data["title_uuid"] and data["volume_uuid"]
    assert [p["img_path"] for p in data["pages"]] == ["000b.jpg", "002a.jpg"]
    for page in data["pages"]:
        assert (page["img_width"], page["img_height"]) == (827, 1170)
        for b in page["blocks"]:
            assert set(b) == {"box", "vertical", "font_size", "lines_coords", "lines"}
            assert len(b["lines"]) == len(b["lines_coords"]) and len(b["lines_coords"][0]) == 4
            # the types mokuro's reader reads: ints for the box, [x, y] corners, text lines
            assert all(isinstance(v, int) for v in b["box"]) and isinstance(b["font_size"], float)
            assert all(len(corner) == 2 for quad in b["lines_coords"] for corner in quad)
            assert all(isinstance(line, str) for line in b["lines"])
    # each page is kept where mokuro keeps its own (_ocr/VOLUME/NAME.json, the image's suffix
    # replaced), as mokuro keeps it (its page without img_path), with our record beside it: mokuro,
    # run on this folder later, takes the pages as read and builds its volume from them
    for page in data["pages"]:
        kept = json.loads(
            (folder.parent / "_ocr" / "vol1" / page["img_path"]).with_suffix(".json").read_text()
        )
        assert set(kept) == {"version", "img_width", "img_height", "blocks", "hayai"}
        assert {k: v for k, v in page.items() if k != "img_path"} == {
            k: v for k, v in kept.items() if k != "hayai"
        }
        assert kept["hayai"]["record"]["blocks"][0]["text"] is not None  # for --json on resume
    assert sorted(p.name for p in (folder.parent / "_ocr" / "vol1").iterdir()) == [
        "000b.json",
        "002a.json",
    ]
    # WHEN it runs again with a model folder that cannot load: nothing is read again
    first = out_file.read_text(encoding="utf-8")
    assert main(args + [str(tmp_path / "no-model")]) == 0, capsys.readouterr().err
    assert json.loads(out_file.read_text(encoding="utf-8")) == json.loads(first)
    # ... but a page kept by an older Hayai (its record had width, height and line boxes) is
    kept_file = folder.parent / "_ocr" / "vol1" / "000b.json"
    newer = kept_file.read_text(encoding="utf-8")
    older = json.loads(newer)
    del older["hayai"]["layout"]  # an older Hayai kept no layout
    record = older["hayai"]["record"]
    record["width"], record["height"] = record.pop("img_width"), record.pop("img_height")
    kept_file.write_text(json.dumps(older), encoding="utf-8")
    assert main(args + [str(tmp_path / "no-model")]) == 2
    assert "no-model" in capsys.readouterr().err
    kept_file.write_text(newer, encoding="utf-8")
    # ... and a page that changed: that one is read again (and here the model is missing)
    page = folder / "002a.jpg"
    Image.open(page).transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(page, quality=80)
    assert main(args + [str(tmp_path / "no-model")]) == 2
    assert "no-model" in capsys.readouterr().err


def test_a_broken_page_is_an_error_line_and_the_rest_are_read(tmp_path, tiny_v21, capsys):
    folder = volume(tmp_path, names=("001b.jpg",))
    (folder / "000.jpg").write_bytes(b"\xff\xd8 not a jpeg")
    code = main(["page", str(folder), "--json", "--model", str(tiny_v21), "--max-new-tokens", "2"])
    out = capsys.readouterr()
    assert code == 1
    broken, good = [json.loads(line) for line in out.out.splitlines()]
    assert Path(broken["image"]).name == "000.jpg" and broken["error"]
    assert Path(good["image"]).name == "001b.jpg" and good["blocks"]
    assert "000.jpg" in out.err


def test_pages_are_read_through_hayai_serve(tmp_path, hayai_server, tiny_recognizer, capsys):
    folder = volume(tmp_path, names=("002b.jpg",))
    before = hayai_server.get("/health")["stats"]["served"]
    code = main(
        ["page", str(folder), "--json", "--server", hayai_server.url]
        + ["--server-key", hayai_server.key]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    (record,) = [json.loads(line) for line in out.out.splitlines()]
    # the server read every block, and its texts are the local model's: every crop at the model's
    # budget and the server's 16 new tokens (its /v1/ocr takes no limit per crop: the blocks' token
    # limits, down to 10 here, do not reach it)
    assert hayai_server.get("/health")["stats"]["served"] == before + len(record["blocks"])
    image = Image.open(folder / "002b.jpg").convert("RGB")
    local = read_crops(tiny_recognizer, [crop_of(image, b) for b in blocks_of(image)], 16, 16)
    assert [b["text"] for b in record["blocks"]] == [r.text for r in local]


def test_a_page_decoded_smaller_keeps_the_files_coordinates(tiny_recognizer):
    # a page image at half size with scale 2 gives the boxes of the full-size file
    image = Image.open(PAGES / "002b.jpg").convert("RGB")
    half = image.resize((image.width // 2, image.height // 2))
    record = read_page(tiny_recognizer, half, max_new_tokens=2, scale=2.0)
    assert (record["img_width"], record["img_height"]) == (826, 1170)
    assert max(b["box"][2] for b in record["blocks"]) > 413
    assert np.all(np.array([b["box"] for b in record["blocks"]]) <= 1170)


def test_the_page_bench_without_image_reads_the_repositorys_sample_page():
    from app.page import bench

    assert bench.SAMPLE.is_file(), bench.SAMPLE  # `hayai bench --page` with no --image reads it


def test_the_page_bench_reports_patches_and_tokens_per_block(tiny_v21, capsys):
    reports = {}
    for patches in ("fit", "full"):
        args = ["bench", "--page", "--model", str(tiny_v21), "--image", str(PAGES / "001a.jpg")]
        args += ["--runs", "1", "--max-new-tokens", "3", "--json", "--patches", patches]
        assert main(args) == 0
        reports[patches] = json.loads(capsys.readouterr().out)
    fit, full = reports["fit"], reports["full"]
    assert fit["blocks"] == len(fit["crop_patches"]) == len(fit["tokens_per_block"]) > 3
    assert fit["batch_size"] == BATCH_SIZE  # hayai page's, not the crop bench's 1
    (budget,) = set(full["crop_patches"])  # the model's own budget for every crop
    assert max(fit["crop_patches"]) <= budget and sum(fit["crop_patches"]) < budget * fit["blocks"]
    assert all(1 <= n <= 3 for n in fit["tokens_per_block"])  # at most --max-new-tokens
    assert fit["page_cpu_s"] > 0 and fit["page_ms"]["median"] > 0
