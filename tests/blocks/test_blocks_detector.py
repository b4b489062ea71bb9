"""The detector (app/blocks/detector.py): the wheel's model file, checked before it is loaded; no
network; the package and `hayai blocks` stand without Qt."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.blocks import detector

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh_model(monkeypatch):
    """No session made yet in this process (each test makes its own)."""
    monkeypatch.setattr(detector, "_models", {})


def test_the_wheels_model_file_is_the_pinned_one():
    path = detector.model_path()
    assert path.name == "PP-OCRv6_det_small.onnx" and path.parent.parent.name == "rapidocr"
    assert len(detector.model_bytes(path)) == detector.MODEL_BYTES


def test_a_changed_model_file_is_refused_before_it_is_loaded(tmp_path, monkeypatch, fresh_model):
    data = bytearray(detector.model_path().read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit
    changed = tmp_path / "PP-OCRv6_det_small.onnx"
    changed.write_bytes(bytes(data))
    monkeypatch.setattr(detector, "model_path", lambda: changed)
    with pytest.raises(detector.DetectorError) as refused:
        detector.model()
    message = str(refused.value)
    assert str(changed) in message and "not the one" in message and "pip install" in message
    assert detector._models == {}  # nothing half-made is kept


def test_a_missing_model_file_says_so(tmp_path, monkeypatch, fresh_model):
    monkeypatch.setattr(detector, "model_path", lambda: tmp_path / "gone.onnx")
    with pytest.raises(detector.DetectorError, match="is missing; reinstall it"):
        detector.model()


def test_the_detector_never_touches_the_network(monkeypatch, fresh_model):
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("the detector tried the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    from rapidocr.utils import download_file

    monkeypatch.setattr(download_file.DownloadFile, "run", refuse, raising=False)
    image = np.full((200, 300, 3), 255, np.uint8)
    image[80:120, 40:260] = 0
    lines, scores = detector.detect_lines(detector.as_bgr(image))
    assert len(lines) == len(scores)
    assert "CPUExecutionProvider" in detector.model().providers


def test_images_of_every_layout_become_the_same_bgr():
    from PIL import Image

    rgb = np.zeros((4, 5, 3), np.uint8)
    rgb[..., 0] = 200  # red
    bgr = detector.as_bgr(rgb)
    assert bgr.shape == (4, 5, 3) and (bgr[..., 2] == 200).all() and (bgr[..., 0] == 0).all()
    bgra = np.dstack([rgb[..., ::-1], np.full((4, 5), 255, np.uint8)])
    assert (detector.as_bgr(bgra, bgr=True) == bgr).all()
    assert (detector.as_bgr(Image.fromarray(rgb)) == bgr).all()
    assert detector.as_bgr(np.full((4, 5), 7, np.uint8)).shape == (4, 5, 3)
    with pytest.raises(ValueError):
        detector.as_bgr(np.zeros((4, 5, 2), np.uint8))


def test_hovers_int8_detector_is_made_once_kept_and_made_again_when_damaged(tmp_path, monkeypatch):
    from app.blocks import int8

    float_model = detector.model_bytes(detector.model_path())
    made = int8.int8_bytes(float_model, tmp_path)
    assert len(made) < len(float_model) // 2  # int8 weights, not the float ones
    (kept,) = tmp_path.glob("*.onnx")
    assert kept.read_bytes() == made

    def never(data):
        raise AssertionError("made again though it was kept")

    real = int8.quantize
    monkeypatch.setattr(int8, "quantize", never)
    assert int8.int8_bytes(float_model, tmp_path) == made  # read back, not made
    kept.write_bytes(made[:-100])  # cut short
    monkeypatch.setattr(int8, "quantize", real)
    assert int8.int8_bytes(float_model, tmp_path) == made  # the same bytes made again
    assert kept.read_bytes() == made


def test_an_int8_model_made_another_way_is_not_read_from_the_cache(monkeypatch):
    from app.blocks import int8

    float_model = detector.model_bytes(detector.model_path())
    key = int8.cache_key(float_model)
    other = 15 - int8.weight_bits()  # the other of 7 and 8
    monkeypatch.setattr(int8, "weight_bits", lambda: other)
    assert int8.cache_key(float_model) != key


@pytest.mark.parametrize("bits", [7, 8])
def test_the_int8_models_weights_have_the_cpus_bits(monkeypatch, bits):
    """7 bits where the CPU would saturate sums of 8-bit products (no VNNI)."""
    import onnx
    from onnx import numpy_helper

    from app.blocks import int8

    monkeypatch.setattr(int8, "weight_bits", lambda: bits)
    made = onnx.load_from_string(int8.quantize(detector.model_bytes(detector.model_path())))
    weights = [numpy_helper.to_array(w) for w in made.graph.initializer if w.data_type == 3]
    # onnxruntime's symmetric weights: -64..64 in 7 bits, -127..127 in 8
    assert max(int(abs(w.astype(int)).max()) for w in weights) == {7: 64, 8: 127}[bits]


def test_the_int8_models_convolutions_carry_their_biases():
    """Folded before quantizing: a bias added apart would be added to a sum already rounded."""
    import onnx

    from app.blocks import int8

    float_model = detector.model_bytes(detector.model_path())
    wheel = onnx.load_from_string(float_model)
    weights = {w.name for w in wheel.graph.initializer}
    convs = {n.output[0] for n in wheel.graph.node if n.op_type == "Conv"}
    biased = [  # an Add of a constant right after a convolution: its bias, in the wheel's model
        n
        for n in wheel.graph.node
        if n.op_type == "Add" and n.input[0] in convs and n.input[1] in weights
    ]
    made = onnx.load_from_string(int8.quantize(float_model))
    assert len(biased) > 50
    assert sum(len(n.input) == 3 for n in made.graph.node if n.op_type == "Conv") == len(biased)


def test_an_int8_model_that_cannot_be_kept_is_still_made_and_used(tmp_path, caplog):
    from app.blocks import int8

    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")  # the cache folder cannot be made: a file is in its place
    float_model = detector.model_bytes(detector.model_path())
    made = int8.int8_bytes(float_model, blocked / "detector")
    assert made == int8.quantize(float_model)
    assert "cannot be kept in" in caplog.text


def test_a_converter_that_fails_is_said_as_no_int8_model(monkeypatch):
    from onnx import version_converter

    from app.blocks import int8

    def broken(model, opset):
        raise RuntimeError("no adapter for Resize")

    monkeypatch.setattr(version_converter, "convert_version", broken)
    with pytest.raises(int8.Int8Unavailable, match="could not make the int8 detector"):
        int8.quantize(detector.model_bytes(detector.model_path()))


def test_without_an_int8_model_hover_runs_the_float_one(monkeypatch, fresh_model, caplog):
    from app.blocks import int8
    from app.blocks.params import HOVER, PARAMS

    def unavailable(data, cache_dir):
        raise int8.Int8Unavailable("the onnx package is missing (No module named 'onnx')")

    monkeypatch.setattr(int8, "int8_bytes", unavailable)
    assert detector.model(HOVER) is detector.model(PARAMS)  # one float session, not two
    assert "runs as a float model, slower: the onnx package is missing" in caplog.text


def test_the_float_model_keeps_its_own_box_threshold(monkeypatch, fresh_model):
    """Where the float model runs instead (a GPU, no onnx package), the int8 model's lower
    threshold would find a stray column inside the drawn screen's rows."""
    from app.blocks import find_blocks, int8
    from app.capture.sample_page import draw_screen

    def unavailable(data, cache_dir):
        raise int8.Int8Unavailable("the onnx package is missing (No module named 'onnx')")

    monkeypatch.setattr(int8, "int8_bytes", unavailable)
    bgra, regions = draw_screen()
    blocks = find_blocks(bgra, bgr=True)
    assert len(blocks) == sum(r.ink is not None for r in regions)


