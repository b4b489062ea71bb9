"""`hayai ocr` / `hayai bench` with hostile inputs: one `{"image", "error"}` line for each, the good
ones still read, no traceback, no hang, no Ghostscript; argument values that would do nothing are
refused by argparse; a HAYAI_CONFIG_DIR that is a file is one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_files import write_hostile
from PIL import Image

from app.cli import main
from model.images import natural_key

REPO = Path(__file__).resolve().parents[2]


def _fake_gs(folder: Path, called: Path) -> str:
    """A `gs` first on PATH that notes it was started, then runs the real one (when installed)."""
    folder.mkdir()
    real = shutil.which("gs")
    script = folder / "gs"
    script.write_text(
        f"#!/bin/sh\necho started >> {called}\n" + (f'exec {real} "$@"\n' if real else "")
    )
    script.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def test_a_folder_of_hostile_files_gives_one_error_line_each_and_the_good_ones_are_read(
    tiny_v21, tmp_path
):
    marker, called = tmp_path / "eps-ran", tmp_path / "gs-called"
    hostile = write_hostile(tmp_path / "in", marker=marker)
    good = tmp_path / "in" / "zz-good.png"
    Image.new("RGB", (96, 32), (255, 255, 255)).save(good)
    env = dict(os.environ, PATH=_fake_gs(tmp_path / "bin", called), PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "app", "ocr", "--json", "--model", str(tiny_v21)]
        + ["--max-new-tokens", "3", str(tmp_path / "in"), str(good)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,  # a guard against a hang, not a measurement
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]  # nothing else on stdout
    in_folder = sorted(  # folder.png is a subfolder, read as one (it holds nothing)
        (
            str(p)
            for p in (tmp_path / "in").iterdir()
            if p.suffix in (".png", ".jpg", ".bmp", ".tif", ".gif") and not p.is_dir()
        ),
        key=lambda name: natural_key(os.path.relpath(name, tmp_path / "in")),
    )
    assert [r["image"] for r in rows] == in_folder + [str(good)]
    by_name = {Path(r["image"]).name: r for r in rows}
    assert set(by_name["zz-good.png"]) == {"image", "text", "token_ids", "ms"}
    for name in hostile:
        if name not in ("gif-broken-frames.gif", "folder.png"):
            assert set(by_name[name]) == {"image", "error"}, by_name[name]
    assert "not a supported image format" in by_name["eps-named-png.png"]["error"]
    assert not marker.exists() and not called.exists()  # Ghostscript never started


def test_the_payload_is_real_when_pillow_is_used_unguarded(tmp_path):
    """The control: the same EPS bytes opened by plain Pillow do start `gs` (and, with Ghostscript
    installed, the payload writes its file), so the test above proves something."""
    marker, called = tmp_path / "eps-ran", tmp_path / "gs-called"
    hostile = write_hostile(tmp_path / "in", marker=marker)
    env = dict(os.environ, PATH=_fake_gs(tmp_path / "bin", called))
    code = "import sys; from PIL import Image; Image.open(sys.argv[1]).load()"
    subprocess.run(
        [sys.executable, "-c", code, str(hostile["eps-named-png.png"])],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert called.exists()
    if shutil.which("gs"):
        assert marker.read_text() == "owned"


def test_every_input_unreadable_still_prints_a_line_each(tiny_v21, tmp_path, capsys):
    argv = ["ocr", "--json", "--model", str(tiny_v21), "missing.png", "/dev/zero"]
    assert main(argv) == 1
    out = capsys.readouterr()
    rows = [json.loads(line) for line in out.out.splitlines()]
    assert rows == [
        {"image": "missing.png", "error": "no such file"},
        {"image": "/dev/zero", "error": "this is a device, not an image file"},
    ]
    assert main(["ocr", "--model", str(tiny_v21), "missing.png"]) == 1  # plain output: on stderr
    assert "missing.png: error: no such file" in capsys.readouterr().err


def test_a_folder_names_its_files_as_text_and_says_what_it_skipped(tiny_v21, tmp_path, capsys):
    # GIVEN a folder unpacked from a Japanese Windows zip: names in Shift-JIS, and notes beside
    folder = tmp_path / "vol1"
    folder.mkdir()
    raw = os.fsencode(folder)
    Image.new("RGB", (96, 32), "white").save(os.path.join(raw, b"\x83y\x81[\x83W.png"))  # ページ
    open(os.path.join(raw, b"\x8b\xf3.png"), "wb").close()  # 空.png, empty
    (folder / "notes.txt").write_text("translator's notes", encoding="utf-8")
    # WHEN hayai ocr reads the folder
    argv = ["ocr", "--json", "--model", str(tiny_v21), "--max-new-tokens", "2", str(folder)]
    assert main(argv) == 1  # the empty file could not be read
    out = capsys.readouterr()
    # THEN each file is named as hayai page names it: Shift-JIS read as text, not surrogates
    rows = [json.loads(line) for line in out.out.splitlines()]
    assert [r["image"] for r in rows] == [f"{folder}/ページ.png", f"{folder}/空.png"]
    assert "text" in rows[0] and rows[1]["error"] == "the file is empty"
    # ... and what the folder holds besides images gets one line saying so and why
    (skipped,) = [line for line in out.err.splitlines() if ": skipped, " in line]
    assert skipped.startswith(f"hayai: {folder}/notes.txt: skipped, not an image by its name (.txt")


def test_nothing_readable_answers_without_loading_torch(tmp_path):
    code = (
        "import sys; from app.cli import main; "
        "code = main(['ocr', '--json', 'missing.png', '/dev/zero']); "
        "print('torch' in sys.modules, code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert [json.loads(line)["image"] for line in lines[:2]] == ["missing.png", "/dev/zero"]
    assert lines[2] == "False 1"


def test_bench_image_refuses_a_fifo_at_once(tiny_v21, tmp_path, capsys):
    fifo = tmp_path / "crop.png"
    os.mkfifo(fifo)
    code = main(["bench", "--model", str(tiny_v21), "--image", str(fifo), "--runs", "1"])
    assert code == 2
    assert "named pipe" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["ocr", "--max-new-tokens", "0", "x.png"],
        ["ocr", "--beams", "0", "x.png"],
        ["ocr", "--batch-size", "0", "x.png"],
        ["ocr", "--batch-size", "-3", "x.png"],
        ["bench", "--beams", "0"],
        ["bench", "--batch-size", "0"],
        ["bench", "--runs", "0"],
        ["bench", "--max-new-tokens", "zero"],
    ],
)
def test_values_that_would_do_nothing_are_argparse_errors(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "must be at least 1" in err or "not a whole number" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", [[], ["capture"], ["lookup", "日本"]])
def test_a_config_dir_that_is_a_file_is_one_clear_line(tmp_path, command):
    not_a_folder = tmp_path / "cfg"
    not_a_folder.write_text("oops")
    env = dict(os.environ, HAYAI_CONFIG_DIR=str(not_a_folder), PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "app", *command],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"hayai: HAYAI_CONFIG_DIR={not_a_folder} is not a folder; point it at a folder (made when missing)"
    )


def test_a_state_folder_under_a_file_is_one_clear_line(tmp_path):
    (tmp_path / "file").write_text("x")
    env = dict(os.environ, HAYAI_CONFIG_DIR=str(tmp_path / "file" / "cfg"), PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "app", "capture"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "is a file, not a folder" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_folder_is_decoded_batch_by_batch_within_a_pixel_budget(
    tiny_v21, tmp_path, capsys, monkeypatch
):
    from app.engine_cli import ocr as engine_ocr
    from model import images
    from model.recognizer import Recognizer

    for i, size in enumerate([(64, 64), (120, 40), (40, 120), (50, 50)]):
        Image.new("RGB", size, (255, 255, 255)).save(tmp_path / f"c{i}.png")
    events = []
    decode, read = images.open_image, Recognizer._read_prepared

    def traced_decode(source, *args, **kwargs):
        events.append("decode")
        return decode(source, *args, **kwargs)

    def traced_read(self, prepared, *args, **kwargs):
        events.append(f"read {len(prepared)}")
        return read(self, prepared, *args, **kwargs)

    monkeypatch.setattr(images, "open_image", traced_decode)
    monkeypatch.setattr(Recognizer, "_read_prepared", traced_read)
    monkeypatch.setattr(engine_ocr, "BATCH_PIXELS", 10_000)  # two of these crops at most
    argv = ["ocr", "--json", "--model", str(tiny_v21), "--max-new-tokens", "2", str(tmp_path)]
    assert main([*argv, "--batch-size", "8"]) == 0
    # sorted by header size (2500, 4096 | 4800, 4800): each batch decoded just before it is read
    assert events == ["decode", "decode", "read 2", "decode", "decode", "read 2"]
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [Path(r["image"]).name for r in rows] == ["c0.png", "c1.png", "c2.png", "c3.png"]


@pytest.mark.parametrize(
    "key, value, message",
    [
        (
            "max_num_patches",
            10**9,
            "max_num_patches must be a whole number from 1 to 4,096, got 1000000000",
        ),
        ("max_num_patches", 0, "max_num_patches must be a whole number from 1 to 4,096, got 0"),
        (
            "max_num_patches",
            "many",
            "max_num_patches must be a whole number from 1 to 4,096, got 'many'",
        ),
        ("n_layers", 2.5, "n_layers must be a whole number from 1 to 256, got 2.5"),
    ],
)
def test_config_values_out_of_range_are_refused_at_load(
    tiny_v21, tmp_path, capsys, key, value, message
):
    model = tmp_path / "model"
    shutil.copytree(tiny_v21, model)
    config = json.loads((model / "config.json").read_text())
    config[key] = value
    (model / "config.json").write_text(json.dumps(config))
    image = tmp_path / "crop.png"
    Image.new("RGB", (64, 32), (255, 255, 255)).save(image)
    assert main(["ocr", "--model", str(model), str(image)]) == 2
    err = capsys.readouterr().err
    assert message in err and "config.json" in err and "Traceback" not in err
