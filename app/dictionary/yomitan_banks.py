"""A Yomitan bank's entries as rows of the store (app/dictionary/yomitan.py's SCHEMA): each entry
checked against its kind's layout (the message names the zip, the bank and the entry number),
converted and inserted a batch at a time, inside the import's transaction."""

from __future__ import annotations

import json
import math
import sqlite3
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from app.dictionary.meta_records import META_RECORDS
from app.dictionary.text import is_hangul
from app.dictionary.yomitan_zip import Header, ImportError_, entry_batches
from model.progress import Progress  # (the bank being read, bytes read, bytes in all banks)

# what a term_meta_bank entry may hold: the modes a lookup reads
META_MODES = tuple(META_RECORDS)
_META_LAYOUT = "[expression, " + " | ".join(f'"{mode}"' for mode in META_MODES) + ", data]"
_INT64 = 1 << 63  # score and sequence are SQLite integers: clamped to [-2**63, 2**63 - 1]


def _bad(where: str, n: int, row, expected: str) -> ImportError_:
    text = json.dumps(row, ensure_ascii=False)
    return ImportError_(
        f"{where}, entry {n + 1}: expected {expected}, found {text[:80]}{'…' if len(text) > 80 else ''}"
    )


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def _dumps(value) -> str:
    # one encoder for every row: json.dumps(…, **options) would build a new one per call
    return _ENCODE(value)


def _terms(rows: list, dict_id: int, fmt: int, where: str, first: int) -> list[tuple]:
    out = []
    expected = "[expression, reading, tags, rules, score, glossary, sequence, term tags]"
    for n, row in enumerate(rows, first):
        if not isinstance(row, list) or len(row) < 5 or not isinstance(row[0], str):
            raise _bad(where, n, row, expected)
        if fmt == 1:
            glossary, sequence, term_tags = row[5:], 0, ""
        else:
            if len(row) < 8 or not isinstance(row[5], list):
                raise _bad(where, n, row, expected)
            glossary, sequence, term_tags = row[5], row[6], row[7]
        score = row[4]
        if not isinstance(score, (int, float)) or not isinstance(sequence, (int, float)):
            raise _bad(where, n, row, expected)
        out.append(
            (
                dict_id,
                row[0],
                row[1] if isinstance(row[1], str) and row[1] else row[0],
                row[2] if isinstance(row[2], str) else "",
                row[3] if isinstance(row[3], str) else "",
                _whole(score),
                _dumps(glossary),
                _whole(sequence),
                term_tags if isinstance(term_tags, str) else "",
            )
        )
    return out


def _whole(number: float) -> int:
    """A score or sequence number as a SQLite integer: the fraction dropped, clamped to 64 bits."""
    return min(max(int(number), -_INT64), _INT64 - 1)


def _term_meta(rows: list, dict_id: int, fmt: int, where: str, first: int) -> list[tuple]:
    out = []
    for n, row in enumerate(rows, first):
        if (
            not isinstance(row, list)
            or len(row) < 3
            or not isinstance(row[0], str)
            or row[1] not in META_MODES
        ):
            raise _bad(where, n, row, _META_LAYOUT)
        if row[1] == "pitch" and not (
            isinstance(row[2], dict) and isinstance(row[2].get("pitches"), list)
        ):
            raise _bad(where, n, row, 'pitch data {"reading", "pitches": [...]}')
        out.append((dict_id, row[0], row[1], _dumps(row[2])))
    return out


def _kanji(rows: list, dict_id: int, fmt: int, where: str, first: int) -> list[tuple]:
    out = []
    for n, row in enumerate(rows, first):
        if not isinstance(row, list) or len(row) < 4 or not isinstance(row[0], str):
            raise _bad(where, n, row, "[character, onyomi, kunyomi, tags, meanings, stats]")
        meanings = (
            row[4] if len(row) > 4 and isinstance(row[4], list) else row[4:] if fmt == 1 else []
        )
        stats = row[5] if len(row) > 5 and isinstance(row[5], dict) else {}
        out.append(
            (
                dict_id,
                row[0],
                str(row[1]),
                str(row[2]),
                str(row[3]),
                _dumps(meanings),
                _dumps(stats),
            )
        )
    return out


