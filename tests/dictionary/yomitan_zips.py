"""Tiny Yomitan-format dictionaries written by the tests (and a generator for big ones)."""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
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


def bomb_zip(path: Path, unpacked: int, gloss: int = 200, bank: str = "term_bank_1.json") -> Path:
    """A real zip bomb: one bank that inflates to about `unpacked` bytes of valid term rows, each
    with a `gloss`-character glossary (200: 1/250 of that on disk; 1,000,000: 1/1000). Written in seconds: one deflate block of repeated rows (compressed
    once, its state reset by a full flush, so its bytes can be repeated) written over and over,
    with the member's sizes and CRC declared honestly in a hand-written zip directory."""
    row = json.dumps(["爆弾", "ばくだん", "", "", 0, ["x" * gloss], 1, ""], ensure_ascii=False)
    chunk = ("," + row).encode() * max(1, (1 << 20) // (len(row) + 1))
    repeats = max(1, unpacked // len(chunk))
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = deflate.compress(b"[" + row.encode()) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    tail = deflate.compress(b"]") + deflate.flush()
    crc = zlib.crc32(b"[" + row.encode())
    for _ in range(repeats):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(b"]", crc)
    size = len(row.encode()) + 1 + repeats * len(chunk) + 1
    index = json.dumps({"title": "Bomb", "format": 3, "revision": "b"}).encode()
    members = [
        ("index.json", zlib.crc32(index), len(index), [_deflate(index)]),
        (bank, crc, size, [head, *[block] * repeats, tail]),
    ]
    with open(path, "wb") as out:
        directory = b""
        for name, crc, size, parts in members:
            offset = out.tell()
            packed = sum(len(p) for p in parts)
            fields = (20, 0, 8, 0, 0x21, crc, packed, size, len(name.encode()), 0)
            out.write(struct.pack("<I5HIIIHH", 0x04034B50, *fields) + name.encode())
            for part in parts:
                out.write(part)
            directory += (
                struct.pack("<IH5HIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0, 0, offset)
                + name.encode()
            )
        start = out.tell()
        out.write(directory)
        n = len(members)
        out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(directory), start, 0))
    return path


def _deflate(data: bytes) -> bytes:
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    return deflate.compress(data) + deflate.flush()


def nested_text(levels: int, leaf: str = "deep") -> str:
    """The JSON text of a structured-content glossary item whose lists and objects nest exactly
    `levels` deep (written as text: json.dumps itself stops at ~1,000 levels)."""
    spans, odd = divmod(levels - 1, 2)
    inner = json.dumps(leaf)
    if odd:
        inner = f"[{inner}]"
    wrap = '{"tag":"span","content":['
    return '{"type":"structured-content","content":' + wrap * spans + inner + "]}" * spans + "}"


def old_store(folder: Path) -> Path:
    """A store holding what an older version (before the import checked numbers and nesting)
    could have stored for 深い: in "Old", a glossary nested 840 levels (~420 elements), one that is
    not JSON, NaN and Infinity frequencies, ipa that is not a list, kanji records that are not
    JSON, beside a good sense; in "Good", a plain entry. Returns the store file."""
    from app.dictionary.yomitan import Store

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "imported.sqlite"
    store = Store(path)
    good = {"term_bank_1.json": [["深い", "ふかい", "", "adj-i", 0, ["deep (Good)"], 1, ""]]}
    store.import_zip(write_zip(folder / "good.zip", {"title": "Good", "format": 3}, good))
    bad = {
        "term_bank_1.json": [
            ["深い", "ふかい", "", "adj-i", 2, ["placeholder: deep"], 1, ""],
            ["深い", "ふかい", "", "adj-i", 1, ["a second sense (Old)"], 1, ""],
            ["深い", "ふかい", "", "adj-i", 0, ["placeholder: not JSON"], 1, ""],
        ],
        "term_meta_bank_1.json": [
            ["深い", "freq", 1],
            ["深い", "freq", 2],
            ["深い", "ipa", {"reading": "ふかい", "transcriptions": [{"ipa": "ɸɯ̥kai"}]}],
        ],
        "kanji_bank_1.json": [["深", "シン", "ふか.い", "", ["deep"], {}]],
        "kanji_meta_bank_1.json": [["深", "freq", 4]],
    }
    store.import_zip(write_zip(folder / "old.zip", {"title": "Old", "format": 3}, bad))
    con = store.con
    for placeholder, stored in (
        ("deep", "[" + nested_text(840, "too deep") + "]"),
        ("not JSON", '[{"type": "text", "text": '),
    ):
        con.execute(
            "UPDATE terms SET glossary = ? WHERE glossary LIKE ?",
            (stored, f"%placeholder: {placeholder}%"),
        )
    con.execute("UPDATE term_meta SET data = 'NaN' WHERE data = '1'")
    con.execute("""UPDATE term_meta SET data = '{"value": Infinity}' WHERE data = '2'""")
    con.execute("""UPDATE term_meta SET data = '{"reading": "ふかい", "transcriptions": 5}'
                   WHERE mode = 'ipa'""")
    con.execute("UPDATE kanji SET meanings = 'not json'")
    con.execute("UPDATE kanji_meta SET data = 'NaN'")
    store.close()
    return path


def dense_zip(path: Path, entries: int = 60, chars: int = 3_900_000) -> Path:
    """Term rows as big as an entry may be, packed with what costs Python the most memory per
    character of JSON (small objects and lists, random numbers so that the zip is no bomb): the
    worst case for the import's memory (docs/security.md)."""
    import random

    rng = random.Random(7)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("index.json", json.dumps({"title": "Dense", "format": 3, "revision": "d"}))
        for bank in range(0, entries, 10):
            rows = []
            for n in range(bank, min(entries, bank + 10)):
                cells = ",".join(f"{{}},[{rng.randrange(10**6)}]" for _ in range(chars // 14))
                rows.append(f'["密{n}","みつ","","",0,[[{cells}]],{n},""]')
            z.writestr(f"term_bank_{bank // 10 + 1}.json", "[" + ",".join(rows) + "]")
    return path
