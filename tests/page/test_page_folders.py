"""`hayai page` on a volume as people have it (app/page/cli.py, model/images.py `expand_inputs`):
pages in natural order as mokuro orders them (1, 2, 10), chapter subfolders read and named as
mokuro names them, and a line for each file left out, saying why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PIL import Image

from app.cli import main
from model.images import expand_inputs, natural_key

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages"


def text_page() -> Image.Image:
    """A 240 px square of a real page, with two of its blocks."""
    return Image.open(PAGES / "000b.jpg").convert("RGB").crop((560, 60, 800, 300))


def blank_page(shade: int = 255) -> Image.Image:
    return Image.new("RGB", (64, 64), (shade, shade, shade))


def page_args(*inputs: Path | str, model: Path, more: tuple[str, ...] = ()) -> list[str]:
    return ["page", *map(str, inputs), "--max-new-tokens", "2", "--model", str(model), *more]


def test_natural_order_is_mokuros():
    # what natsort (mokuro 0.2.5's natsorted over the pages' paths) gives for these
    names = ["10.png", "2.png", "1.png", "第10話/1.png", "第2話/10.png", "第2話/9.png", "a.png"]
    names += ["01.png", "p１０.png", "p２.png", "ch1a/1.png", "ch1/1.png"]
    assert sorted(names, key=natural_key) == [
        "01.png",
        "1.png",
        "2.png",
        "10.png",
        "a.png",
        "ch1/1.png",
        "ch1a/1.png",
        "p２.png",
        "p１０.png",
        "第2話/9.png",
        "第2話/10.png",
        "第10話/1.png",
    ]


def test_a_folder_is_its_images_and_its_subfolders_in_natural_order(tmp_path):
    for name in ("10.png", "2.png", "1.png", "ch10/1.png", "ch2/10.png", "ch2/9.jpg", "x.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "empty").mkdir()
    skipped: list[tuple[str, str]] = []
    found = [os.path.relpath(n, tmp_path) for n in expand_inputs([str(tmp_path)], skipped)]
    assert found == ["1.png", "2.png", "10.png", "ch2/9.jpg", "ch2/10.png", "ch10/1.png"]
    assert [(Path(n).name, why.split(" (")[0]) for n, why in skipped] == [
        ("x.txt", "not an image by its name")
    ]


@pytest.mark.slow  # pages through the tiny model
def test_a_volume_reads_in_natural_order_with_its_chapters_as_mokuro_names_them(
    tmp_path, tiny_v21, capsys
):
    folder = tmp_path / "Nyan" / "vol1"
    pages = [
        "1.png",
        "2.png",
        "10.png",
        "第1話/1.png",
        "第1話/2.png",
        "第2話/1.png",
        "第10話/1.png",
    ]
    for i, name in enumerate(pages):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (text_page() if name == "第10話/1.png" else blank_page(255 - i)).save(folder / name)
    out_file = tmp_path / "Nyan" / "vol1.mokuro"
    args = page_args(folder, model=tiny_v21, more=("--json", "--mokuro", str(out_file)))
    assert main(args) == 0, capsys.readouterr().err
    out = capsys.readouterr()
    # THEN the volume's pages are in mokuro's order, each named by its path in the folder
    volume = json.loads(out_file.read_text(encoding="utf-8"))
    assert [p["img_path"] for p in volume["pages"]] == pages
    assert volume["pages"][-1]["blocks"] and not volume["pages"][0]["blocks"]
    # ... the JSON lines and the progress lines in the same order, a chapter's page by its path
    lines = [json.loads(line)["image"] for line in out.out.splitlines()]
    assert [os.path.relpath(n, folder) for n in lines] == pages
    assert "page 7/7 第10話/1.png" in out.err
    # ... each page kept where mokuro keeps a page of a subfolder (_ocr/vol1/第1話/2.json)
    kept = sorted(
        p.relative_to(tmp_path / "Nyan" / "_ocr" / "vol1") for p in tmp_path.rglob("*.json")
    )
    assert [k.as_posix() for k in kept] == sorted(str(Path(p).with_suffix(".json")) for p in pages)
    # ... and a run again reads none of them again
    again = page_args(folder, model=tmp_path / "no-model", more=("--mokuro", str(out_file)))
    assert main(again) == 0, capsys.readouterr().err
    assert capsys.readouterr().err.count("(kept)") == len(pages)
    assert json.loads(out_file.read_text(encoding="utf-8")) == volume


@pytest.mark.slow
def test_pages_given_one_by_one_make_a_volume_in_natural_order(tmp_path, tiny_v21, capsys):
    folder = tmp_path / "vol1"
    folder.mkdir()
    names = ["1.png", "10.png", "2.png"]  # as a shell's `vol1/*.png` gives them
    for name in names:
        blank_page().save(folder / name)
    args = page_args(*(folder / n for n in names), model=tiny_v21, more=("--mokuro", str(folder)))
    assert main(args) == 0, capsys.readouterr().err
    volume = json.loads((tmp_path / "vol1.mokuro").read_text(encoding="utf-8"))
    assert [p["img_path"] for p in volume["pages"]] == ["1.png", "2.png", "10.png"]


@pytest.mark.slow
def test_each_file_left_out_gets_one_line_saying_which_and_why(tmp_path, tiny_v21, capsys):
    folder = tmp_path / "vol1"
    (folder / "ch1").mkdir(parents=True)
    blank_page().save(folder / "1.png")
    blank_page().save(folder / "ch1" / "1.png")
    (folder / "notes.txt").write_text("translator's notes", encoding="utf-8")
    (folder / "ch1" / "Thumbs.db").write_bytes(b"\0" * 16)
    (folder / "2.png").write_bytes(b"")  # empty
    (folder / "3.jpg").write_bytes(b"<html>not a picture</html>")  # not an image
    (folder / "4.png").symlink_to(tmp_path / "gone.png")  # unreadable: nothing behind it
    (folder / "extras").symlink_to(tmp_path)  # a link to a folder: mokuro does not follow it
    code = main(page_args(folder, model=tiny_v21, more=("--mokuro", str(folder))))
    err = capsys.readouterr().err
    # THEN the two pages are read, and a page that could not be read makes the exit code 1
    assert code == 1
    volume = json.loads((tmp_path / "vol1.mokuro").read_text(encoding="utf-8"))
    assert [p["img_path"] for p in volume["pages"]] == ["1.png", "ch1/1.png"]
    # ... and each thing left out has one line, naming it, saying that it was skipped and why
    why = {
        "notes.txt": "not an image by its name (.txt",
        "Thumbs.db": "not an image by its name (.db",
        "2.png": "the file is empty",
        "3.jpg": "not",
        "4.png": "no such file",
        "extras": "a link to a folder, not followed",
    }
    skipped = [line for line in err.splitlines() if ": skipped, " in line]
    assert len(skipped) == len(why), err
    for name, reason in why.items():
        (line,) = [line for line in skipped if f"/{name}: " in line]
        assert line.startswith(f"hayai: {folder}") and f": skipped, {reason}" in line, line
