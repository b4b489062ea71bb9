"""The block evaluation's rule and counts, on synthetic pages (the real pages are not in git)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("blocks_eval_evaluate", HERE / "evaluate.py")
assert _spec and _spec.loader
ev = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = ev  # dataclasses look their module up while the class is made
_spec.loader.exec_module(ev)

TRUTH = (100, 100, 200, 200)  # 100 x 100 = 10,000 px


def test_a_box_matches_when_it_covers_70_percent_and_is_at_most_twice_the_area():
    assert ev.matches((100, 100, 200, 200), TRUTH)
    assert ev.matches((100, 100, 200, 170), TRUTH)  # covers exactly 70%
    assert not ev.matches((100, 100, 200, 169), TRUTH)  # 69%
    assert ev.matches((100, 50, 200, 250), TRUTH)  # covers all, exactly twice the area
    assert not ev.matches((100, 50, 200, 251), TRUTH)  # a row more than twice
    assert not ev.matches((0, 0, 400, 400), TRUTH)  # a whole panel holds it but is 16 times larger
    assert not ev.matches(None, TRUTH)


def _page() -> dict:
    return {
        "id": "p",
        "file": "p.png",
        "width": 400,
        "height": 600,
        "tuned": False,
        "blocks": [
            {"box": [20, 20, 60, 200], "kind": "speech", "vertical": True, "text": "a"},
            {"box": [300, 20, 340, 120], "kind": "narration", "vertical": True, "text": "b"},
            {"box": [100, 400, 140, 440], "kind": "speech", "vertical": True, "text": "c"},
            {"box": [200, 250, 380, 330], "kind": "sfx", "vertical": True, "text": "d"},
        ],
        "art": [[150, 100], [300, 500]],
    }


def test_score_counts_recall_boxes_on_no_text_and_clicks():
    page = _page()
    answer = {
        "blocks": [
            {"box": [18, 18, 62, 205]},  # block a, a few px of margin: matches
            {"box": [280, 0, 400, 200]},  # holds block b but is 6 times its area: no match, on text
            {"box": [210, 260, 300, 300]},  # on the sound effect: counted neither way
            {"box": [150, 500, 200, 560]},  # on nothing
        ],
        "ms": 12.5,
        "at": [
            {"point": [40, 110], "box": [18, 18, 62, 205]},  # block a: right
            {"point": [320, 70], "box": [280, 0, 400, 200]},  # block b: too large
            {"point": [120, 420], "box": None},  # block c: nothing
            {"point": [150, 100], "box": None},  # art: nothing, as it should
            {"point": [300, 500], "box": [290, 490, 310, 510]},  # art: proposes something
        ],
    }
    sc = ev.score_page(page, 1.0, answer)
    assert (sc.blocks, sc.found) == (3, 1)
    assert (sc.boxes, sc.no_text) == (3, 1)
    assert (sc.clicks, sc.clicks_ok) == (3, 1)
    assert (sc.art, sc.art_proposing) == (2, 1)
    assert sc.ms == [12.5]
    told = ev.why(page, 1.0, answer)
    assert told == [
        "  missed b [300, 20, 340, 120]: [280, 0, 400, 200] covers 100%, 6.0x its area",
        "  missed c [100, 400, 140, 440]: no box on it",
        "  on no text [150, 500, 200, 560]",
    ]


def test_clicks_and_truth_scale_with_the_page():
    page = _page()
    points, n = ev.clicks(page, 0.5)
    assert n == 3
    assert points == [(20, 55), (160, 35), (60, 210), (75, 50), (150, 250)]
    assert ev.scaled((21, 21, 61, 201), 0.5) == (10, 10, 31, 101)  # outward to whole pixels


def _run(tmp_path: Path, capsys, drop: int) -> str:
    pages = tmp_path / "pages"
    pages.mkdir(exist_ok=True)
    Image.new("RGB", (400, 600), "white").save(pages / "p.png")
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"pages": [_page()]}), encoding="utf-8")
    standin = f"{sys.executable} {HERE / 'standin_blocks.py'} --truth {truth} --drop {drop}"
    args = ["--pages", str(pages), "--truth", str(truth), "--command", standin]
    assert ev.main(args) == 0
    return capsys.readouterr().out


def test_the_script_runs_the_command_at_both_sizes_and_prints_the_counts(tmp_path, capsys):
    out = _run(tmp_path, capsys, drop=0)
    assert "pages shown at 100%" in out and "pages shown at 60%" in out
    held = [line for line in out.splitlines() if line.startswith("HELD OUT")]
    assert len(held) == 2
    for line in held:
        assert "recall 3/3 (100%)" in line and "clicks 3/3 (100%)" in line
        assert "no text 0/3 (0%)" in line and "art clicks proposing 0/2 (0%)" in line


def test_a_block_the_command_misses_lowers_recall_and_its_click(tmp_path, capsys):
    out = _run(tmp_path, capsys, drop=1)
    held = [line for line in out.splitlines() if line.startswith("HELD OUT")]
    assert all("recall 2/3 (67%)" in line and "clicks 2/3 (67%)" in line for line in held)


def test_tuned_pages_are_totalled_apart_and_never_as_held_out(tmp_path, capsys):
    pages = tmp_path / "pages"
    pages.mkdir()
    Image.new("RGB", (400, 600), "white").save(pages / "p.png")
    tuned = {**_page(), "id": "q", "tuned": True}
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"pages": [_page(), tuned]}), encoding="utf-8")
    standin = f"{sys.executable} {HERE / 'standin_blocks.py'} --truth {truth} --drop 0"
    args = ["--pages", str(pages), "--truth", str(truth), "--command", standin, "--scales", "1"]
    assert ev.main(args) == 0
    out = capsys.readouterr().out.splitlines()
    totals = [line for line in out if line.startswith(("TUNED", "HELD OUT"))]
    assert len(totals) == 2
    assert totals[0].startswith("TUNED ") and "recall 3/3 " in totals[0]
    assert totals[1].startswith("HELD OUT ") and "recall 3/3 " in totals[1]
    assert any(line.startswith("q (tuned)") for line in out)
