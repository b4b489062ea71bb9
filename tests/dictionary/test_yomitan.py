"""Yomitan-format dictionaries: import (atomic, with clear errors), `hayai dict`, lookups that join
JMdict, structured content as text, frequencies and pitch in `hayai lookup --json`, Korean."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import yomitan_zips  # noqa: E402

from app.cli import main as cli_main  # noqa: E402
from app.dictionary import structured  # noqa: E402
from app.dictionary.lookup import Dictionary  # noqa: E402
from app.dictionary.meta_records import frequency  # noqa: E402
from app.dictionary.pitch import morae, pattern, pitch_position  # noqa: E402
from app.dictionary.yomitan import JMDICT, Store  # noqa: E402
from app.dictionary.yomitan_zip import ImportError_  # noqa: E402


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "imported.sqlite")
    yield s
    s.close()


@pytest.fixture
def zips(tmp_path):
    return yomitan_zips.sample_zips(tmp_path / "zips")


@pytest.fixture
def with_imports(tmp_path, dictionary_index, zips):
    """A Dictionary on the real JMdict index plus the three Japanese test dictionaries."""
    store_file = tmp_path / "store" / "imported.sqlite"
    store_file.parent.mkdir()
    s = Store(store_file)
    for name in ("terms", "freq", "pitch"):
        s.import_zip(zips[name])
    s.close()
    d = Dictionary(index_file=dictionary_index, store_file=store_file)
    yield d
    d.close()


def _dump(store: Store) -> list:
    con = store.con
    return [
        con.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        for table in ("dictionaries", "terms", "term_meta", "kanji", "kanji_meta", "tags")
    ]


# ------------------------------------------------------------------------------------------ import


def test_import_counts_every_bank(store, zips):
    info = store.import_zip(zips["terms"])
    assert (info.title, info.revision, info.format) == ("Test Terms", "t1", 3)
    assert (info.terms, info.kanji, info.kanji_meta) == (5, 2, 1)
    assert info.language == "ja"
    freq = store.import_zip(zips["freq"])
    pitch = store.import_zip(zips["pitch"])
    assert freq.term_meta == 4 and pitch.term_meta == 6
    assert [d.title for d in store.dictionaries()] == ["Test Terms", "Test Freq", "Test Pitch"]


def test_reimport_replaces_in_place_and_keeps_the_settings(store, zips):
    store.import_zip(zips["terms"])
    store.import_zip(zips["freq"])
    store.set_enabled("Test Terms", False)
    store.import_zip(zips["terms"])
    infos = store.dictionaries()
    assert [d.title for d in infos] == ["Test Terms", "Test Freq"]
    assert infos[0].enabled is False
    assert store.con.execute("SELECT count(*) FROM terms").fetchone()[0] == 5


def test_a_title_with_spaces_around_it_replaces_the_same_dictionary(store, zips, tmp_path):
    # the title is stored without its spaces, so the new import finds it by that title (it used to
    # look for the title as written and fail on the UNIQUE title of the stored one)
    store.import_zip(zips["freq"])
    spaced = yomitan_zips.write_zip(
        tmp_path / "spaced.zip",
        {"title": "  Test Freq ", "format": 3, "revision": "f2"},
        {"term_meta_bank_1.json": [["猫", "freq", 7]]},
    )
    info = store.import_zip(spaced)
    assert (info.title, info.revision, info.term_meta) == ("Test Freq", "f2", 1)
    assert [d.title for d in store.dictionaries()] == ["Test Freq"]


@pytest.mark.parametrize("case", list(yomitan_zips.broken_zips(Path("/tmp")).keys()))
def test_a_broken_file_leaves_the_store_as_it_was(store, zips, tmp_path, case):
    # GIVEN a store with a dictionary, WHEN a broken zip is imported, THEN a clear error names the
    # file and the problem, and every table is exactly as before
    store.import_zip(zips["terms"])
    before = _dump(store)
    path, word = yomitan_zips.broken_zips(tmp_path)[case]
    with pytest.raises(ImportError_) as err:
        store.import_zip(path)
    assert path.name in str(err.value) and word in str(err.value)
    assert _dump(store) == before


def test_an_interrupted_import_is_rolled_back(store, zips, tmp_path):
    store.import_zip(zips["terms"])
    before = _dump(store)
    big = yomitan_zips.generated_zip(tmp_path / "big.zip", 3000, per_bank=1000)

    def interrupt(stage, done, total):
        if stage == "term_bank_3.json":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.import_zip(big, interrupt)
    assert _dump(store) == before
    # and a killed process: another connection never sees a half-written dictionary
    other = sqlite3.connect(store.path)
    assert other.execute("SELECT count(*) FROM terms").fetchone()[0] == 5
    other.close()


KILLED_IMPORT = """
import sys, time
from pathlib import Path
from app.dictionary.yomitan import Store

