"""`hayai --help` stays instant (no heavy imports), and the shipped resources are what they claim to be."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

import resources

ROOT = Path(__file__).resolve().parents[2]
HEAVY = [
    "torch",
    "transformers",
    "PySide6",
    "numpy",
    "safetensors",
    "tokenizers",
    "sudachipy",
    "PIL",
    "starlette",
    "uvicorn",
]
SUB_COMMANDS = ["capture", "ocr", "page", "bench", "model", "lookup", "dict", "anki", "serve"]

PROBE = """
import contextlib, io, json, sys
from app.cli import build_parser
parser = build_parser()
for argv in [["--help"], ["--version"]] + [[c, "--help"] for c in %r]:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            assert exc.code == 0, (argv, exc.code)
print(json.dumps(sorted(m.split(".")[0] for m in sys.modules)))
""".replace("%r", repr(SUB_COMMANDS))


def test_parsing_help_of_every_command_imports_nothing_heavy():
    # GIVEN a fresh interpreter  WHEN the parser handles --help of every command
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stdout))
    # THEN neither torch nor Qt nor any other heavy library was imported
    assert not loaded & set(HEAVY), f"--help imported {sorted(loaded & set(HEAVY))}"


def test_resources_path_finds_files_and_names_missing_ones():
    assert resources.path(resources.ICON).is_file()
    assert resources.path("samples/sample_ja_horizontal.png").parent == resources.root() / "samples"
    with pytest.raises(FileNotFoundError, match="no-such-file.png"):
        resources.path("no-such-file.png")


def _dark_fraction(image: Image.Image) -> float:
    gray = image.convert("L")
    return sum(1 for v in gray.tobytes() if v < 100) / (gray.width * gray.height)


def test_horizontal_sample_is_a_text_line():
    with Image.open(resources.path(resources.SAMPLE_HORIZONTAL)) as img:
        assert img.mode == "RGB"
        assert 32 <= img.height <= 48 and img.width > 5 * img.height  # one line, ~40 px tall
        assert 0.05 < _dark_fraction(img) < 0.5  # text, not a blank or a black image


def test_vertical_sample_is_a_tall_bubble():
    with Image.open(resources.path(resources.SAMPLE_VERTICAL)) as img:
        assert img.mode == "RGB"
        assert img.height > img.width  # columns of vertical text
        assert 0.02 < _dark_fraction(img) < 0.5


FONT = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")


@pytest.mark.skipif(not FONT.exists(), reason="Noto Sans CJK not installed (fonts-noto-cjk)")
def test_make_samples_reproduces_the_committed_crops(tmp_path):
    # The committed PNGs must come from the script (so they can be regenerated and reviewed).
    proc = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "make_samples.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    for name in (resources.SAMPLE_HORIZONTAL, resources.SAMPLE_VERTICAL):
        with (
            Image.open(resources.path(name)) as committed,
            Image.open(tmp_path / Path(name).name) as fresh,
        ):
            assert committed.size == fresh.size
            diff = [
                abs(a - b)
                for a, b in zip(committed.convert("L").tobytes(), fresh.convert("L").tobytes())
            ]
            # identical with the same font and Pillow; allow small antialiasing differences elsewhere
            assert sum(d > 64 for d in diff) / len(diff) < 0.01, name
