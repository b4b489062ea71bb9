"""Tiny Yomitan-format dictionaries written by the tests (and a generator for big ones)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

EXAMPLE_GLOSSARY = {
    "type": "structured-content",
    "content": [
        {
            "tag": "ul",
            "data": {"content": "glossary"},
            "content": [
                {"tag": "li", "content": "to eat"},
                {
                    "tag": "li",
                    "content": ["to live on (e.g. ", {"tag": "span", "content": "a salary"}, ")"],
                },
            ],
        },
        {
            "tag": "div",
            "data": {"content": "notes"},
            "content": "Note: also used figuratively.",
        },
        {
            "tag": "div",
            "data": {"content": "example-sentence"},
            "content": [
                {
                    "tag": "ruby",
                    "content": ["朝", {"tag": "rt", "content": "あさ"}],
                },
                "ご飯を食べる。 I eat breakfast.",
            ],
        },
    ],
}


def write_zip(
    path: Path, index: dict | None, banks: dict[str, object], raw: dict[str, bytes] | None = None
) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        if index is not None:
            z.writestr("index.json", json.dumps(index, ensure_ascii=False))
        for name, rows in banks.items():
            z.writestr(name, json.dumps(rows, ensure_ascii=False))
        for name, data in (raw or {}).items():
            z.writestr(name, data)
    return path


def terms_zip(folder: Path) -> Path:
    """Terms with plain and structured glossaries, a word JMdict lacks (ほげる), kanji and tags."""
    return write_zip(
        folder / "terms.zip",
        {"title": "Test Terms", "format": 3, "revision": "t1", "sequenced": True},
        {
            "term_bank_1.json": [
                ["食べる", "たべる", "v1", "v1", 10, [EXAMPLE_GLOSSARY], 1, "common"],
                ["猫", "ねこ", "n", "", 5, ["cat", "feline"], 2, ""],
                ["ほげる", "ほげる", "", "v1", 1, ["to hoge (a test verb)"], 3, ""],
            ],
            "term_bank_2.json": [
                [
                    "日本語",
                    "にほんご",
                    "n",
                    "",
                    3,
                    [{"type": "text", "text": "Japanese (language)"}],
                    4,
                    "",
                ],
                ["𠮷田", "よしだ", "n", "", 1, ["Yoshida (a surname)"], 5, ""],
            ],
            "tag_bank_1.json": [["v1", "partOfSpeech", 0, "ichidan verb", 0]],
            "kanji_bank_1.json": [
                ["猫", "ビョウ", "ねこ", "jouyou", ["cat", "kitty"], {"strokes": "11"}],
                ["𠮷", "キチ", "よし", "", ["lucky (variant of 吉)"], {}],
            ],
            "kanji_meta_bank_1.json": [["猫", "freq", 1500]],
        },
    )


def frequency_zip(folder: Path) -> Path:
    return write_zip(
        folder / "freq.zip",
        {"title": "Test Freq", "format": 3, "revision": "f1", "frequencyMode": "rank-based"},
        {
            "term_meta_bank_1.json": [
                ["食べる", "freq", {"value": 500, "displayValue": "500㋕"}],
                ["猫", "freq", 1200],
                ["箸", "freq", {"reading": "はし", "frequency": 4000}],
                ["日本語", "freq", "321 (novels)"],
            ]
        },
    )


def pitch_zip(folder: Path) -> Path:
    return write_zip(
        folder / "pitch.zip",
        {"title": "Test Pitch", "format": 3, "revision": "p1"},
        {
            "term_meta_bank_1.json": [
                ["食べる", "pitch", {"reading": "たべる", "pitches": [{"position": 2}]}],
                ["箸", "pitch", {"reading": "はし", "pitches": [{"position": 1}]}],
                ["橋", "pitch", {"reading": "はし", "pitches": [{"position": 2}]}],
                [
                    "猫",
                    "pitch",
                    {"reading": "ねこ", "pitches": [{"position": 1}, {"position": "LHH"}]},
                ],
                ["日本語", "pitch", {"reading": "にほんご", "pitches": [{"position": 0}]}],
                [
                    "日本語",
                    "ipa",
                    {"reading": "にほんご", "transcriptions": [{"ipa": "ɲihoŋɡo", "tags": []}]},
                ],
            ]
        },
    )


def korean_zip(folder: Path) -> Path:
    return write_zip(
        folder / "korean.zip",
        {
            "title": "Test Korean",
            "format": 3,
            "revision": "k1",
            "sourceLanguage": "ko",
            "targetLanguage": "en",
        },
        {
            "term_bank_1.json": [
                ["먹다", "", "", "", 0, ["to eat"], 1, ""],
                ["학교", "", "", "", 0, ["school"], 2, ""],
                ["공부하다", "", "", "", 0, ["to study"], 3, ""],
                ["가다", "", "", "", 0, ["to go"], 4, ""],
                ["예쁘다", "", "", "", 0, ["to be pretty"], 5, ""],
            ]
        },
    )


def sample_zips(folder: Path) -> dict[str, Path]:
    """The small dictionaries every test of imported dictionaries uses, written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "terms": terms_zip(folder),
        "freq": frequency_zip(folder),
        "pitch": pitch_zip(folder),
        "korean": korean_zip(folder),
    }


