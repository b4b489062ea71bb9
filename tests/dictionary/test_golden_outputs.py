"""Golden outputs of the dictionary, recorded from the code before the #26 renovation: the store an
import writes, the lookups (`--json`, the terminal text, the popup's HTML) of Japanese, Chinese,
Korean and imported words, and structured content through every tag it handles. A refactoring
must keep them byte-identical.

After an intended change of output: `HAYAI_WRITE_GOLDEN=1 python -m pytest THIS_FILE`, then read
the diff of tests/dictionary/golden/ before committing it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import yomitan_zips  # noqa: E402
from test_yomitan import _tagged_zip  # noqa: E402

from app.dictionary import structured  # noqa: E402
from app.dictionary.cli import format_entry  # noqa: E402
from app.dictionary.lookup import Dictionary  # noqa: E402
from app.dictionary.yomitan import Store  # noqa: E402

GOLDEN = Path(__file__).parent / "golden"
TABLES = ("dictionaries", "terms", "term_meta", "kanji", "kanji_meta", "tags")

# (text, start, lang): imported words with frequencies, pitch, IPA, tags and structured glossaries,
# deinflected forms, JMdict-only words with kanji panels, names, Chinese and Korean
LOOKUPS = [
    ("食べた", 0, "auto"),
    ("食べさせられたくなかった", 0, "auto"),
    ("猫が好き", 0, "auto"),
    ("日本語を話す", 0, "auto"),
    ("ほげた", 0, "auto"),
    ("𠮷田さん", 0, "auto"),
    ("箸と橋", 0, "auto"),
    ("田中さんが来た", 0, "auto"),
    ("わかんねえ", 0, "auto"),
    ("漢字の読み方", 0, "auto"),
    ("學習", 0, "auto"),
    ("这个东西", 0, "auto"),
    ("我们", 0, "zh"),
    ("学校", 0, "zh"),
    ("学校", 0, "ja"),
    ("학교에 갔어요", 0, "auto"),
    ("밥을 먹었다", 3, "auto"),
    ("공부하고 있어요", 0, "auto"),
    ("예쁜 꽃", 0, "auto"),
    ("학교에 갔어요", 4, "ko"),
    ("xyz", 0, "auto"),
    ("あ", 0, "auto"),
]

# Structured content through every branch of the renderers
STRUCTURED = {
    "example": yomitan_zips.EXAMPLE_GLOSSARY,
    "plain": "a line\nand <b>another</b> & more",
    "text item": {"type": "text", "text": "to eat <quickly>"},
    "image item": {"type": "image", "path": "img/cat.png"},
    "number": 42,
    "float and bool": [1.5, True, None, {"tag": "span", "content": [3, "x"]}],
    "every tag": {
        "type": "structured-content",
        "content": [
            {"tag": "p", "content": ["first", {"tag": "br"}, "second"]},
            {"tag": "details", "content": [{"tag": "summary", "content": "more"}, "hidden"]},
            {"tag": "ol", "content": [{"tag": "li", "content": "one"}, {"tag": "li"}]},
            {
                "tag": "table",
                "content": [
                    {
                        "tag": "thead",
                        "content": {"tag": "tr", "content": [{"tag": "th", "content": "h"}]},
                    },
                    {
                        "tag": "tbody",
                        "content": [
                            {
                                "tag": "tr",
                                "content": [
                                    {"tag": "td", "content": "a"},
                                    {"tag": "td", "content": "b"},
                                ],
                            }
                        ],
                    },
                    {"tag": "tfoot", "content": "foot"},
                ],
            },
            {"tag": "a", "href": "https://example.com/x", "content": "a link"},
            {"tag": "img", "path": "x.png", "title": "a title"},
            {"tag": "img", "path": "x.png", "alt": "alt <text>"},
            {"tag": "img", "path": "x.png"},
            {
                "tag": "ruby",
                "content": ["漢", {"tag": "rp", "content": "("}, {"tag": "rt", "content": "かん"}],
            },
            {"tag": "ruby", "content": "字"},
            {
                "tag": "ruby",
                "content": [
                    "読",
                    {
                        "tag": "rt",
                        "content": [
                            {"tag": "ruby", "content": ["よ", {"tag": "rt", "content": "yo"}]}
                        ],
                    },
                ],
            },
            {"tag": "rt", "content": "stray"},
            {"tag": "rp", "content": "stray"},
            {"tag": "span", "data": {"content": "tag"}, "content": "n"},
            {"tag": "span", "data": {"class": "info-gloss"}, "content": "info"},
            {"tag": "div", "data": {"xref": "1"}, "content": "see also"},
            {"tag": "div", "data": {"content": "example-sentence-a"}, "content": "ex"},
            {"tag": "span", "data": "not a dict", "content": "plain span"},
            {"tag": "unknown", "content": "kept"},
            {"content": "no tag"},
            {"tag": 7, "content": "numeric tag"},
            {
                "tag": "div",
                "style": {"fontWeight": "bold"},
                "content": "  spaced   out  \n\n  text ",
            },
        ],
    },
    "deep": json.loads(yomitan_zips.nested_text(140)),
    "deep ruby": {
        "tag": "ruby",
        "content": ["x", {"tag": "rt", "content": json.loads(yomitan_zips.nested_text(130))}],
    },
}


class _Anki:
    def __init__(self, state: str, message: str = ""):
        self.state, self.message = state, message


ANKI_STATES = ["new", "checking", "adding", "added", "in_deck", "error", "unknown"]


@pytest.fixture(scope="module")
def dictionary(dictionary_index, tmp_path_factory):
    folder = tmp_path_factory.mktemp("golden")
    zips = yomitan_zips.sample_zips(folder / "zips")
    store_file = folder / "imported.sqlite"
    store = Store(store_file)
    for name in ("terms", "freq", "pitch", "korean"):
        store.import_zip(zips[name])
    store.import_zip(_tagged_zip(folder))
    store.close()
    d = Dictionary(index_file=dictionary_index, store_file=store_file)
    yield d
    d.close()


def _check(name: str, value) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(value, ensure_ascii=False, indent=1) + "\n"
    if os.environ.get("HAYAI_WRITE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    recorded = json.loads(path.read_text(encoding="utf-8"))
    assert json.loads(text) == recorded


def test_the_store_an_import_writes(dictionary):
    con = dictionary.store().con
    dump = {}
    for table in TABLES:
        columns = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
        rows = con.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        # the import's duration and the zip's temporary path differ on every run
        dump[table] = [
            [None if c in ("file", "imported_s") else v for c, v in zip(columns, r, strict=True)]
            for r in rows
        ]
    _check("store", dump)


def test_lookups_as_json_text_and_popup_html(dictionary):
    from app.ui.entry_html import result_html

    out = {}
    for text, start, lang in LOOKUPS:
        result = dictionary.lookup(text, start, lang)
        states = [
            _Anki(ANKI_STATES[i % len(ANKI_STATES)], f"error {i}")
            for i in range(len(result.entries))
        ]
        out[f"{text}@{start}:{lang}"] = {
            "language": result.language,
            "match_len": result.match_len,
            "message": result.message,
            "json": result.to_json(),
            "text": [format_entry(e, i) for i, e in enumerate(result.entries, 1)],
            "html": result_html(result, "Noto Sans CJK JP"),
            "html with anki": result_html(result, "Noto Sans CJK JP", states),
        }
    _check("lookups", out)


def test_structured_content_as_text_and_html():
    out = {
        name: {
            "text": structured.to_text(node),
            "html": structured.to_html(node),
            "muted": structured.to_html(node, "#123456"),
        }
        for name, node in STRUCTURED.items()
    }
    _check("structured", out)
