"""The text detector: PP-OCRv6's detector, small, as the rapidocr wheel ships it
(`rapidocr/models/PP-OCRv6_det_small.onnx`; code and weights Apache-2.0, the wheel's
MODEL_LICENSES.md), run by onnxruntime: an image → the boxes of its lines of text.

The model file is the wheel's own, checked against its size and SHA-256 before it is loaded (the
bytes checked are the bytes loaded). Nothing here touches the network: rapidocr fetches missing
models when its engine is built, so that engine is never built; only its pre-processing
(`DetPreProcess`: resize to multiples of 32, normalise) and post-processing (`DBPostProcess`: the
probability map → boxes, grown back out by the unclip ratio) are used, with our own session.

One session per process and precision (`Params.precision`: the float model, or the int8 one that
app/blocks/int8.py makes from it), made on first use under a lock (onnxruntime's `run` is
thread-safe); onnxruntime-gpu's CUDA provider when it is installed, else the CPU. Never call this on the GUI
thread: a page takes a few hundred milliseconds.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from app.blocks.params import PARAMS, Params

RAPIDOCR_VERSION = "3.10.0"
MODEL_NAME = "PP-OCRv6_det_small.onnx"
MODEL_BYTES = 9_929_594
MODEL_SHA256 = "090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f"
log = logging.getLogger(__name__)

REINSTALL = f"reinstall it with: pip install --force-reinstall rapidocr=={RAPIDOCR_VERSION}"

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in image px, x1 and y1 exclusive


class DetectorError(RuntimeError):
    """The detector cannot run; the message is one plain sentence that says what to do."""


def model_path() -> Path:
    """Where the installed rapidocr wheel keeps the detector's model file."""
    from importlib import resources

    try:
        return Path(str(resources.files("rapidocr") / "models" / MODEL_NAME))
    except ModuleNotFoundError:
        raise DetectorError(
            f"the text detector needs the rapidocr package, which is not installed; install it "
            f"with: pip install rapidocr=={RAPIDOCR_VERSION}"
        ) from None


def model_bytes(path: Path) -> bytes:
    """The model file's bytes, once they are the ones Hayai was tested with."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DetectorError(
            f"the text detector's model file {path} is missing; {REINSTALL}"
        ) from None
    except OSError as e:
        raise DetectorError(
            f"the text detector's model file {path} cannot be read ({e.strerror or e}); {REINSTALL}"
        ) from None
    if len(data) != MODEL_BYTES or hashlib.sha256(data).hexdigest() != MODEL_SHA256:
        raise DetectorError(
            f"the text detector's model file {path} is not the one Hayai was tested with "
            f"({len(data):,} bytes, SHA-256 {hashlib.sha256(data).hexdigest()[:16]}…, where "
            f"{MODEL_BYTES:,} bytes and {MODEL_SHA256[:16]}… are expected); {REINSTALL}"
        )
    return data


class _Model:
    """One onnxruntime session, its input's name, and whether its model is the int8 one."""

    def __init__(self, params: Params, data: bytes, providers: list[str], int8: bool = False):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, min(params.threads, os.cpu_count() or 1))
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: its warnings are not the user's business
        # threads sleep between runs rather than spin: the cores are the app's and the user's
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(data, options, providers=providers)
        self.input = self.session.get_inputs()[0].name
        self.providers = self.session.get_providers()
        self.int8 = int8


_lock = threading.Lock()
_models: dict[str, _Model] = {}  # by precision; an int8 that cannot be made is the float one


def model(params: Params = PARAMS) -> _Model:
    """The process's session for `params.precision`, made on first use (DetectorError when it
    cannot be)."""
    with _lock:
        if params.precision not in _models:
            _models[params.precision] = _make(params)
        return _models[params.precision]


def _make(params: Params) -> _Model:
    import onnxruntime as ort

    providers = ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    data = model_bytes(model_path())
    # int8 is the CPU's speed-up; a GPU runs the float model faster than any int8 one
    if params.precision == "int8" and providers == ["CPUExecutionProvider"]:
        from app.blocks.int8 import Int8Unavailable, int8_bytes
        from app.platform.paths import user_dir

        try:
            return _Model(
                params, int8_bytes(data, user_dir("cache") / "detector"), providers, int8=True
            )
        except (Int8Unavailable, OSError) as e:  # OSError: no cache folder (user_dir)
            log.warning("the text detector runs as a float model, slower: %s", e)
    if "float32" not in _models:
        _models["float32"] = _Model(params, data, providers)
    return _models["float32"]


def as_bgr(image: Any, bgr: bool = False) -> np.ndarray:
    """A PIL image, or a numpy gray, RGB or RGBA array (BGR or BGRA with `bgr`), as the
    contiguous uint8 BGR array the detector reads."""
    import cv2

    if not isinstance(image, np.ndarray):  # a PIL image
        image = np.asarray(image.convert("RGB"))
        bgr = False
    image = np.asarray(image, dtype=np.uint8)
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim != 3 or image.shape[2] not in (3, 4):
        raise ValueError(f"an image of shape {image.shape} is neither gray, RGB nor RGBA")
    codes = {
        (3, False): cv2.COLOR_RGB2BGR,
        (4, False): cv2.COLOR_RGBA2BGR,
        (4, True): cv2.COLOR_BGRA2BGR,
    }
    code = codes.get((image.shape[2], bgr))
    return np.ascontiguousarray(image) if code is None else cv2.cvtColor(image, code)


def scale_for(height: int, width: int, params: Params = PARAMS) -> float:
    """The factor the detector sees an image at: about `max_pixels` pixels, at most
    `max_enlarge` times enlarged."""
    return min(params.max_enlarge, (params.max_pixels / max(1, height * width)) ** 0.5)


def prepare(bgr: np.ndarray, params: Params = PARAMS) -> np.ndarray | None:
    """The detector's input for a BGR image: resized by `scale_for`, normalised (None for an image
    too small to be seen at all)."""
    from rapidocr.ch_ppocr_det.utils import DetPreProcess

    height, width = bgr.shape[:2]
    scale = scale_for(height, width, params)
    # rapidocr's resize as a limit on a side: "max" shrinks the longer side to it, "min" enlarges
    # the shorter one; each side then rounds to a multiple of 32
    if scale <= 1.0:
        pre = DetPreProcess(max(32, round(max(height, width) * scale)), "max")
    else:
        pre = DetPreProcess(round(min(height, width) * scale), "min")
    return pre(bgr)


def detect_lines(bgr: np.ndarray, params: Params = PARAMS) -> tuple[list[Box], list[float]]:
    """The boxes of the lines of text in a BGR image (see `as_bgr`), and each one's score (the
    mean probability of text inside it), in image px; in no particular order."""
    from rapidocr.ch_ppocr_det.utils import DBPostProcess

    height, width = bgr.shape[:2]
    x = prepare(bgr, params)
    if x is None:
        return [], []
    m = model(params)
    pred = m.session.run(None, {m.input: x})[0]
    post = DBPostProcess(
        thresh=params.thresh,
        box_thresh=params.box_thresh_int8 if m.int8 else params.box_thresh,
        unclip_ratio=params.unclip_ratio,
        use_dilation=True,
        score_mode="fast",
    )
    quads, scores = post(pred, (height, width))
    boxes = [
        (int(q[:, 0].min()), int(q[:, 1].min()), int(q[:, 0].max()) + 1, int(q[:, 1].max()) + 1)
        for q in quads
    ]
    return boxes, [float(s) for s in scores]
