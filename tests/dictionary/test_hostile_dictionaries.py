"""Hostile Yomitan dictionaries: zip bombs refused from their declared sizes before anything is
inflated, banks parsed an entry at a time, numbers JSON cannot carry, nesting deeper than any
dictionary needs, records an older version stored that a lookup must survive, the lookup JSON
always JSON, and the lookup index private. Peak memory is measured with /usr/bin/time, not here
(docs/security.md)."""

from __future__ import annotations

import json
import os
import stat
import struct
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import yomitan_zips  # noqa: E402

from app.cli import main as cli_main  # noqa: E402
from app.dictionary import index, meta_records, structured, yomitan, yomitan_zip  # noqa: E402
from app.dictionary.lookup import Dictionary  # noqa: E402
from app.dictionary.models import json_safe  # noqa: E402
from app.dictionary.yomitan import Store  # noqa: E402
from app.dictionary.yomitan_zip import ImportError_  # noqa: E402

INDEX = {"title": "Hostile", "format": 3, "revision": "h"}


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "imported.sqlite")
    yield s
    s.close()


def _tables(store: Store) -> list:
    return [
        store.con.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        for table in ("dictionaries", "terms", "term_meta", "kanji", "kanji_meta", "tags")
    ]


def _refused(store: Store, path: Path, *words: str) -> str:
    """Import `path`, expecting a refusal that names the file and `words`; nothing changes."""
    before = _tables(store)
    with pytest.raises(ImportError_) as err:
        store.import_zip(path)
    message = str(err.value)
    assert path.name in message and all(w in message for w in words), message
    assert "\n" not in message  # one sentence
    assert _tables(store) == before
    return message


def _row(word: str, glossary: list, score=0, sequence=1) -> list:
    return [word, word, "", "", score, glossary, sequence, ""]


def _nested(levels: int, leaf: str = "deep") -> dict:
    """A structured-content glossary item nesting lists and objects exactly `levels` deep."""
    spans, odd = divmod(levels - 1, 2)
    node: object = [leaf] if odd else leaf
    for _ in range(spans):
        node = {"tag": "span", "content": [node]}
    return {"type": "structured-content", "content": node}


def _deep_bank(levels: int) -> str:
    """A term bank whose second row nests `levels` deep (the row and its glossary list count)."""
    item = yomitan_zips.nested_text(levels - 2)
    return f'[["浅い","浅い","","",0,["fine"],1,""], ["深い","深い","","",0,[{item}],1,""]]'


@pytest.fixture
def inflated(monkeypatch):
    """Counts the bytes zipfile inflates from the members' data (index.json included); refuses
    to go past 20 MB, so a bomb fails fast in place of filling memory."""
    total = [0]
    read = zipfile.ZipExtFile.read

    def counting(self, n=-1):
        data = read(self, n)
        total[0] += len(data)
        if total[0] > 20_000_000:
            raise AssertionError("more than 20 MB inflated: the bomb was read")
        return data

    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting)
    return total


# ----------------------------------------------------------------------------------- zip bombs


def test_a_zip_bomb_is_refused_from_its_declared_size_before_inflating_it(
    store, tmp_path, inflated
):
    # GIVEN a real 2 MB zip whose one bank inflates to 2 GB of valid rows (the probe's bomb)
    bomb = yomitan_zips.bomb_zip(tmp_path / "bomb.zip", 2_000_000_000, gloss=1_000_000)
    assert bomb.stat().st_size < 3_000_000
    # THEN it is refused from the sizes its directory declares, with one sentence
    message = _refused(store, bomb, "term_bank_1.json", "2 GB", "250 MB")
    assert message.startswith("bomb.zip: term_bank_1.json would unpack to 2 GB")
    assert inflated[0] < 1000  # index.json only: not a byte of the bank


def test_a_bank_packed_like_a_bomb_is_refused_for_its_ratio(store, tmp_path, inflated):
    # 4.4 MB of rows packed 250 times: under every size limit, but no dictionary packs like that
    bomb = yomitan_zips.bomb_zip(tmp_path / "dense.zip", 4_400_000)
    _refused(store, bomb, "term_bank_1.json", "times its packed size", "at most 100")
    assert inflated[0] < 1000


