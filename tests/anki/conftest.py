"""Fixtures for the Anki tests: a fake AnkiConnect on loopback and a Miner pointed at it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_ankiconnect import FakeAnki  # noqa: E402


@pytest.fixture
def fake_anki():
    with FakeAnki() as anki:
        yield anki


@pytest.fixture
def miner_for():
    from app.anki.miner import AnkiConfig, Miner

    def make(anki, **config) -> Miner:
        return Miner(AnkiConfig(url=anki.url, **config))

    return make
