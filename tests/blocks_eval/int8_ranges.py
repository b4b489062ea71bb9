"""Writes app/blocks/int8_ranges.json: the range of each of the detector's activations over the
tuned pages of truth.json as the detector sees them, which app/blocks/int8.py quantizes the
detector with. Never the held-out pages: they would no longer be held out. A developer's tool
(needs the `onnx` package and the pages, see README.md):

    python tests/blocks_eval/int8_ranges.py --pages DIR

Each range runs from the 0.01th to the 99.99th percentile of the activation's values on a page
(all of them), the widest over the pages. The extreme values (onnxruntime's MinMax) spread the 256
steps over a range few values reach: at box_thresh 0.5 the int8 model made with them found 53
and 54 of the test scans' 58 blocks at their size and shown at 60%, with these 54 and 54 (and 55
and 55 at 0.45, as the float model); with 7-bit weights at 0.45, the 99.9th percentile found
52/53, the 99.999th 54/52. Percentiles of 400,000 values drawn at random moved the
ranges by up to 7% from draw to draw, and one draw's model found 54/55. onnxruntime's own
Percentile calibration keeps every page's activations at once and ran out of memory.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from app.blocks import detector, int8  # noqa: E402

PERCENTILE = 99.99


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pages", type=Path, required=True, help="the folder of truth.json's pages"
    )
    args = parser.parse_args()
    import onnx
    import onnxruntime as ort

    pages = [
        p["file"] for p in json.loads((HERE / "truth.json").read_text())["pages"] if p["tuned"]
    ]
    model = int8.prepared(detector.model_bytes(detector.model_path()))
    outputs = {o.name for o in model.graph.output}
    for node in model.graph.node:  # every activation becomes an output, to be measured
        for name in node.output:
            if name not in outputs:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    names = [o.name for o in session.get_outputs()]
    ranges: dict[str, list[float]] = {}
    for page in pages:
        x = detector.prepare(detector.as_bgr(Image.open(args.pages / page)))
        for name, value in zip(["x", *names], [x, *session.run(names, {"x": x})]):
            low, high = (float(q) for q in np.percentile(value, [100 - PERCENTILE, PERCENTILE]))
            old = ranges.setdefault(name, [low, high])
            ranges[name] = [min(old[0], low), max(old[1], high)]

    def array(value: float) -> dict:
        return {"data": [value], "dtype": "float32", "CLS": "numpy.array"}

    # onnxruntime's calibration cache, as quantize_static(calibration_cache_path=...) reads it
    cache = {
        "CLS": "TensorsData",
        "calibration_method": {"CLS": "CalibrationMethod", "value": "CalibrationMethod.MinMax"},
        "smooth_quant": False,
        "data": {
            name: {"lowest": array(low), "highest": array(high), "CLS": "TensorData"}
            for name, (low, high) in sorted(ranges.items())
        },
    }
    int8.RANGES.write_text(json.dumps(cache) + "\n")
    print(f"{int8.RANGES}: the ranges of {len(pages)} tuned pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