def test_the_banks_together_are_capped(store, tmp_path, monkeypatch):
    big = yomitan_zips.generated_zip(tmp_path / "four.zip", 4000, per_bank=1000)
    sizes = [i.file_size for i in zipfile.ZipFile(big).infolist() if "bank" in i.filename]
    monkeypatch.setattr(yomitan_zip, "MAX_TOTAL_BYTES", sum(sizes) - 1)
    _refused(store, big, "its banks would unpack to", "in all")
    monkeypatch.setattr(yomitan_zip, "MAX_TOTAL_BYTES", sum(sizes))
    assert store.import_zip(big).terms == 4000


def test_a_zip_listing_too_many_files_is_refused_before_zipfile_reads_the_list(
    store, tmp_path, monkeypatch
):
    # zipfile keeps an object per listed file (~500 bytes each): a 100 MB zip of a million empty
    # files took 520 MB before a single bank was looked at. Here the same with a smaller limit.
    images = {f"img/{n}.png": b"" for n in range(200)}
    path = yomitan_zips.write_zip(
        tmp_path / "many.zip", INDEX, {"term_bank_1.json": [_row("犬", ["dog"])]}, images
    )
    monkeypatch.setattr(yomitan_zip, "MAX_DIRECTORY_BYTES", 5000)
    opened = []
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: opened.append(a))
    _refused(store, path, "its list of files takes", "more than the")
    assert opened == []


def test_a_member_that_declares_less_than_it_holds_is_cut_there_and_refused(store, tmp_path):
    # zipfile inflates a member up to its declared size only, then checks the CRC of what it got
    path = yomitan_zips.bomb_zip(tmp_path / "liar.zip", 500_000_000)
    data = bytearray(path.read_bytes())
    declared = 2_000_000  # a few hundred times less than it holds, so within the ratio
    name = b"term_bank_1.json"  # the uncompressed size: 22 bytes into the local header (30
    struct.pack_into("<I", data, data.index(name) - 30 + 22, declared)  # before the name), 24
    struct.pack_into("<I", data, data.rindex(name) - 46 + 24, declared)  # into the directory's
    path.write_bytes(bytes(data))
    assert zipfile.ZipFile(path).getinfo("term_bank_1.json").file_size == declared
    _refused(store, path, "term_bank_1.json")


def test_a_fifo_or_a_device_is_refused_without_opening_it(store, tmp_path):
    fifo = tmp_path / "pipe.zip"
    os.mkfifo(fifo)  # opening it would block until a writer came
    _refused(store, fifo, "not a regular file")
    with pytest.raises(ImportError_, match="zero: not a Yomitan dictionary"):
        store.import_zip("/dev/zero")


def test_index_json_is_capped(store, tmp_path):
    index_json = dict(INDEX, description="x" * 1_100_000)
    path = yomitan_zips.write_zip(
        tmp_path / "bigindex.zip", index_json, {"term_bank_1.json": [_row("犬", ["dog"])]}
    )
    _refused(store, path, "index.json would unpack to 1.1 MB")


# ------------------------------------------------------------------------- banks parsed in pieces

