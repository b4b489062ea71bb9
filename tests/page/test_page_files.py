"""`hayai page --mokuro` and the files around it (app/page/cli.py): a page whose name is not UTF-8,
a full disk, pages whose names differ only in case."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from app.cli import main

pytestmark = pytest.mark.slow  # pages through the tiny model

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages"


def text_page() -> Image.Image:
    """A 240 px square of a real page, with two of its blocks."""
    return Image.open(PAGES / "000b.jpg").convert("RGB").crop((560, 60, 800, 300))


def blank_page() -> Image.Image:
    return Image.new("RGB", (240, 240), "white")


def page_args(folder: Path, out: Path, model: Path, *more: str) -> list[str]:
    return [
        "page",
        str(folder),
        "--mokuro",
        str(out),
        "--max-new-tokens",
        "2",
        "--model",
        str(model),
        *more,
    ]


def test_pages_named_in_shift_jis_or_latin_1_are_read_and_named_in_utf8(tmp_path, tiny_v21, capsys):
    folder = tmp_path / "vol1"
    folder.mkdir()
    raw = os.fsencode(folder)
    # ページ.png in Shift-JIS, as a zip made on a Japanese Windows unpacks on Linux; café.png in Latin-1
    text_page().save(os.path.join(raw, b"\x83y\x81[\x83W.png"))
    blank_page().save(os.path.join(raw, b"caf\xe9.png"))
    assert main(page_args(folder, folder, tiny_v21, "--json")) == 0, capsys.readouterr().err
    out = capsys.readouterr()
    # THEN the volume is UTF-8 JSON naming each page as text: Shift-JIS decoded, a byte that is
    # neither UTF-8 nor part of printable Shift-JIS as U+FFFD
    volume = tmp_path / "vol1.mokuro"
    first = json.loads(volume.read_bytes().decode("utf-8"))
    assert [p["img_path"] for p in first["pages"]] == ["caf\ufffd.png", "ページ.png"]
    assert first["pages"][1]["blocks"] and not first["pages"][0]["blocks"]
    # ... as the JSON lines and the progress lines do
    assert [Path(json.loads(line)["image"]).name for line in out.out.splitlines()] == [
        "caf\ufffd.png",
        "ページ.png",
    ]
    assert "page 2/2 ページ.png" in out.err
    # each page is kept under its own name's bytes, where mokuro looks for it, and nothing
    # half-written is left
    kept = sorted(os.listdir(os.fsencode(tmp_path / "_ocr" / "vol1")))
    assert kept == [b"caf\xe9.json", b"\x83y\x81[\x83W.json"]
    assert not list(tmp_path.rglob("*.part"))
    # WHEN it runs again with a model folder that cannot load: nothing is read again
    assert main(page_args(folder, folder, tmp_path / "no-model")) == 0, capsys.readouterr().err
    assert json.loads(volume.read_bytes().decode("utf-8")) == first
    assert capsys.readouterr().err.count("(kept)") == 2


@pytest.fixture
def small_disk(tmp_path):
    """A 200 kB tmpfs (needs root, as CI runs)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(disk)]
    try:
        subprocess.run(mount, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot mount a small tmpfs to fill (needs root): {e}")
    yield disk
    subprocess.run(["umount", str(disk)], check=True)


def fill(disk: Path) -> Path:
    """Fill the disk: a file that takes every free byte."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while os.write(fd, bytes(4096)):
            pass
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def sentence(err: str) -> str:
    """The one error line of a run; no traceback."""
    assert "Traceback" not in err
    (line,) = [line for line in err.splitlines() if line.startswith("hayai:")]
    return line


def test_a_full_disk_is_one_sentence_and_nothing_is_lost(tmp_path, small_disk, tiny_v21, capsys):
    folder = tmp_path / "vol1"
    folder.mkdir()
    text_page().save(folder / "001.png")
    args = page_args(folder, small_disk / "vol1", tiny_v21)
    assert main(args) == 0, capsys.readouterr().err
    volume = small_disk / "vol1.mokuro"
    old = volume.read_bytes()
    # WHEN a new page comes and the disk is full: the page read cannot be kept
    text_page().transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(folder / "002.png")
    filler = fill(small_disk)
    capsys.readouterr()
    assert main(args) == 1
    # THEN one sentence: what failed, where, how much room it needs and how much there is
    line = sentence(capsys.readouterr().err)
    assert str(small_disk / "_ocr" / "vol1" / "002.json") in line and "no room" in line
    assert re.search(r"needs \d+ (B|kB) and \d+ (B|kB) is free", line), line
    # ... the old volume is intact, the page kept before too, and nothing half-written is left
    assert volume.read_bytes() == old
    assert [p.name for p in (small_disk / "_ocr" / "vol1").iterdir()] == ["001.json"]
    assert not list(small_disk.rglob("*.part"))
    # WHEN there is room again: the run goes on where it stopped
    filler.unlink()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "page 1/2 001.png" in err and "(kept)" in err.split("page 2/2")[0]
    second = volume.read_bytes()
    assert [p["img_path"] for p in json.loads(second)["pages"]] == ["001.png", "002.png"]
    # WHEN the disk is full as the volume itself is written (its pages all kept): it stays as it was
    (folder / "002.png").unlink()
    fill(small_disk)
    assert main(page_args(folder, small_disk / "vol1", tmp_path / "no-model")) == 1
    line = sentence(capsys.readouterr().err)
    assert str(volume) in line and "no room" in line
    assert volume.read_bytes() == second and not list(small_disk.rglob("*.part"))


def test_pages_whose_names_differ_only_in_case_keep_their_own_blocks(tmp_path, tiny_v21, capsys):
    folder = tmp_path / "vol1"
    folder.mkdir()
    # two different images of the same size and time, whose names differ only in case
    text_page().save(folder / "p.BMP")
    blank_page().save(folder / "p.bmp")
    when = (folder / "p.BMP").stat().st_mtime_ns
    for name in ("p.BMP", "p.bmp"):
        os.utime(folder / name, ns=(when, when))
    assert (folder / "p.BMP").stat().st_size == (folder / "p.bmp").stat().st_size
    assert main(page_args(folder, folder, tiny_v21)) == 0, capsys.readouterr().err
    volume = tmp_path / "vol1.mokuro"
    first = json.loads(volume.read_text(encoding="utf-8"))
    # THEN each page has its own blocks: the text page some, the blank one none
    pages = {p["img_path"]: p["blocks"] for p in first["pages"]}
    assert pages["p.BMP"] and pages["p.bmp"] == []
    # ... each kept in a file of its own (mokuro's `p.json` would be one for both)
    kept = sorted(p.name for p in (tmp_path / "_ocr" / "vol1").iterdir())
    assert kept == ["p.BMP.json", "p.bmp.json"]
    # ... and a run again reads neither again
    assert main(page_args(folder, folder, tmp_path / "no-model")) == 0, capsys.readouterr().err
    assert json.loads(volume.read_text(encoding="utf-8")) == first
    # WHEN p.BMP goes: p.bmp is kept as mokuro keeps a page (p.json), and a `p.json` kept by
    # an earlier run for p.BMP (the same size and time) is not taken for it
    kept_for_upper = (tmp_path / "_ocr" / "vol1" / "p.BMP.json").read_text(encoding="utf-8")
    (tmp_path / "_ocr" / "vol1" / "p.json").write_text(kept_for_upper, encoding="utf-8")
    (folder / "p.BMP").unlink()
    assert main(page_args(folder, folder, tiny_v21)) == 0, capsys.readouterr().err
    (page,) = json.loads(volume.read_text(encoding="utf-8"))["pages"]
    assert page["img_path"] == "p.bmp" and page["blocks"] == []
