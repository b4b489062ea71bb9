"""Fixtures for the Anki tests: AnkiConnect stand-ins on loopback and a Miner pointed at one.

`anki` runs a test four times: the fake (in memory) and the stand-in on Anki's real collection
(the `anki` package), each as the new AnkiConnect on Anki 25.9+ and as the old one from GitHub
(see fake_ankiconnect.py for what differs). `fake_anki` is the fake in "new" mode, for the GUI
tests that only need something answering.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_ankiconnect import STAND_INS, FakeAnki, stand_in  # noqa: E402


@pytest.fixture(params=STAND_INS)
def anki(request):
    with stand_in(request.param) as server:
        yield server


@pytest.fixture
def fake_anki():
    with FakeAnki() as server:
        yield server


@pytest.fixture
def miner_for():
    from app.anki.miner import AnkiConfig, Miner

    def make(anki, **config) -> Miner:
        return Miner(AnkiConfig(url=anki.url, **config))

    return make