TRICKY_ROWS = [
    _row("猫", ["a cat", '[not] {a} "list" ,]']),
    _row("𠮷田", ["\\", "\u00e9\u3042\U0001f600", {"type": "text", "text": "x\ny"}], 5, 7),
    _row("かな", [yomitan_zips.EXAMPLE_GLOSSARY], -3, 2**62),
    _row("空", []),
    _row("数", ["1.5e3", 0.25, -0.0, 12345678901234567890], 2.75, 3.5),
]


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_banks_are_read_in_chunks_with_entries_cut_anywhere(store, tmp_path, monkeypatch, chunk):
    # GIVEN chunks so small that entries, strings, escapes and multi-byte characters are cut at
    # every possible place, WHEN a bank with a BOM and odd white space is imported, THEN every
    # row is exactly what json.loads reads from the whole bank
    monkeypatch.setattr(yomitan_zip, "_CHUNK_BYTES", chunk)
    monkeypatch.setattr(yomitan_zip, "_BATCH_ROWS", 2)
    text = " \n\t[ " + " ,\r\n ".join(json.dumps(r, ensure_ascii=False) for r in TRICKY_ROWS)
    raw = ("\ufeff" + text + " ]\n ").encode()
    path = yomitan_zips.write_zip(tmp_path / "tricky.zip", INDEX, {}, {"term_bank_1.json": raw})
    info = store.import_zip(path)
    assert info.terms == len(TRICKY_ROWS)
    stored = store.con.execute(
        "SELECT expression, glossary, score, sequence FROM terms ORDER BY rowid"
    ).fetchall()
    expected = json.loads(raw.decode("utf-8-sig"))
    assert [(e, json.loads(g)) for e, g, _s, _q in stored] == [(r[0], r[5]) for r in expected]
    assert [(s, q) for _e, _g, s, q in stored] == [(0, 1), (5, 7), (-3, 2**62), (0, 1), (2, 3)]


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"[]", None),
        (b'{"not": "a list"}', "is not a JSON list"),
        (b'[["a", "a", "", "", 0, ["x"], 1, ""],]', "entry 2: Expecting value"),
        (b'[["a", "a", "", "", 0, ["x"], 1, ""] ["b"]]', "entry 1 is not followed by , or ]"),
        (b'[["a", "a", "", "", 0, ["x"], 1, ""]] x', "more text after its list"),
        (b'[["a", "a", "", "", 0, ["x"], 1, ""]', "it ends inside its list"),
        (b'[["a", "a", "", "", 0, ["x"], 1, "', "entry 1: Unterminated string"),
        (b'[["\xff"]]', "is not UTF-8 text"),
    ],
)
def test_a_broken_bank_is_explained(store, tmp_path, monkeypatch, raw, words):
    monkeypatch.setattr(yomitan_zip, "_CHUNK_BYTES", 5)
    path = yomitan_zips.write_zip(tmp_path / "b.zip", INDEX, {}, {"term_bank_1.json": raw})
    if words is None:
        assert store.import_zip(path).terms == 0
    else:
        _refused(store, path, "term_bank_1.json", words)


def test_a_syntax_error_is_reported_without_reading_on(store, tmp_path, inflated):
    # a broken first entry in a 10 MB bank: refused at once, not after reading it all
    rows = [
        json.dumps(_row(f"語{n}", [f"meaning {n * 7919 % 100_003}"], n, n)) for n in range(200_000)
    ]
    text = '[["a", "a", "", "", 0, ["x"] oops], ' + ", ".join(rows) + "]"
    path = yomitan_zips.write_zip(tmp_path / "early.zip", INDEX, {}, {"term_bank_1.json": text})
    assert zipfile.ZipFile(path).getinfo("term_bank_1.json").file_size > 10_000_000
    _refused(store, path, "term_bank_1.json is not valid JSON (entry 1: Expecting ',' delimiter)")
    assert inflated[0] < 3_000_000


def test_an_entry_longer_than_the_limit_is_refused(store, tmp_path, monkeypatch):
    monkeypatch.setattr(yomitan_zip, "MAX_ENTRY_CHARS", 1000)
    path = yomitan_zips.write_zip(
        tmp_path / "long.zip",
        INDEX,
        {"term_bank_1.json": [_row("短", ["short"]), _row("長", ["x" * 5000])]},
    )
    _refused(store, path, "term_bank_1.json, entry 2 is longer than 1,000 characters")


# -------------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("bank", "text", "words"),
    [
        ("term_bank_1.json", '[["a", "a", "", "", NaN, ["x"], 1, ""]]', "NaN is not a number"),
        ("term_bank_1.json", '[["a", "a", "", "", Infinity, ["x"], 1, ""]]', "Infinity"),
        ("term_bank_1.json", '[["a", "a", "", "", 0, ["x"], -Infinity, ""]]', "-Infinity"),
        ("term_bank_1.json", '[["a", "a", "", "", 1e400, ["x"], 1, ""]]', "1e400 is too large"),
        ("term_bank_1.json", '[["a", "a", "", "", 0, [{"x": NaN}], 1, ""]]', "NaN"),
        ("term_meta_bank_1.json", '[["a", "freq", 1], ["b", "freq", NaN]]', "entry 2: NaN"),
        ("term_meta_bank_1.json", '[["a", "freq", {"value": Infinity}]]', "Infinity"),
        ("term_meta_bank_1.json", '[["a", "freq", ' + "9" * 400 + "]]", "400 digits"),
        ("kanji_meta_bank_1.json", '[["猫", "freq", NaN]]', "NaN"),
    ],
)
def test_numbers_json_has_not_are_refused_naming_the_entry(store, tmp_path, bank, text, words):
    # today: ValueError (cannot convert float NaN to integer) or OverflowError tracebacks, or the
    # NaN stored and printed by `hayai lookup --json`
    path = yomitan_zips.write_zip(tmp_path / "nan.zip", INDEX, {}, {bank: text.encode()})
    _refused(store, path, bank, "entry", words)