def progress(stage, done, total):
    print(stage, flush=True)
    if stage == "term_bank_4.json":
        time.sleep(60)  # the parent kills us here, mid-transaction

Store(Path(sys.argv[1])).import_zip(sys.argv[2], progress)
"""


def test_a_killed_import_leaves_the_store_as_it_was(store, zips, tmp_path):
    # GIVEN a store with a dictionary, WHEN another process is killed (SIGKILL) in the middle of
    # importing a big one, THEN the store holds exactly what it held before
    import os
    import signal
    import subprocess

    store.import_zip(zips["terms"])
    before = _dump(store)
    big = yomitan_zips.generated_zip(tmp_path / "big.zip", 6000, per_bank=1000)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_IMPORT, str(store.path), str(big)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
        text=True,
    )
    for line in proc.stdout:
        if line.strip() == "term_bank_4.json":
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    fresh = Store(store.path)  # a new connection recovers from the killed writer's journal
    assert _dump(fresh) == before
    fresh.close()
    assert _dump(store) == before


def test_a_generated_dictionary_imports_completely(store, tmp_path):
    info = store.import_zip(yomitan_zips.generated_zip(tmp_path / "gen.zip", 20000, per_bank=5000))
    assert info.terms == 20000
    assert store.con.execute("SELECT count(DISTINCT reading) FROM terms").fetchone()[0] == 20000


def test_order_enable_and_remove(store, zips):
    for name in ("terms", "freq", "pitch"):
        store.import_zip(zips[name])
    store.move("Test Pitch", -2)
    assert [d.title for d in store.dictionaries()] == ["Test Pitch", "Test Terms", "Test Freq"]
    store.set_enabled("Test Freq", False)
    assert [d.title for d in store.dictionaries(enabled_only=True)] == ["Test Pitch", "Test Terms"]
    store.remove("Test Terms")
    assert [d.title for d in store.dictionaries()] == ["Test Pitch", "Test Freq"]
    assert store.con.execute("SELECT count(*) FROM terms").fetchone()[0] == 0
    with pytest.raises(KeyError, match="Nope"):
        store.remove("Nope")


def test_jmdict_has_a_place_in_the_order(store, zips):
    # GIVEN three imported dictionaries, THEN JMdict comes first in the order until moved; moving it
    # keeps the imported ones' own order, and a later import goes to the end
    for name in ("terms", "freq"):
        store.import_zip(zips[name])
    assert store.order() == [JMDICT, "Test Terms", "Test Freq"]
    store.move(JMDICT, 5)
    assert store.order() == ["Test Terms", "Test Freq", JMDICT]
    store.import_zip(zips["pitch"])
    assert store.order() == ["Test Terms", "Test Freq", JMDICT, "Test Pitch"]
    store.set_order(["Test Pitch", JMDICT])
    assert store.order() == ["Test Pitch", JMDICT, "Test Terms", "Test Freq"]
    assert [d.title for d in store.dictionaries()] == ["Test Pitch", "Test Terms", "Test Freq"]
    with pytest.raises(KeyError, match="Nope"):
        store.move("Nope", 1)


# ------------------------------------------------------------------------------- formats of values


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (1200, (1200.0, "1200")),
        ("321 (novels)", (321.0, "321 (novels)")),
        ({"value": 500, "displayValue": "500㋕"}, (500.0, "500㋕")),
        ({"value": 7}, (7.0, "7")),
        ({"reading": "はし", "frequency": {"value": 9, "displayValue": "9/10"}}, (9.0, "9/10")),
        (True, None),
    ],
)
def test_frequency_values(data, expected):
    assert frequency(data) == expected


@pytest.mark.parametrize(
    ("position", "expected"),
    [(0, 0), (2, 2), ("LHH", 0), ("HLL", 1), ("LHLL", 2), (-1, None), ("x", None)],
)
def test_pitch_positions(position, expected):
    assert pitch_position(position) == expected


def test_morae_and_patterns():
    assert morae("きょう") == ["きょ", "う"]
    assert morae("がっこう") == ["が", "っ", "こ", "う"]
    assert pattern(3, 0) == [False, True, True, True]
    assert pattern(3, 1) == [True, False, False, False]
    assert pattern(3, 2) == [False, True, False, False]
    assert pattern(3, 3) == [False, True, True, False]


def test_structured_content_as_text_and_rich_text():
    text = structured.to_text(yomitan_zips.EXAMPLE_GLOSSARY)
    assert text.splitlines() == [
        "• to eat",
        "• to live on (e.g. a salary)",
        "Note: also used figuratively.",
        "朝（あさ）ご飯を食べる。 I eat breakfast.",
    ]
    rich = structured.to_html(yomitan_zips.EXAMPLE_GLOSSARY)
    assert "<li>to eat</li>" in rich and "<ul" in rich and "font-style:italic" in rich
    assert "{" not in rich and '"tag"' not in rich  # never raw JSON
    assert structured.to_html("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"  # text is escaped


# ------------------------------------------------------------------------------------------ lookups


def test_imported_terms_join_jmdict_labelled_with_their_dictionary(with_imports):
    entries = with_imports.lookup("食べた").entries
    sources = [(e.headword, e.source, e.dictionary) for e in entries[:2]]
    assert sources == [("食べる", "jmdict", None), ("食べる", "yomitan", "Test Terms")]
    imported = entries[1]
    assert imported.deinflection == ["past"] and imported.match == "食べた"
    assert imported.senses[0].glosses[0].startswith("• to eat")
    assert "<li>to eat</li>" in imported.senses[0].html


def test_an_imported_word_jmdict_lacks_deinflects_by_its_rules(with_imports):
    hit = [e for e in with_imports.lookup("ほげた").entries if e.headword == "ほげる"]
    assert hit and hit[0].deinflection == ["past"] and hit[0].dictionary == "Test Terms"


def _tagged_zip(folder: Path) -> Path:
    """Terms whose definition and term tags are explained by the dictionary's tag banks."""
    return yomitan_zips.write_zip(
        folder / "tagged.zip",
        {"title": "Tagged", "format": 3, "revision": "1"},
        {
            "term_bank_1.json": [
                ["ほげる", "ほげる", "uk v1 P:1 zz", "v1", 1, ["to hoge"], 1, "★"],
                ["ほげる", "ほげる", "v1 vt", "v1", 0, ["to hoge something"], 1, ""],
            ],
            "tag_bank_1.json": [
                ["v1", "partOfSpeech", -3, "Ichidan verb", 0],
                ["uk", "misc", 0, "usually written using kana alone", 0],
                ["P", "popular", -5, "a common form", 0],
            ],
            "tag_bank_2.json": [["★", "popular", -10, "high priority entry", 0]],
        },
    )


