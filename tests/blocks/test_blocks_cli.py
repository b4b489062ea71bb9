"""`hayai blocks IMAGE... [--json] [--at X,Y]...` (app/blocks/cli.py): its output is a contract
that scripts and checks rely on (issue #38 item 5), checked here key by key."""

from __future__ import annotations

import json

import pytest
from blocks_pages import PAGES, balloon_page, needs_noto

from app.cli import main

KEYS = {"image", "width", "height", "blocks", "ms"}


def _run(capsys, *argv) -> tuple[int, list[dict], str]:
    code = main(["blocks", *argv])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines() if line.strip()], err


def _box_ok(box, width, height) -> bool:
    return (
        len(box) == 4
        and all(type(v) is int for v in box)
        and 0 <= box[0] < box[2] <= width
        and 0 <= box[1] < box[3] <= height
    )


def _check_contract(rec: dict, points=()) -> None:
    assert set(rec) == KEYS | ({"at"} if points else set())
    assert type(rec["width"]) is int and type(rec["height"]) is int
    assert type(rec["ms"]) is float and rec["ms"] > 0
    for b in rec["blocks"]:
        assert set(b) == {"box", "vertical", "lines"} and type(b["vertical"]) is bool
        assert _box_ok(b["box"], rec["width"], rec["height"]), b
        x0, y0, x1, y1 = b["box"]
        for line in b["lines"]:  # each line inside its block's box
            assert _box_ok(line, rec["width"], rec["height"]), b
            assert x0 <= line[0] and line[2] <= x1 and y0 <= line[1] and line[3] <= y1, b
        # the box is the smallest around its lines: each side touches one
        assert b["box"] == [
            min(r[0] for r in b["lines"]),
            min(r[1] for r in b["lines"]),
            max(r[2] for r in b["lines"]),
            max(r[3] for r in b["lines"]),
        ]
    if points:
        assert [a["point"] for a in rec["at"]] == [list(p) for p in points]


@pytest.mark.slow
def test_json_on_a_test_scan_keeps_the_contract(capsys):
    page = str(PAGES / "002b.jpg")
    code, (rec,), err = _run(capsys, "--json", page, "--at", "440,775", "--at", "5,5")
    assert code == 0 and err == ""
    assert rec["image"] == page and (rec["width"], rec["height"]) == (827, 1170)
    _check_contract(rec, [(440, 775), (5, 5)])
    assert len(rec["blocks"]) >= 8
    hit, miss = rec["at"]
    # the click on the balloon's "．．．" proposes the block there, one in the list; the corner nothing
    assert hit["box"] in [b["box"] for b in rec["blocks"]]
    assert hit["box"][0] <= 440 < hit["box"][2] and hit["box"][1] <= 775 < hit["box"][3]
    assert miss == {"point": [5, 5], "box": None}


@needs_noto
def test_json_on_rendered_text_is_in_reading_order_right_to_left(capsys, tmp_path):
    image, inks = balloon_page(
        [
            ((520, 60, 780, 420), ("みぎのふきだし", "です"), 130),
            ((120, 60, 380, 420), ("ひだりのほう", "です"), 130),
        ],
        size=(900, 480),
    )
    path = tmp_path / "two.png"
    image.save(path)
    middles = [((x0 + x1) // 2, (y0 + y1) // 2) for x0, y0, x1, y1 in inks]
    at = [arg for x, y in middles for arg in ("--at", f"{x},{y}")]
    code, (rec,), _ = _run(capsys, "--json", str(path), *at)
    assert code == 0
    _check_contract(rec, middles)
    assert (rec["width"], rec["height"]) == (900, 480)
    right, left = rec["blocks"]  # the right-hand balloon is read first
    assert right["vertical"] and left["vertical"] and left["box"][2] < right["box"][0]
    assert [len(right["lines"]), len(left["lines"])] == [2, 2]
    assert right["lines"][0][0] > right["lines"][1][0]  # its columns right to left
    # x1, y1 exclusive: the box ends one px past the last ink, plus its few px of margin
    for block, (x0, y0, x1, y1) in zip((right, left), inks):
        bx0, by0, bx1, by1 = block["box"]
        assert (
            0 <= x0 - bx0 <= 5 and 0 <= y0 - by0 <= 5 and 0 <= bx1 - x1 <= 5 and 0 <= by1 - y1 <= 5
        )
    # a click at each block's middle proposes that block
    assert [a["box"] for a in rec["at"]] == [right["box"], left["box"]]


def test_a_bad_image_is_one_sentence_and_the_others_are_still_done(capsys, tmp_path):
    bad = tmp_path / "notes.png"
    bad.write_text("not a picture")
    good = tmp_path / "blank.png"
    from PIL import Image

    Image.new("RGB", (64, 48), "white").save(good)
    code, records, err = _run(capsys, "--json", str(bad), str(good), str(tmp_path / "gone.png"))
    assert code == 1
    assert [r["image"] for r in records] == [str(good)]  # stdout holds only the contract's lines
    assert records[0]["blocks"] == [] and (records[0]["width"], records[0]["height"]) == (64, 48)
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("hayai: ") for line in lines)
    assert str(bad) in lines[0] and "no such file" in lines[1]
    assert "Traceback" not in err


def test_without_json_one_readable_line_per_block(capsys, tmp_path):
    from PIL import Image

    path = tmp_path / "blank.png"
    Image.new("RGB", (64, 48), "white").save(path)
    code = main(["blocks", str(path), "--at", "3,4"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and out[0].startswith(f"# {path} (64×48") and out[1:] == ["  at 3,4: no block"]


@pytest.mark.parametrize("bad", ["3", "a,b", "-1,4", "1,2,3"])
def test_a_point_must_be_two_whole_numbers(capsys, bad):
    with pytest.raises(SystemExit):
        main(["blocks", "x.png", "--at", bad])
    assert "--at" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_blocks_reports_each_page_by_stage_a_click_and_memory(capsys):
    from app.cli import build_parser, command_function

    # GIVEN `hayai bench --blocks --runs 1 --json` as the command line parses it
    args = build_parser().parse_args(["bench", "--blocks", "--runs", "1", "--json"])
    # WHEN it runs
    assert command_function(args)(args) == 0
    report = json.loads(capsys.readouterr().out)
    # THEN every test scan, their spread and the drawn screen are timed by stage, and the spread
    # and the screen again by the float detector (a GPU's; the CPU runs int8)
    big = {"spread 1654×1170", "drawn screen 1920×1080"}
    names = {p.name for p in PAGES.glob("*.jpg")} | big | {f"{n}, float" for n in big}
    assert set(report["pages"]) == names
    assert report["pages"]["spread 1654×1170"]["size"] == [1654, 1170]
    # and each row says which model ran it (the packaging smoke test reads this): int8 on the CPU
    on_gpu = "CUDAExecutionProvider" in report["providers"]
    for name, page in report["pages"].items():
        float_row = name.endswith(", float") or on_gpu
        assert page["precision"] == ("float32" if float_row else "int8"), name
    for page in report["pages"].values():
        for stage in ("detector_ms", "grouping_ms"):
            assert page[stage]["wall"] > 0 and page[stage]["cpu"] >= 0
    assert 0 < report["click_ms"]["median"] <= report["click_ms"]["max"]
    assert (
        report["peak_python_mb"] > 0 and report["rss_mb"]["peak"] >= report["rss_mb"]["loaded"] > 0
    )
    assert report["runs"] == 1 and len(report["load_average"]) == 2
