"""Writes app/blocks/int8_ranges.json: the range of each of the detector's activations over the
tuned pages of truth.json as the detector sees them (onnxruntime's MinMax calibration), which
app/blocks/int8.py quantizes the detector with. Never the held-out pages: they would no longer be
held out. A developer's tool (needs the `onnx` package and the pages, see README.md):

    python tests/blocks_eval/int8_ranges.py --pages DIR
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from app.blocks import detector, int8  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pages", type=Path, required=True, help="the folder of truth.json's pages"
    )
    args = parser.parse_args()
    import onnx
    from onnx import version_converter
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, quantize_static

    pages = [
        p["file"] for p in json.loads((HERE / "truth.json").read_text())["pages"] if p["tuned"]
    ]

    class TunedPages(CalibrationDataReader):
        def __init__(self):
            self.inputs = (
                detector.prepare(detector.as_bgr(Image.open(args.pages / name))) for name in pages
            )

        def get_next(self):
            x = next(self.inputs, None)
            return None if x is None else {"x": x}

    float_model = detector.model_bytes(detector.model_path())
    model = version_converter.convert_version(onnx.load_from_string(float_model), 17)
    int8.RANGES.unlink(missing_ok=True)  # else the quantizer reads the old ranges back
    with tempfile.TemporaryDirectory() as tmp:
        quantize_static(
            model,
            Path(tmp) / "int8.onnx",
            TunedPages(),
            per_channel=True,
            reduce_range=True,
            calibrate_method=CalibrationMethod.MinMax,
            calibration_cache_path=int8.RANGES,
        )
    print(f"{int8.RANGES}: the ranges of {len(pages)} tuned pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