def test_tag_banks_expand_into_notes_as_yomitan_does(tmp_path, dictionary_index):
    # GIVEN a dictionary with tag banks, WHEN one of its words is looked up, THEN each sense's tags
    # come in the banks' order (then by name), a tag with a colon is found by the part before it, a
    # tag the banks lack stays as written, and the notes of the banks explain them; the term's own
    # tags (★) are explained on the first sense
    store = Store(tmp_path / "imported.sqlite")
    store.import_zip(_tagged_zip(tmp_path))
    store.close()
    d = Dictionary(index_file=dictionary_index, store_file=tmp_path / "imported.sqlite")
    try:
        entry = next(e for e in d.lookup("ほげた").entries if e.dictionary == "Tagged")
    finally:
        d.close()
    first, second = entry.senses
    assert first.glosses == ["to hoge"] and first.pos == ["P:1", "v1", "uk", "zz"]
    assert first.notes == [
        "high priority entry",
        "a common form",
        "Ichidan verb",
        "usually written using kana alone",
    ]
    assert second.pos == ["v1", "vt"] and second.notes == ["Ichidan verb"]
    assert entry.to_json()["senses"][0]["pos"] == ["P:1", "v1", "uk", "zz"]


def test_a_store_from_before_tag_orders_is_upgraded(tmp_path, zips):
    # GIVEN a store written before tags kept their order, WHEN it is opened and a dictionary
    # imported, THEN the tags table gains the column and the import keeps each tag's order
    path = tmp_path / "imported.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE tags (dict INTEGER, name TEXT, category TEXT, notes TEXT)")
    con.execute("INSERT INTO tags VALUES (1, 'old', 'misc', 'kept')")
    con.commit()
    con.close()
    store = Store(path)
    try:
        store.import_zip(_tagged_zip(tmp_path))
        rows = store.con.execute(
            "SELECT name, sort_order, notes FROM tags ORDER BY rowid"
        ).fetchall()
    finally:
        store.close()
    assert rows[0] == ("old", 0, "kept")
    assert ("★", -10, "high priority entry") in rows and ("v1", -3, "Ichidan verb") in rows