def test_huge_scores_and_sequence_numbers_are_clamped_to_64_bits(store, tmp_path):
    rows = [
        _row("大", ["big"], score=1e30, sequence=1e30),
        _row("小", ["small"], score=-(10**30), sequence=-1e300),
        _row("中", ["middle"], score=2.9, sequence=-2.9),
    ]
    path = yomitan_zips.write_zip(tmp_path / "big.zip", INDEX, {"term_bank_1.json": rows})
    assert store.import_zip(path).terms == 3
    assert store.con.execute("SELECT score, sequence FROM terms ORDER BY rowid").fetchall() == [
        (2**63 - 1, 2**63 - 1),
        (-(2**63), -(2**63)),
        (2, -2),
    ]


# -------------------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("levels", [2000, 50_000])
def test_an_entry_nested_deeper_than_json_can_read_is_refused(store, tmp_path, levels):
    # today: a RecursionError traceback
    path = yomitan_zips.write_zip(
        tmp_path / "deep.zip", INDEX, {}, {"term_bank_1.json": _deep_bank(levels)}
    )
    _refused(store, path, "term_bank_1.json, entry 2 is nested too deeply (about 1,000 levels)")


@pytest.mark.parametrize("levels", [structured.MAX_DEPTH, 840])
def test_an_entry_nested_deeply_imports_and_renders_to_the_depth_limit(store, tmp_path, levels):
    # 840 levels (~420 elements): today it imported, and then every lookup of its word failed
    path = yomitan_zips.write_zip(
        tmp_path / "ok.zip", INDEX, {}, {"term_bank_1.json": _deep_bank(levels + 2)}
    )
    assert store.import_zip(path).terms == 2
    glossary = json.loads(store.con.execute("SELECT glossary FROM terms").fetchall()[1][0])
    text, html = structured.to_text(glossary[0]), structured.to_html(glossary[0])
    if levels <= structured.MAX_DEPTH:
        assert text == "deep" and "deep" in html and "…" not in html
    else:
        assert text == "…" and "deep" not in html and html.endswith("…")


@pytest.mark.parametrize("levels", [1000, 100_000])
def test_structured_content_renders_any_depth_without_recursion(levels):
    # today: RecursionError from to_html and to_text past ~330 elements
    item = _nested(levels, "lost")
    item["content"] = [{"tag": "div", "content": "kept"}, item["content"]]
    assert structured.to_text(item) == "kept\n…"
    html = structured.to_html(item)
    assert html.startswith("<div>kept</div>") and html.endswith("…")


def test_ruby_inside_ruby_readings_is_cut_at_the_depth_limit_too():
    node: object = "x"
    for _ in range(5000):  # 漢（漢（漢（…）））: each reading holds the next ruby
        node = {"tag": "ruby", "content": ["漢", {"tag": "rt", "content": [node]}]}
    text = structured.to_text(node)
    assert text.startswith("漢（漢（") and "…" in text and len(text) < 200
    assert "…" in structured.to_html(node)


# ------------------------------------------------------------------- records an old version stored


@pytest.fixture
def old_store(tmp_path, dictionary_index):
    d = Dictionary(
        index_file=dictionary_index, store_file=yomitan_zips.old_store(tmp_path / "store")
    )
    yield d
    d.close()


def test_one_bad_record_never_hides_the_others(old_store):
    # today: RecursionError, so the lookup fails and the popup says "Dictionary unavailable"
    result = old_store.lookup("深い")
    sources = [(e.source, e.dictionary) for e in result.entries]
    assert ("jmdict", None) in sources and ("yomitan", "Good") in sources
    old = next(e for e in result.entries if e.dictionary == "Old")
    # the 840-level glossary is shown cut short, the one that is not JSON is left out
    assert [s.glosses for s in old.senses] == [["…"], ["a second sense (Old)"]]
    assert all(f["dictionary"] != "Old" for e in result.entries for f in e.frequencies)
    assert all(not e.ipa for e in result.entries)
    json.dumps(result.to_json(), allow_nan=False)


