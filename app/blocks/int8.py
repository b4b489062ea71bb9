"""The detector in int8, the CPU's: made on this machine from the wheel's checked float model
and the activation ranges that ship beside this module, kept in the user's cache.

Quantized, the detector runs about 3 times faster on the CPU (a 1654×1170 page: about 0.5 against
1.6 s of CPU on a 2-core Xeon) and finds the blocks the float model finds (the test scans and the
tuned pages; on a CPU without VNNI one tuned block fewer: `weight_bits`, app/blocks/params.py,
`precision`), so pages, the selection and Hover to read run it; a GPU runs the float model
(app/blocks/detector.py).

No weights are stored here or downloaded: `int8_ranges.json` holds each activation's range (its
0.01th to 99.99th percentile over the 15 tuned pages of tests/blocks_eval as the detector sees
them, never the held-out ones; `tests/blocks_eval/int8_ranges.py` writes it again), and
onnxruntime's own quantizer turns the float model into int8 with it (QDQ, weights per channel in
8 bits where the CPU has VNNI, else 7: `weight_bits`; `prepared` says how the graph is made ready
first). Made once, in a few seconds, then read from the cache; the cached file's SHA-256 is checked
against the one written beside it, so a damaged file is made again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

RANGES = Path(__file__).with_name("int8_ranges.json")


def weight_bits() -> int:
    """The weights' bits on this CPU: 8 where it sums 8-bit products exactly (AVX-512 VNNI, as
    numpy reads the CPU), else 7 (`reduce_range`). Without VNNI onnxruntime sums two 8-bit
    products in 16 bits, which saturate: the 8-bit model under an emulated Haswell (AVX2, qemu)
    flipped 12% of 000b's text pixels and found 53/51 of the scans' blocks against 55/55 here,
    where the 7-bit model gives the same numbers to the last bit. 7 bits lost a tuned block at size whatever
    the ranges' percentile (99.9 to 99.999) and box_thresh (0.4 to 0.5): 111/111 against 112/111
    (docs/reading.md)."""
    try:  # numpy's own CPU table (numpy >= 2; private): where it moves, the safe 7 bits
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:
        return 7
    return 8 if __cpu_features__.get("AVX512VNNI") else 7


def recipe() -> str:
    """How `quantize` makes the model here, part of the cache key: made another way, made again."""
    return f"opset 17, conv biases folded, QDQ, weights per channel in {weight_bits()} bits"


class Int8Unavailable(RuntimeError):
    """The int8 model cannot be made here (the `onnx` package missing, a quantizer failing)."""


def cache_key(float_bytes: bytes) -> str:
    """What the int8 model is made from: the float model, the ranges, how it is quantized, and the
    two libraries that make it (another version may write other bytes)."""
    import onnx
    import onnxruntime

    digest = hashlib.sha256()
    for part in (
        float_bytes,
        RANGES.read_bytes(),
        recipe(),
        onnxruntime.__version__,
        onnx.__version__,
    ):
        digest.update(part if isinstance(part, bytes) else part.encode())
    return digest.hexdigest()[:16]


def int8_bytes(float_bytes: bytes, cache_dir: Path) -> bytes:
    """The int8 model of `float_bytes` (the checked float model), from `cache_dir` when made
    before, else made now and kept there (where the cache cannot be read or written, a full disk
    say, it is made each time and still used)."""
    try:
        key = cache_key(float_bytes)
    except ImportError as e:
        raise Int8Unavailable(f"the onnx package is missing ({e})") from None
    path = cache_dir / f"PP-OCRv6_det_small.int8.{key}.onnx"
    digest_path = path.with_suffix(".sha256")
    try:
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() == digest_path.read_text().strip():
            return data
        log.warning("the cached int8 detector %s is damaged; making it again", path)
    except FileNotFoundError:
        pass
    except OSError as e:
        log.warning("the cached int8 detector %s cannot be read (%s); making it again", path, e)
    data = quantize(float_bytes)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        _write(path, data)
        _write(digest_path, hashlib.sha256(data).hexdigest().encode())
    except OSError as e:
        log.warning(
            "the int8 detector cannot be kept in %s (%s); it is made again next time", cache_dir, e
        )
    return data


def quantize(float_bytes: bytes) -> bytes:
    """onnxruntime's static quantization of the float model with the shipped ranges (no
    calibration run: `calibration_cache_path` gives the ranges)."""
    try:
        from onnxruntime.quantization import (
            CalibrationMethod,
            QuantFormat,
            QuantType,
            quantize_static,
        )
    except ImportError as e:
        raise Int8Unavailable(f"the onnx package is missing ({e})") from None
    log.info("making the int8 text detector (once; a few seconds)")
    with tempfile.TemporaryDirectory(prefix="hayai-int8-") as tmp:
        out = Path(tmp) / "int8.onnx"
        try:
            quantize_static(
                prepared(float_bytes),
                out,
                None,
                quant_format=QuantFormat.QDQ,
                per_channel=True,
                reduce_range=weight_bits() == 7,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                calibrate_method=CalibrationMethod.MinMax,
                calibration_cache_path=RANGES,
            )
        except Exception as e:  # the converter's and quantizer's errors are many, undocumented
            raise Int8Unavailable(f"onnx could not make the int8 detector ({e})") from e
        return out.read_bytes()


def prepared(float_bytes: bytes):
    """The float model as it is quantized (and its ranges measured): opset 17 (per-channel QDQ
    needs 13; the wheel's model is 11), each convolution's bias, a separate Add in the wheel's
    model, folded into it by onnxruntime's basic graph optimisation (else the sum is rounded to 8
    bits before its bias is added, and an int8 Add more runs)."""
    import onnx
    import onnxruntime as ort
    from onnx import version_converter

    model = version_converter.convert_version(onnx.load_from_string(float_bytes), 17)
    with tempfile.TemporaryDirectory(prefix="hayai-int8-") as tmp:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(Path(tmp) / "folded.onnx")
        options.log_severity_level = 3
        ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        return onnx.load(options.optimized_model_filepath)


def _write(path: Path, data: bytes) -> None:
    """Whole or not at all: another process may be making the same file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
