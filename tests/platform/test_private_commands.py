"""Every command that creates per-user state makes it private from the first run (issue #21,
item 9): each runs as its own process, as a user types it, in a HAYAI_CONFIG_DIR that does not
exist yet, under the usual umask 022 (which would give 0755 folders and 0644 files)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "dictionary"))


def hayai(config: Path, *args: str, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, HAYAI_CONFIG_DIR=str(config), PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1")
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=lambda: os.umask(0o022),
    )


def loose_paths(root: Path) -> list[str]:
    """Every path under `root` (itself included) that is not 0700 (folders) or 0600 (files)."""
    out = []
    for path in [root, *root.rglob("*")]:
        st = path.lstat()
        want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
        if stat.S_IMODE(st.st_mode) != want:
            out.append(f"{path.relative_to(root.parent)} {oct(stat.S_IMODE(st.st_mode))}")
    return out


@pytest.fixture
def fresh(tmp_path) -> Path:
    config = tmp_path / "never-started" / "hayai"  # its parent does not exist either
    assert not config.parent.exists()
    return config


def test_dict_commands_before_the_app_ever_started_create_private_state(fresh, tmp_path):
    from yomitan_zips import sample_zips

    zips = sample_zips(tmp_path)
    done = hayai(fresh, "dict", "import", str(zips["terms"]))
    assert done.returncode == 0, done.stderr
    assert list(fresh.rglob("imported.sqlite"))
    assert loose_paths(fresh) == []
    for args in (("dict", "list", "--json"), ("dict", "remove", "Test Terms")):
        done = hayai(fresh, *args)
        assert done.returncode == 0, done.stderr
        assert loose_paths(fresh) == []


def test_anki_status_creates_only_private_state(fresh):
    # no Anki listens on this port: the command answers that, and whatever it wrote is private
    done = hayai(fresh, "anki", "status", "--url", "http://127.0.0.1:9")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    if fresh.exists():
        assert loose_paths(fresh) == []


@pytest.mark.slow
def test_lookup_that_builds_the_index_creates_private_state(fresh, tmp_path):
    # the index is built here from scratch (~20-40 s of CPU): a cache folder of its own
    done = hayai(fresh, "lookup", "猫", extra_env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert "cat" in done.stdout
    assert list(fresh.rglob("dictionary-v*.sqlite"))
    assert loose_paths(fresh) == []