def test_hayai_lookup_prints_json_whatever_the_store_holds(
    old_store, tmp_path, monkeypatch, capsys
):
    # today: exit 1 (RecursionError); and a NaN frequency came out as a bare NaN, not JSON
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setattr(index, "index_path", lambda: old_store.index_file)
    monkeypatch.setattr(yomitan, "store_path", lambda: old_store.store_file)
    assert cli_main(["lookup", "深い", "--json"]) == 0
    out = capsys.readouterr().out

    def strict(constant):
        raise AssertionError(f"{constant} in the JSON")

    entries = json.loads(out, parse_constant=strict)
    assert {e.get("dictionary") for e in entries} >= {None, "Good", "Old"}
    assert cli_main(["lookup", "深い"]) == 0
    assert "deep (Good)" in capsys.readouterr().out


def test_json_safe_turns_what_json_cannot_carry_into_null():
    value = {"a": [1.5, float("nan"), {"b": float("inf")}], "c": -float("inf"), "d": "NaN"}
    assert json_safe(value) == {"a": [1.5, None, {"b": None}], "c": None, "d": "NaN"}


def test_frequency_ignores_values_that_are_not_finite():
    for data in (float("nan"), float("inf"), {"value": float("-inf")}, 10**400, "9" * 400):
        assert meta_records.frequency(data) is None
    assert meta_records.frequency({"frequency": {"frequency": 5}}) == (5.0, "5")


def test_cli_imports_a_huge_sequence_number_and_refuses_nan_in_one_sentence(
    tmp_path, monkeypatch, capsys
):
    # today: an OverflowError traceback, and a ValueError traceback
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    rows = [_row("大", ["big"], sequence=1e30)]
    path = yomitan_zips.write_zip(tmp_path / "seq.zip", INDEX, {"term_bank_1.json": rows})
    assert cli_main(["dict", "import", str(path)]) == 0
    assert "imported Hostile (revision h): 1 terms" in capsys.readouterr().out
    nan = yomitan_zips.write_zip(
        tmp_path / "nan.zip", INDEX, {}, {"term_bank_1.json": b'[["a","a","","",NaN,[],1,""]]'}
    )
    assert cli_main(["dict", "import", str(nan)]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (
        "hayai dict import: nan.zip: term_bank_1.json, entry 1: NaN is not a number (JSON has "
        "no NaN); nothing was changed"
    )


# ------------------------------------------------------------------------------ the lookup index


def test_the_lookup_index_is_written_private_from_the_start(tmp_path):
    # GIVEN a umask that leaves new files readable by others, WHEN the index is built, THEN its
    # file is 0600 already while it is being written (today 0644), and so after the rename
    target = tmp_path / index.INDEX_NAME
    modes = []

    def look(stage, fraction, total):
        modes.extend(stat.S_IMODE(p.stat().st_mode) for p in tmp_path.glob("*.tmp-*"))
        if fraction > 0:
            raise KeyboardInterrupt  # the mode is known: no need for the 20-second build

    old = os.umask(0o022)
    try:
        with pytest.raises(KeyboardInterrupt):
            index.build_index(target, look)
    finally:
        os.umask(old)
    assert modes and set(modes) == {0o600}


def test_an_index_left_readable_by_an_older_version_is_made_private(tmp_path, dictionary_index):
    import shutil

    target = tmp_path / index.INDEX_NAME
    shutil.copyfile(dictionary_index, target)
    target.chmod(0o644)
    con = index.open_index(target)
    assert con is not None
    con.close()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


@pytest.mark.parametrize("tag", [["div"], {"name": "div"}, None, 7])
def test_an_element_whose_tag_is_not_a_string_keeps_its_content(tag):
    # both renderers read the tag the same way: a list or object as a tag is an unknown tag (the
    # plain-text one used to raise TypeError on it)
    node = {"type": "structured-content", "content": [{"tag": tag, "content": "kept"}, "."]}
    assert structured.to_text(node) == "kept."
    assert structured.to_html(node) == "kept."