def test_the_users_order_ranks_the_dictionaries_at_equal_length(with_imports):
    # GIVEN JMdict and Test Terms both with 食べる, WHEN Test Terms is moved above JMdict, THEN its
    # entry comes first at the same length and steps; names stay after the words
    def sources(text):
        return [(e.headword, e.source) for e in with_imports.lookup(text).entries[:2]]

    assert sources("食べた") == [("食べる", "jmdict"), ("食べる", "yomitan")]
    with_imports.store().set_order(["Test Terms", JMDICT])
    assert sources("食べた") == [("食べる", "yomitan"), ("食べる", "jmdict")]
    # a longer match still comes first whatever its dictionary, and a word before a name
    entries = with_imports.lookup("日本語").entries
    assert entries[0].match == "日本語" and entries[0].source == "yomitan"
    assert [e.source for e in entries].index("jmdict") < max(
        (i for i, e in enumerate(entries) if e.source == "jmnedict"), default=99
    )
    with_imports.store().move(JMDICT, -1)
    assert sources("食べた") == [("食べる", "jmdict"), ("食べる", "yomitan")]


def test_frequencies_and_pitch_on_every_entry(with_imports):
    first = with_imports.lookup("食べる").entries[0]
    assert first.source == "jmdict"
    assert first.frequencies == [{"dictionary": "Test Freq", "value": 500, "display": "500㋕"}]
    assert first.pitch == [{"dictionary": "Test Pitch", "reading": "たべる", "positions": [2]}]
    neko = with_imports.lookup("猫").entries[0]
    assert neko.pitch[0]["positions"] == [1, 0]
    nihongo = with_imports.lookup("日本語").entries[0]
    assert nihongo.ipa == [
        {"dictionary": "Test Pitch", "reading": "にほんご", "transcriptions": ["ɲihoŋɡo"]}
    ]
    assert nihongo.to_json()["pitch"] == [
        {"dictionary": "Test Pitch", "reading": "にほんご", "positions": [0]}
    ]
    # a record keyed by reading applies to its reading only: 箸 (はし) gets 4000, 橋 no frequency
    hashi = with_imports.lookup("箸").entries[0]
    assert (hashi.headword, hashi.source) == ("箸", "jmdict")
    assert hashi.frequencies[0]["value"] == 4000
    bridge = with_imports.lookup("橋").entries[0]
    assert bridge.frequencies == [] and bridge.pitch[0]["positions"] == [2]