def _kanji_meta(rows: list, dict_id: int, fmt: int, where: str, first: int) -> list[tuple]:
    out = []
    for n, row in enumerate(rows, first):
        if not isinstance(row, list) or len(row) < 3 or not isinstance(row[0], str):
            raise _bad(where, n, row, '[character, "freq", data]')
        out.append((dict_id, row[0], str(row[1]), _dumps(row[2])))
    return out


def _tags(rows: list, dict_id: int, fmt: int, where: str, first: int) -> list[tuple]:
    out = []
    for n, row in enumerate(rows, first):
        if not isinstance(row, list) or len(row) < 4 or not isinstance(row[0], str):
            raise _bad(where, n, row, "[name, category, order, notes, score]")
        order = row[2] if isinstance(row[2], (int, float)) and math.isfinite(row[2]) else 0
        out.append((dict_id, row[0], str(row[1]), str(row[3]), float(order)))
    return out


class _BankKind(NamedTuple):
    """How the entries of one kind of bank are stored."""

    convert: Callable[[list, int, int, str, int], list[tuple]]  # (rows, dict, format, where, first)
    insert: str
    counted: str | None  # the column of `dictionaries` that counts them


_BANK_KINDS = {
    "term_bank": _BankKind(_terms, "INSERT INTO terms VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", "terms"),
    "term_meta_bank": _BankKind(
        _term_meta, "INSERT INTO term_meta VALUES (?, ?, ?, ?)", "term_meta"
    ),
    "kanji_bank": _BankKind(_kanji, "INSERT INTO kanji VALUES (?, ?, ?, ?, ?, ?, ?)", "kanji"),
    "kanji_meta_bank": _BankKind(
        _kanji_meta, "INSERT INTO kanji_meta VALUES (?, ?, ?, ?)", "kanji_meta"
    ),
    "tag_bank": _BankKind(_tags, "INSERT INTO tags VALUES (?, ?, ?, ?, ?)", None),
}
BANK_KINDS = tuple(_BANK_KINDS)  # the banks an import reads (yomitan_zip.bank_members picks them)
# the columns of `dictionaries` that count what a dictionary holds
COUNTED = ("terms", "term_meta", "kanji", "kanji_meta")


def insert_banks(
    con: sqlite3.Connection,
    archive: zipfile.ZipFile,
    banks: list[zipfile.ZipInfo],
    dict_id: int,
    header: Header,
    report: Progress,
) -> tuple[dict[str, int], int]:
    """Every bank's entries converted and inserted, batch by batch, into the store's tables
    (`con` is inside the import's transaction): (rows per COUNTED column of `dictionaries`, how
    many of the first terms of each term bank are hangul)."""
    counts = dict.fromkeys(COUNTED, 0)
    hangul = 0
    total = sum(i.file_size for i in banks) or 1
    done = 0
    for info in banks:
        bank = Path(info.filename).name
        kind = _BANK_KINDS[bank.rsplit("_", 1)[0]]
        where = f"{header.file}: {bank}"
        report(bank, done, total)
        for first, rows, read in entry_batches(archive, info, where):
            converted = kind.convert(rows, dict_id, header.format, where, first)
            rows.clear()  # freed before the next batch is parsed
            con.executemany(kind.insert, converted)
            if kind.counted:
                counts[kind.counted] += len(converted)
            if kind.counted == "terms" and first == 0:
                hangul += sum(1 for r in converted[:200] if r[1] and is_hangul(r[1][0]))
            report(bank, done + read, total)
        done += info.file_size
    return counts, hangul
