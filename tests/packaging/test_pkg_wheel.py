"""The distribution: what the wheel contains, and a non-editable install into a fresh venv."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What a wheel is built from; copied so the build never writes build/ or *.egg-info into the
# checkout and never picks up a stale build/lib left by an earlier build.
SOURCE_ITEMS = ["pyproject.toml", "README.md", "app", "model", "resources"]
SUB_COMMANDS = ["capture", "ocr", "bench", "model", "lookup", "dict", "anki"]


def _copy_source(dest: Path) -> Path:
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCE_ITEMS:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = _copy_source(tmp / "src")
    out = tmp / "wheelhouse"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(src),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"pip wheel failed:\n{proc.stdout}\n{proc.stderr}"
    wheels = list(out.glob("hayai_desktop-*.whl"))
    assert len(wheels) == 1, f"expected one hayai_desktop wheel, got {wheels}"
    return wheels[0]


@pytest.fixture(scope="module")
def wheel_names(wheel) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def _dist_info(names: set[str], filename: str) -> str:
    found = [n for n in names if n.endswith(".dist-info/" + filename)]
    assert len(found) == 1, f"{filename} not in the wheel's dist-info"
    return found[0]


def test_wheel_contains_package_data(wheel_names):
    # GIVEN the wheel built from the source  THEN icons, samples and the desktop entry are inside
    for name in [
        "resources/__init__.py",
        "resources/icons/hayai.svg",
        "resources/icons/hayai-busy.svg",
        "resources/icons/hayai-256.png",
        "resources/samples/sample_ja_horizontal.png",
        "resources/samples/sample_ja_vertical.png",
        "resources/hayai.desktop",
        "app/__init__.py",
        "app/cli.py",
        "app/platform/desktop_entry.py",
        "model/__init__.py",
    ]:
        assert name in wheel_names, f"{name} missing from the wheel"


def test_wheel_has_every_source_module(wheel_names):
    # A folder of .py files without __init__.py is skipped by find_packages: the installed app would
    # then fail with ImportError although the checkout works. Compare the source tree with the wheel.
    missing = []
    for package in ("app", "model", "resources"):
        for py in (ROOT / package).rglob("*.py"):
            rel = py.relative_to(ROOT).as_posix()
            if "__pycache__" not in rel and rel not in wheel_names:
                missing.append(rel)
    assert not missing, "not in the wheel (does their folder lack __init__.py?): " + ", ".join(
        sorted(missing)
    )


def test_wheel_has_no_junk(wheel_names):
    junk = [
        n
        for n in wheel_names
        if n.endswith((".pyc", ".safetensors", ".whl"))
        or n.startswith(("tests/", "packaging/", ".venv/"))
    ]
    assert not junk, f"unexpected files in the wheel: {junk}"


def test_console_script_entry_point(wheel, wheel_names):
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(_dist_info(wheel_names, "entry_points.txt")).decode()
    entry_points = configparser.ConfigParser()
    entry_points.read_string(text)
    assert entry_points["console_scripts"]["hayai"].strip() == "app.cli:main"


def test_metadata_declares_dependencies_and_test_extra(wheel, wheel_names):
    with zipfile.ZipFile(wheel) as zf:
        metadata = zf.read(_dist_info(wheel_names, "METADATA")).decode()
    requires = [
        line.split(":", 1)[1].strip()
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:")
    ]
    names = {re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower() for r in requires}
    for needed in (
        "torch",
        "transformers",
        "pyside6-essentials",
        "mss",
        "pynput",
        "pillow",
        "jamdict-data",
        "sudachipy",
        "sudachidict-small",
        "pytest",
    ):
        assert needed in names, f"{needed} not declared"
    # every runtime dependency carries a lower bound (or a pin: rapidocr, whose model file is hashed)
    unbounded = [r for r in requires if "extra ==" not in r and ">=" not in r and "==" not in r]
    assert not unbounded, f"dependencies without a lower bound: {unbounded}"
    assert any("pytest" in r and 'extra == "test"' in r for r in requires)
    from app import __version__

    assert f"\nVersion: {__version__}\n" in metadata


def _fresh_venv(tmp: Path) -> Path:
    """A new venv whose own site-packages is empty but which can import the current
    environment's third-party packages (a path line in a .pth file: offline, no copies).
    .pth files inside that path are *not* processed, so an editable install of this
    project in the outer venv stays invisible."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "outer_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


@pytest.mark.slow
def test_pip_install_into_fresh_venv_gives_working_hayai(wheel, tmp_path):
    # GIVEN a fresh venv and the wheel installed into it (not editable)
    venv = _fresh_venv(tmp_path)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    proc = subprocess.run(
        [
            str(bindir / "python"),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    hayai = bindir / "hayai"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(hayai), *args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120
        )

    # WHEN hayai runs from an unrelated folder  THEN --version and every --help work
    from app import __version__

    version = run("--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"hayai {__version__}"
    for args in [("--help",)] + [(cmd, "--help") for cmd in SUB_COMMANDS]:
        out = run(*args)
        assert out.returncode == 0, f"hayai {' '.join(args)}: {out.stderr}"
        assert "usage: hayai" in out.stdout

    # AND the code and the resources come from the installed copy, not the checkout
    probe = subprocess.run(
        [
            str(bindir / "python"),
            "-c",
            "import app, model, resources; print(app.__file__); print(resources.path('icons/hayai.svg'))",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    for line in probe.stdout.split():
        assert str(venv) in line and str(ROOT) not in line, probe.stdout

    # AND the declared lower bounds are satisfied by the versions the tests run with
    check = subprocess.run(
        [str(bindir / "python"), "-m", "pip", "check"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    problems = [ln for ln in check.stdout.splitlines() if ln.startswith("hayai-desktop")]
    assert not problems, "\n".join(problems)
