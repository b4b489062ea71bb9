"""The engine stands without the GUI: importing `model` and every `model.*` module loads no Qt."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import importlib, json, pkgutil, sys
import model
names = sorted(m.name for m in pkgutil.iter_modules(model.__path__, "model."))
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "qt": sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "shiboken6", "app"))}))
"""


def test_importing_the_whole_engine_loads_neither_qt_nor_the_app():
    # GIVEN a fresh interpreter WHEN model and each of its modules is imported
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # THEN every module was imported (the walk found them) and no PySide6, shiboken6 or app.* came along
    assert {"model.recognizer", "model.download", "model.errors", "model.hayai"} <= set(
        report["modules"]
    )
    assert report["qt"] == []
