"""Dictionary fixtures: one real index (`dictionary_index` in tests/conftest.py), built once."""

from __future__ import annotations

from pathlib import Path

import pytest



@pytest.fixture(scope="session")
def index_file(dictionary_index) -> Path:
    return dictionary_index


@pytest.fixture(scope="session")
def dictionary(index_file):
    from app.dictionary import Dictionary

    d = Dictionary(index_file=index_file)
    yield d
    d.close()
