"""The lookup index: reused when valid, rebuilt when missing, corrupt or stale; written atomically."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from app.dictionary import index


def _fake_build(good_index):
    """Stand in for the 20-second build: copy a known-good index into place, the same way (tmp + rename)."""
    calls = []

    def build(path, progress=None):
        calls.append(path)
        tmp = path.with_name(path.name + ".tmp-test")
        shutil.copyfile(good_index, tmp)
        if progress:
            progress("words (JMdict)", 0.5, 1.0)
        tmp.replace(path)

    return build, calls


def test_valid_index_is_reused(dictionary_index, monkeypatch):
    build, calls = _fake_build(dictionary_index)
    monkeypatch.setattr(index, "build_index", build)
    con = index.ensure_index(path=dictionary_index)
    assert con.execute("SELECT count(*) FROM forms").fetchone()[0] > 300_000
    con.close()
    assert calls == []


def test_missing_index_is_built(tmp_path, dictionary_index, monkeypatch):
    build, calls = _fake_build(dictionary_index)
    monkeypatch.setattr(index, "build_index", build)
    target = tmp_path / "sub" / index.INDEX_NAME
    target.parent.mkdir()
    assert index.open_index(target) is None
    con = index.ensure_index(path=target)
    assert calls == [target] and con.execute(
        "SELECT value FROM meta WHERE key='complete'"
    ).fetchone() == ("1",)
    con.close()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "incomplete", "stale"])
def test_corrupt_or_stale_index_is_rebuilt(tmp_path, dictionary_index, monkeypatch, damage):
    target = tmp_path / index.INDEX_NAME
    if damage == "garbage":
        target.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        target.write_bytes(dictionary_index.read_bytes()[:8192])
    else:
        shutil.copyfile(dictionary_index, target)
        con = sqlite3.connect(target)
        key, value = (
            ("complete", "0") if damage == "incomplete" else ("sources", "an older jamdict-data")
        )
        con.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
        con.commit()
        con.close()
    assert index.open_index(target) is None
    build, calls = _fake_build(dictionary_index)
    monkeypatch.setattr(index, "build_index", build)
    con = index.ensure_index(path=target)
    assert calls == [target]
    assert con.execute("SELECT count(*) FROM entries").fetchone()[0] > 100_000
    con.close()


def test_a_failed_build_leaves_no_file(tmp_path):
    # GIVEN a build interrupted by its progress callback, THEN neither the index nor a temp file remains
    target = tmp_path / index.INDEX_NAME

    def stop(stage, fraction, total):
        if fraction > 0.1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        index.build_index(target, stop)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_real_rebuild_of_a_corrupt_index(tmp_path):
    """The real build (~20 s): a corrupt file is replaced by a working index, with progress reported."""
    target = tmp_path / index.INDEX_NAME
    target.write_bytes(b"\0" * 4096)
    stages = []
    con = index.ensure_index(lambda stage, done, total: stages.append((stage, done)), path=target)
    assert stages[-1] == ("done", 1.0)
    assert [f for _, f in stages] == sorted(f for _, f in stages)
    assert con.execute("SELECT count(*) FROM cedict").fetchone()[0] > 100_000
    con.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [index.INDEX_NAME]


def test_pri_score_orders_common_words_first():
    assert index.pri_score(["ichi1"]) > index.pri_score(["nf01"]) > index.pri_score([])
    assert index.pri_score(["ichi1", "news1", "nf01"]) > index.pri_score(["ichi1", "news1", "nf20"])


def test_cedict_line_parser():
    assert index.parse_cedict_line("中國 中国 [Zhong1 guo2] /China/\n") == (
        "中國",
        "中国",
        "Zhong1 guo2",
        ["China"],
    )
    assert index.parse_cedict_line("# comment") is None
    assert index.parse_cedict_line("broken line") is None


def test_state_dir_follows_hayai_config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path))
    assert index.index_path() == tmp_path / "dictionary" / index.INDEX_NAME