def test_imported_kanji_meanings_and_frequencies(with_imports):
    neko = with_imports.lookup("猫").entries[0].kanji[0]
    assert neko.meanings[0] == "cat"  # KANJIDIC2's, kept
    assert neko.dictionaries == [
        {
            "dictionary": "Test Terms",
            "meanings": ["cat", "kitty"],
            "on": ["ビョウ"],
            "kun": ["ねこ"],
        }
    ]
    assert neko.frequencies == [{"dictionary": "Test Terms", "value": 1500, "display": "1500"}]
    assert neko.to_json()["frequencies"][0]["value"] == 1500
    # a kanji KANJIDIC2 lacks gets its imported entry
    yoshida = next(e for e in with_imports.lookup("𠮷田").entries if e.headword == "𠮷田")
    assert [k.char for k in yoshida.kanji] == ["𠮷", "田"]
    assert yoshida.kanji[0].meanings == ["lucky (variant of 吉)"]
    # the builder's cached KANJIDIC2 objects are never changed
    with_imports.store().set_enabled("Test Terms", False)
    assert with_imports.lookup("猫").entries[0].kanji[0].dictionaries == []


def test_a_disabled_dictionary_is_not_used(with_imports):
    with_imports.store().set_enabled("Test Freq", False)
    assert with_imports.lookup("食べる").entries[0].frequencies == []
    with_imports.store().set_enabled("Test Freq", True)
    assert with_imports.lookup("食べる").entries[0].frequencies


def test_cli_dict_import_list_remove_and_lookup_json(
    tmp_path, monkeypatch, capsys, zips, dictionary_index
):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    from app.dictionary import index

    monkeypatch.setattr(index, "index_path", lambda: dictionary_index)
    for name in ("terms", "freq", "pitch"):
        assert cli_main(["dict", "import", str(zips[name])]) == 0
    out = capsys.readouterr().out
    assert "imported Test Terms (revision t1): 5 terms" in out
    assert cli_main(["dict", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [d["title"] for d in listed] == ["Test Terms", "Test Freq", "Test Pitch"]
    assert cli_main(["lookup", "食べる", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert entries[0]["frequencies"] == [
        {"dictionary": "Test Freq", "value": 500, "display": "500㋕"}
    ]
    assert entries[0]["pitch"] == [
        {"dictionary": "Test Pitch", "reading": "たべる", "positions": [2]}
    ]
    imported = next(e for e in entries if e["source"] == "yomitan")
    assert imported["dictionary"] == "Test Terms" and imported["deinflection"] == []
    assert cli_main(["lookup", "食べる"]) == 0
    human = capsys.readouterr().out
    assert "たべ＼る [2]" in human and "Test Freq 500㋕" in human and "(Test Terms)" in human
    assert cli_main(["dict", "remove", "Test Terms"]) == 0
    assert cli_main(["dict", "remove", "Test Terms"]) == 1
    assert "no dictionary titled 'Test Terms'" in capsys.readouterr().err
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"nope")
    assert cli_main(["dict", "import", str(broken)]) == 1
    err = capsys.readouterr().err
    assert "broken.zip" in err and "nothing was changed" in err
    assert cli_main(["dict", "list"]) == 0
    listed = capsys.readouterr().out
    assert "Test Terms" not in listed and f"1. {JMDICT}\n2. Test Freq" in listed


# ------------------------------------------------------------------------------------------ Korean


def test_korean_without_a_dictionary_says_how_to_get_one(tmp_path, dictionary_index):
    d = Dictionary(index_file=dictionary_index, store_file=tmp_path / "none.sqlite")
    result = d.lookup("학교에 갔어요", 0)
    assert result.language == "ko" and not result.entries and "Import" in result.message
    d.close()


@pytest.mark.parametrize(
    ("text", "start", "headword", "match"),
    [
        ("학교에 갔어요", 0, "학교", "학교"),
        ("밥을 먹었다", 3, "먹다", "먹었다"),
        ("공부하고 있어요", 0, "공부하다", "공부하고"),
        ("예쁜 꽃", 0, "예쁘다", "예쁜"),
        ("학교에 갔어요", 4, "가다", "갔어요"),
    ],
)
def test_korean_through_lemmas(tmp_path, dictionary_index, zips, text, start, headword, match):
    store_file = tmp_path / "ko.sqlite"
    s = Store(store_file)
    assert s.import_zip(zips["korean"]).language == "ko"
    s.close()
    d = Dictionary(index_file=dictionary_index, store_file=store_file)
    result = d.lookup(text, start)
    assert result.language == "ko" and result.message is None
    first = result.entries[0]
    assert (first.headword, first.match, first.dictionary) == (headword, match, "Test Korean")
    assert "deinflection" not in first.to_json()
    d.close()