def broken_zips(folder: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, a word the error message must contain)."""
    not_zip = folder / "not-a-zip.zip"
    not_zip.write_bytes(b"this is no zip file")
    good_rows = [["犬", "いぬ", "", "", 0, ["dog"], 1, ""]]
    return {
        "not a zip": (not_zip, "zip"),
        "no index": (
            write_zip(folder / "noindex.zip", None, {"term_bank_1.json": good_rows}),
            "index.json",
        ),
        "no title": (
            write_zip(folder / "notitle.zip", {"format": 3}, {"term_bank_1.json": good_rows}),
            "title",
        ),
        "the built-in's title": (
            write_zip(
                folder / "builtin.zip",
                {"title": "JMdict (built-in)", "format": 3},
                {"term_bank_1.json": good_rows},
            ),
            "built-in",
        ),
        "format 99": (
            write_zip(
                folder / "format.zip", {"title": "F", "format": 99}, {"term_bank_1.json": good_rows}
            ),
            "format",
        ),
        "no banks": (write_zip(folder / "nobanks.zip", {"title": "N", "format": 3}, {}), "bank"),
        "bad JSON in the second bank": (
            write_zip(
                folder / "badjson.zip",
                {"title": "Broken", "format": 3, "revision": "1"},
                {"term_bank_1.json": good_rows},
                {"term_bank_2.json": b'[["x", '},
            ),
            "term_bank_2.json",
        ),
        "a bad row": (
            write_zip(
                folder / "badrow.zip",
                {"title": "Broken", "format": 3, "revision": "1"},
                {"term_bank_1.json": good_rows + [["only", "two"]]},
            ),
            "entry 2",
        ),
        "a bad pitch record": (
            write_zip(
                folder / "badpitch.zip",
                {"title": "Broken", "format": 3, "revision": "1"},
                {"term_meta_bank_1.json": [["箸", "pitch", {"reading": "はし"}]]},
            ),
            "pitch",
        ),
    }


def generated_zip(path: Path, terms: int, per_bank: int = 10000) -> Path:
    """A big generated term dictionary (for measuring import speed): synthetic expressions."""
    kana = (
        "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわ"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(
            "index.json", json.dumps({"title": f"Generated {terms}", "format": 3, "revision": "g"})
        )
        for bank in range(0, terms, per_bank):
            rows = []
            for n in range(bank, min(terms, bank + per_bank)):
                word = "".join(kana[(n // len(kana) ** k) % len(kana)] for k in range(4))
                rows.append(
                    [
                        "語" + word,
                        word,
                        "n",
                        "",
                        n % 100,
                        [
                            {
                                "type": "structured-content",
                                "content": {
                                    "tag": "ul",
                                    "content": [{"tag": "li", "content": f"meaning {n}"}],
                                },
                            }
                        ],
                        n,
                        "",
                    ]
                )
            z.writestr(
                f"term_bank_{bank // per_bank + 1}.json", json.dumps(rows, ensure_ascii=False)
            )
    return path