@pytest.mark.parametrize("setting", ["HOVER", "PARAMS"])
@pytest.mark.parametrize("page", ["000b.jpg", "002b.jpg"])
def test_the_int8_detector_finds_the_blocks_of_ordinary_letters_the_float_one_finds(page, setting):
    """The scans' letters (about 23 px) seen at their size as hover sees them, and enlarged as a
    page is: each of the truth's blocks the float model finds, the int8 one (of this CPU's bits:
    int8.weight_bits) finds too. (Not each of the float model's boxes: with 7 bits, an 18×19 px
    box float gives inside 002b's balloon お来てるなノラボス is not there.)"""
    from dataclasses import replace

    from blocks_pages import SCORED, matches, truth
    from PIL import Image

    from app.blocks import find_blocks, params

    setting = getattr(params, setting)
    image = Image.open(REPO / "tests" / "data" / "pages" / page).convert("RGB")
    by_int8 = [b.box for b in find_blocks(image, params=setting)]
    by_float = [b.box for b in find_blocks(image, params=replace(setting, precision="float32"))]
    blocks = [b["box"] for b in truth()[page]["blocks"] if b["kind"] in SCORED]
    found = [b for b in blocks if any(matches(box, b) for box in by_float)]
    assert setting.precision == "int8" and len(found) >= 8
    for b in found:
        assert any(matches(box, b) for box in by_int8), b


PROBE = """
import importlib.abc, json, sys

class NoQt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("PySide6", "shiboken6", "torch"):
            raise ImportError(f"{name} is blocked in this test")

sys.meta_path.insert(0, NoQt())
import app.blocks, app.blocks.cli, app.blocks.marks, app.page.read
from app.cli import main
code = main(["blocks", "--json", sys.argv[1]])
print(json.dumps({"code": code, "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "shiboken6", "torch"))}))
"""


def test_the_finder_and_hayai_blocks_run_without_qt_or_torch():
    # GIVEN a fresh interpreter where PySide6 (and torch) cannot be imported
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(REPO / "tests" / "data" / "pages" / "002b.jpg")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # THEN hayai blocks finds the page's blocks, and nothing of Qt or torch was loaded
    assert done.returncode == 0, done.stderr
    page, report = (json.loads(line) for line in done.stdout.strip().splitlines()[-2:])
    assert report == {"code": 0, "loaded": []}
    assert len(page["blocks"]) >= 8
