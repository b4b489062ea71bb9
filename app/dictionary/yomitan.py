"""Yomitan-format dictionaries (the zip files Yomitan users own) in our own SQLite store.

A dictionary zip holds `index.json` (`title`, `revision`, `format` or `version` 1-3) and banks:
`term_bank_N.json` (rows `[expression, reading, definition tags, rules, score, glossary, sequence,
term tags]`; format 1 puts the glossary items at the end of the row instead), `term_meta_bank_N.json`
(`[expression, "freq" | "pitch" | "ipa", data]`), `kanji_bank_N.json` (`[character, onyomi, kunyomi,
tags, meanings, stats]`), `kanji_meta_bank_N.json` (`[character, "freq", data]`) and `tag_bank_N.json`.

Everything goes into one file, `imported.sqlite` (user data dir, or HAYAI_CONFIG_DIR/dictionary),
separate from the JMdict index (a cache that is rebuilt at will). An import is one transaction:
the zip is checked and written inside it and committed at the end, so a broken file, an error or
an interrupted process leaves the store exactly as it was (SQLite rolls an unfinished transaction
back). Importing a title that is already there replaces it in the same transaction.

A zip is checked before anything in it is read: each bank's declared size, all of them together
and each one's compression ratio against the limits below (zip bombs). zipfile never inflates a
member past its declared size, and one that declares less than it holds fails its CRC check. The
banks are then parsed an entry at a time (json's own scanner on a megabyte of text at a time), so
memory holds one chunk and one batch of rows whatever a bank's size. Numbers must be finite and
fit a double; an entry nested deeper than json can follow (~1,000 levels) is refused.

    store = Store()                     # opens (creates) the file
    info = store.import_zip(path, progress=lambda what, done, total: ...)  # model/progress.py
    store.dictionaries()                # [DictionaryInfo], in the user's order
    store.set_enabled(title, False); store.move(title, -1); store.remove(title)
"""

from __future__ import annotations

import codecs
import json
import math
import re
import sqlite3
import threading
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from app.dictionary.text import is_hangul, to_hiragana
from model.progress import Progress  # (the bank being read, bytes read, bytes in all banks)

FILE_NAME = "imported.sqlite"
JMDICT = "JMdict (built-in)"  # the built-in dictionary's place in the user's order of dictionaries
SCHEMA = """
CREATE TABLE IF NOT EXISTS dictionaries (
    id INTEGER PRIMARY KEY, title TEXT UNIQUE NOT NULL, revision TEXT, format INTEGER,
    position INTEGER, enabled INTEGER DEFAULT 1, terms INTEGER, term_meta INTEGER, kanji INTEGER,
    kanji_meta INTEGER, language TEXT, file TEXT, imported_s REAL, meta TEXT);
CREATE TABLE IF NOT EXISTS terms (
    dict INTEGER, expression TEXT, reading TEXT, def_tags TEXT, rules TEXT, score INTEGER,
    glossary TEXT, sequence INTEGER, term_tags TEXT);
CREATE TABLE IF NOT EXISTS builtin (name TEXT PRIMARY KEY, position INTEGER);
CREATE TABLE IF NOT EXISTS term_meta (dict INTEGER, expression TEXT, mode TEXT, data TEXT);
CREATE TABLE IF NOT EXISTS kanji (
    dict INTEGER, char TEXT, onyomi TEXT, kunyomi TEXT, tags TEXT, meanings TEXT, stats TEXT);
CREATE TABLE IF NOT EXISTS kanji_meta (dict INTEGER, char TEXT, mode TEXT, data TEXT);
CREATE TABLE IF NOT EXISTS tags (
    dict INTEGER, name TEXT, category TEXT, notes TEXT, sort_order REAL DEFAULT 0);
CREATE INDEX IF NOT EXISTS terms_expression ON terms(expression);
CREATE INDEX IF NOT EXISTS terms_reading ON terms(reading);
CREATE INDEX IF NOT EXISTS term_meta_expression ON term_meta(expression);
CREATE INDEX IF NOT EXISTS kanji_char ON kanji(char);
CREATE INDEX IF NOT EXISTS kanji_meta_char ON kanji_meta(char);
"""
_BANK = re.compile(r"^(term_bank|term_meta_bank|kanji_bank|kanji_meta_bank|tag_bank)_\d+\.json$")
META_MODES = ("freq", "pitch", "ipa")

# What a dictionary zip may unpack to. Real dictionaries: banks of 1-30 MB, a few hundred MB in
# all, packed 5-20 times; a zip bomb packs ~1,000 times (a 2 MB file declaring a 2 GB bank).
MAX_DIRECTORY_BYTES = 16_000_000  # the zip's list of files (~300,000 names; ~10x that in memory)
MAX_INDEX_BYTES = 1_000_000  # index.json
MAX_BANK_BYTES = 250_000_000  # one bank
MAX_TOTAL_BYTES = 2_000_000_000  # all the banks
MAX_RATIO = 100  # unpacked / packed, for a bank of more than RATIO_FROM bytes
RATIO_FROM = 1_000_000
MAX_ENTRY_CHARS = 4_000_000  # one entry (a term row with its glossary)
_CHUNK_BYTES = 1 << 20  # read from a bank at a time (more to finish a long entry)
_BATCH_ROWS, _BATCH_CHARS = 2000, 1_000_000  # entries converted and inserted at a time
_INT64 = 1 << 63  # score and sequence are SQLite integers: clamped to [-2**63, 2**63 - 1]


class ImportError_(ValueError):
    """A dictionary file cannot be imported; the message names the file and the problem."""


@dataclass
class DictionaryInfo:
    title: str
    revision: str
    format: int
    position: int
    enabled: bool
    terms: int
    term_meta: int
    kanji: int
    kanji_meta: int
    language: str  # "ja", "ko", … (from index.json or the terms), "" when unknown
    file: str
    imported_s: float  # seconds the import took

    @property
    def kinds(self) -> list[str]:
        """What the dictionary adds: terms, frequencies/pitch, kanji."""
        out = []
        if self.terms:
            out.append(f"{self.terms:,} terms")
        if self.term_meta:
            out.append(f"{self.term_meta:,} frequency/pitch records")
        if self.kanji:
            out.append(f"{self.kanji:,} kanji")
        if self.kanji_meta:
            out.append(f"{self.kanji_meta:,} kanji frequencies")
        return out

    def to_json(self) -> dict:
        return {
            "title": self.title,
            "revision": self.revision,
            "format": self.format,
            "enabled": self.enabled,
            "position": self.position,
            "terms": self.terms,
            "term_meta": self.term_meta,
            "kanji": self.kanji,
            "kanji_meta": self.kanji_meta,
            "language": self.language,
        }


def store_path() -> Path:
    """imported.sqlite: under HAYAI_CONFIG_DIR/dictionary when set, else the user data dir (that
    folder is created private, 0700, like all per-user state: app/paths.py)."""
    from app.paths import user_dir

    return user_dir("data") / "dictionary" / FILE_NAME


class Store:
    """The imported dictionaries. Thread-safe: one connection behind a lock."""

    def __init__(self, path: Path | None = None):
        from app.private_files import private_dir, private_file

        self.path = path or store_path()
        private_dir(self.path.parent)  # titles and paths of the user's dictionaries: 0700/0600
        private_file(self.path)  # SQLite gives its WAL and journal the database file's mode
        self._lock = threading.RLock()
        self.con = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.con.execute("PRAGMA journal_mode = WAL")  # readers keep reading during an import
        # under WAL, NORMAL is still atomic (a crash loses at most the last commit, never half)
        self.con.execute("PRAGMA synchronous = NORMAL")
        self.con.executescript(SCHEMA)
        if "sort_order" not in {r[1] for r in self.con.execute("PRAGMA table_info(tags)")}:
            # a store from before tag banks were expanded: their order counts as 0 until re-import
            self.con.execute("ALTER TABLE tags ADD COLUMN sort_order REAL DEFAULT 0")
        self.revision = 0  # bumped on every change, so that caches know to refresh

    def close(self) -> None:
        with self._lock:
            self.con.close()

    def version(self) -> tuple[int, int]:
        """Changes through this object and through any other connection (Settings, `hayai dict`)."""
        with self._lock:
            return self.revision, self.con.execute("PRAGMA data_version").fetchone()[0]

    # --- listing and settings ---------------------------------------------------------------

    def dictionaries(self, enabled_only: bool = False) -> list[DictionaryInfo]:
        with self._lock:
            rows = self.con.execute(
                "SELECT title, revision, format, position, enabled, terms, term_meta, kanji, "
                "kanji_meta, language, file, imported_s FROM dictionaries ORDER BY position, id"
            ).fetchall()
        out = [
            DictionaryInfo(
                r[0],
                r[1] or "",
                r[2] or 3,
                r[3],
                bool(r[4]),
                r[5],
                r[6],
                r[7],
                r[8],
                r[9] or "",
                r[10] or "",
                r[11] or 0,
            )
            for r in rows
        ]
        return [d for d in out if d.enabled] if enabled_only else out

    def ids(self) -> dict[str, int]:
        """title -> row id of the enabled dictionaries, in order."""
        with self._lock:
            return dict(
                self.con.execute(
                    "SELECT title, id FROM dictionaries WHERE enabled ORDER BY position, id"
                ).fetchall()
            )

    def _find(self, title: str) -> int:
        row = self.con.execute("SELECT id FROM dictionaries WHERE title = ?", (title,)).fetchone()
        if row is None:
            known = ", ".join(d.title for d in self.dictionaries()) or "none are imported"
            raise KeyError(f"no dictionary titled {title!r} ({known})")
        return row[0]

    def set_enabled(self, title: str, enabled: bool) -> None:
        with self._lock:
            dict_id = self._find(title)
            self.con.execute(
                "UPDATE dictionaries SET enabled = ? WHERE id = ?", (int(enabled), dict_id)
            )
            self.revision += 1

    def jmdict_position(self) -> int:
        """JMdict's place among the dictionaries' positions: it ranks before those at or after it
        (first until the user moves it)."""
        with self._lock:
            row = self.con.execute(
                "SELECT position FROM builtin WHERE name = ?", (JMDICT,)
            ).fetchone()
        return row[0] if row else 0

    def order(self) -> list[str]:
        """Every dictionary's title in lookup order, JMDICT at its place among them."""
        titles = [d.title for d in self.dictionaries()]
        jmdict = self.jmdict_position()
        before = sum(1 for d in self.dictionaries() if d.position < jmdict)
        return titles[:before] + [JMDICT] + titles[before:]

    def set_order(self, titles: list[str]) -> None:
        """Put the dictionaries (and JMDICT) in this order (titles not named keep their place
        after them)."""
        with self._lock:
            current = self.order()
            order = [t for t in titles if t in current] + [t for t in current if t not in titles]
            self.con.execute("BEGIN")
            for position, title in enumerate(order):
                if title == JMDICT:
                    self.con.execute(
                        "INSERT OR REPLACE INTO builtin (name, position) VALUES (?, ?)",
                        (JMDICT, position),
                    )
                else:
                    self.con.execute(
                        "UPDATE dictionaries SET position = ? WHERE title = ?", (position, title)
                    )
            self.con.execute("COMMIT")
            self.revision += 1

    def move(self, title: str, delta: int) -> None:
        titles = self.order()
        i = titles.index(title) if title in titles else -1
        if i < 0:
            self._find(title)  # raises the clear KeyError
        j = max(0, min(len(titles) - 1, i + delta))
        titles.insert(j, titles.pop(i))
        self.set_order(titles)

    def remove(self, title: str) -> None:
        with self._lock:
            dict_id = self._find(title)
            self.con.execute("BEGIN")
            try:
                for table in ("terms", "term_meta", "kanji", "kanji_meta", "tags"):
                    self.con.execute(f"DELETE FROM {table} WHERE dict = ?", (dict_id,))
                self.con.execute("DELETE FROM dictionaries WHERE id = ?", (dict_id,))
                self.con.execute("COMMIT")
            except BaseException:
                self.con.execute("ROLLBACK")
                raise
            self.revision += 1

    # --- import ------------------------------------------------------------------------------

    def import_zip(self, path: str | Path, progress: Progress | None = None) -> DictionaryInfo:
        """Import (or replace) one Yomitan dictionary, all or nothing. Raises ImportError_."""
        path = Path(path)
        report = progress or (lambda what, done, total: None)
        started = time.perf_counter()
        with _open_zip(path) as archive:
            header = _read_header(archive, path.name)
            banks = _banks(archive, path.name)
            with self._lock:
                self.con.execute("BEGIN IMMEDIATE")
                try:
                    dict_id = self._replace(header, path)
                    counts, hangul = self._import_banks(archive, banks, dict_id, header, report)
                    language = str(header.index.get("sourceLanguage") or "")
                    if not language and counts["terms"]:
                        language = "ko" if hangul else "ja"
                    self.con.execute(
                        "UPDATE dictionaries SET terms = ?, term_meta = ?, kanji = ?, kanji_meta = ?, "
                        "language = ?, imported_s = ? WHERE id = ?",
                        (
                            *(counts[column] for column in _COUNTED),
                            language,
                            round(time.perf_counter() - started, 2),
                            dict_id,
                        ),
                    )
                    self.con.execute("COMMIT")
                except BaseException:
                    self.con.execute("ROLLBACK")
                    raise
                self.revision += 1
        report("done", 1.0, 1.0)
        return next(d for d in self.dictionaries() if d.title == header.title)

    def _replace(self, header: _Header, path: Path) -> int:
        """A new row for the dictionary (inside the import's transaction), in the place and with
        the enabled state of the one of that title it replaces; its id."""
        con = self.con
        old = con.execute(
            "SELECT id, position, enabled FROM dictionaries WHERE title = ?", (header.title,)
        ).fetchone()
        if old:
            for table in ("terms", "term_meta", "kanji", "kanji_meta", "tags"):
                con.execute(f"DELETE FROM {table} WHERE dict = ?", (old[0],))
            con.execute("DELETE FROM dictionaries WHERE id = ?", (old[0],))
        position = (
            old[1]
            if old
            else con.execute("SELECT coalesce(max(position) + 1, 0) FROM dictionaries").fetchone()[
                0
            ]
        )
        cur = con.execute(
            "INSERT INTO dictionaries (title, revision, format, position, enabled, file, meta) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                header.title,
                str(header.index.get("revision", "")),
                header.format,
                position,
                old[2] if old else 1,
                str(path),
                json.dumps(header.index, ensure_ascii=False),
            ),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def _import_banks(
        self,
        archive: zipfile.ZipFile,
        banks: list[zipfile.ZipInfo],
        dict_id: int,
        header: _Header,
        report: Progress,
    ) -> tuple[dict[str, int], int]:
        """Every bank's entries converted and inserted, batch by batch: (rows per counted column
        of `dictionaries`, how many of the first terms of each term bank are hangul)."""
        counts = dict.fromkeys(_COUNTED, 0)
        hangul = 0
        total = sum(i.file_size for i in banks) or 1
        done = 0
        for info in banks:
            bank = Path(info.filename).name
            kind = _BANK_KINDS[bank.rsplit("_", 1)[0]]
            where = f"{header.file}: {bank}"
            report(bank, done, total)
            for first, rows, read in _batches(archive, info, where):
                converted = kind.convert(rows, dict_id, header.format, where, first)
                rows.clear()  # freed before the next batch is parsed
                self.con.executemany(kind.insert, converted)
                if kind.counted:
                    counts[kind.counted] += len(converted)
                if kind.counted == "terms" and first == 0:
                    hangul += sum(1 for r in converted[:200] if r[1] and is_hangul(r[1][0]))
                report(bank, done + read, total)
            done += info.file_size
        return counts, hangul

    # --- queries for lookups -----------------------------------------------------------------

    def terms(self, keys: list[str], dict_ids: list[int]) -> list[tuple]:
        """(dict, expression, reading, def_tags, rules, score, glossary, sequence, term_tags) rows
        whose expression or reading is one of `keys`, from the given dictionaries."""
        if not keys or not dict_ids:
            return []
        k = ",".join("?" * len(keys))
        d = ",".join("?" * len(dict_ids))
        with self._lock:
            return self.con.execute(
                f"SELECT dict, expression, reading, def_tags, rules, score, glossary, sequence, "
                f"term_tags FROM terms WHERE (expression IN ({k}) OR reading IN ({k})) "
                f"AND dict IN ({d})",
                [*keys, *keys, *dict_ids],
            ).fetchall()

    def term_meta(self, expressions: list[str], dict_ids: list[int]) -> list[tuple]:
        """(dict, expression, mode, data) rows for these expressions."""
        if not expressions or not dict_ids:
            return []
        k = ",".join("?" * len(expressions))
        d = ",".join("?" * len(dict_ids))
        with self._lock:
            return self.con.execute(
                f"SELECT dict, expression, mode, data FROM term_meta WHERE expression IN ({k}) "
                f"AND dict IN ({d})",
                [*expressions, *dict_ids],
            ).fetchall()

    def kanji(self, chars: list[str], dict_ids: list[int]) -> tuple[list[tuple], list[tuple]]:
        """(dict, char, onyomi, kunyomi, meanings) rows and (dict, char, mode, data) meta rows."""
        if not chars or not dict_ids:
            return [], []
        k = ",".join("?" * len(chars))
        d = ",".join("?" * len(dict_ids))
        with self._lock:
            rows = self.con.execute(
                f"SELECT dict, char, onyomi, kunyomi, meanings FROM kanji WHERE char IN ({k}) "
                f"AND dict IN ({d})",
                [*chars, *dict_ids],
            ).fetchall()
            meta = self.con.execute(
                f"SELECT dict, char, mode, data FROM kanji_meta WHERE char IN ({k}) AND dict IN ({d})",
                [*chars, *dict_ids],
            ).fetchall()
        return rows, meta

    def tags(self, dict_ids: list[int]) -> list[tuple]:
        """(dict, name, category, order, notes): the tag banks of the given dictionaries."""
        if not dict_ids:
            return []
        d = ",".join("?" * len(dict_ids))
        with self._lock:
            return self.con.execute(
                f"SELECT dict, name, category, sort_order, notes FROM tags WHERE dict IN ({d})",
                dict_ids,
            ).fetchall()

    def has_language(self, language: str) -> bool:
        with self._lock:
            return (
                self.con.execute(
                    "SELECT 1 FROM dictionaries WHERE enabled AND language = ? AND terms > 0",
                    (language,),
                ).fetchone()
                is not None
            )


# ------------------------------------------------------------------------------------ reading banks


@dataclass(frozen=True)
class _Header:
    """What index.json says of a dictionary (checked) and the zip's file name."""

    file: str
    title: str  # stripped
    format: int
    index: dict


def _open_zip(path: Path) -> zipfile.ZipFile:
    name = path.name
    if path.exists() and not path.is_file():  # a FIFO blocks the open; /dev/zero never ends
        raise ImportError_(f"{name}: not a Yomitan dictionary (not a regular file)")
    try:
        with open(path, "rb") as raw:
            _check_directory(raw, name)
        return zipfile.ZipFile(path)
    except FileNotFoundError:
        raise ImportError_(f"{path}: no such file") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise ImportError_(
            f"{name}: not a Yomitan dictionary (not a readable zip file: {exc})"
        ) from None


def _read_header(archive: zipfile.ZipFile, name: str) -> _Header:
    index = _read_index(archive, name)
    if not isinstance(index, dict):
        raise ImportError_(f"{name}: index.json is not a JSON object")
    title = index.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ImportError_(f"{name}: index.json has no title")
    if title.strip() == JMDICT:  # that name is the built-in's place in the order
        raise ImportError_(f"{name}: the title “{JMDICT}” is the built-in dictionary's")
    fmt = index.get("format", index.get("version"))
    if fmt not in (1, 2, 3):
        raise ImportError_(
            f"{name}: index.json format {fmt!r} is not supported (Yomitan formats 1-3)"
        )
    return _Header(name, title.strip(), fmt, index)


def _banks(archive: zipfile.ZipFile, name: str) -> list[zipfile.ZipInfo]:
    """The zip's banks, by kind and number, once their declared sizes are checked."""
    banks = sorted(
        (i for i in archive.infolist() if _BANK.match(Path(i.filename).name)),
        key=lambda i: (i.filename.split("_bank_")[0], _bank_number(i.filename)),
    )
    if not banks:
        raise ImportError_(f"{name}: no term, kanji or meta banks in the zip")
    _check_sizes(banks, name)
    return banks


def _bank_number(filename: str) -> int:
    digits = re.findall(r"\d+", Path(filename).name)
    return int(digits[-1]) if digits else 0


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{max(n, 1) / 1e3:.0f} kB"


# the end record zipfile itself reads (zip64 included): private, so not in zipfile's type stubs
_END_RECORD, _ECD_SIZE = vars(zipfile)["_EndRecData"], vars(zipfile)["_ECD_SIZE"]


def _check_directory(raw, name: str) -> None:
    """Refuse a zip whose directory alone would fill memory (zipfile keeps an object per file)."""
    end = _END_RECORD(raw)
    if end is not None and end[_ECD_SIZE] > MAX_DIRECTORY_BYTES:
        raise ImportError_(
            f"{name}: its list of files takes {_size(end[_ECD_SIZE])}, more than the "
            f"{_size(MAX_DIRECTORY_BYTES)} a dictionary may have"
        )


def _check_sizes(banks: list[zipfile.ZipInfo], name: str) -> None:
    """Refuse a zip bomb from the sizes its directory declares, before anything is inflated."""
    for info in banks:
        bank = Path(info.filename).name
        if info.file_size > MAX_BANK_BYTES:
            raise ImportError_(
                f"{name}: {bank} would unpack to {_size(info.file_size)}, more than the "
                f"{_size(MAX_BANK_BYTES)} a dictionary bank may have"
            )
        if info.file_size > RATIO_FROM and info.file_size > MAX_RATIO * info.compress_size:
            raise ImportError_(
                f"{name}: {bank} would unpack to {info.file_size / max(info.compress_size, 1):,.0f} "
                f"times its packed size ({_size(info.compress_size)} to {_size(info.file_size)}), "
                f"as a zip bomb does (dictionaries pack 5 to 20 times, at most {MAX_RATIO} here)"
            )
    total = sum(i.file_size for i in banks)
    if total > MAX_TOTAL_BYTES:
        raise ImportError_(
            f"{name}: its banks would unpack to {_size(total)} in all, more than the "
            f"{_size(MAX_TOTAL_BYTES)} a dictionary may have"
        )


class _BadNumber(ValueError):
    """A number that is not JSON (NaN, Infinity) or does not fit a double."""


def _constant(text: str):
    raise _BadNumber(f"{text} is not a number (JSON has no {text})")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadNumber(f"the number {text[:40]} is too large")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > 308:  # beyond a double: frequency values become floats
        raise _BadNumber(f"a number of {len(text.lstrip('-')):,} digits is too large")
    return int(text)


# the one decoder of dictionary JSON: Python's json accepts NaN and Infinity, which JSON has not
_DECODER = json.JSONDecoder(parse_float=_float, parse_int=_int, parse_constant=_constant)
_CONTENT = re.compile(r"[^ \t\n\r]")  # what JSON's white space is not


def _read_index(archive: zipfile.ZipFile, name: str) -> object:
    try:
        info = archive.getinfo("index.json")
    except KeyError:
        raise ImportError_(f"{name}: index.json is missing (not a Yomitan dictionary)") from None
    if info.file_size > MAX_INDEX_BYTES:
        raise ImportError_(
            f"{name}: index.json would unpack to {_size(info.file_size)}, more than the "
            f"{_size(MAX_INDEX_BYTES)} it may have"
        )
    try:
        raw = archive.read(info)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
        raise ImportError_(f"{name}: index.json cannot be read ({exc})") from None
    try:
        return _DECODER.decode(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ImportError_(f"{name}: index.json is not valid JSON ({exc})") from None


class _Entries:
    """The entries of one bank (a JSON list) from its zip member, in batches: the text comes a
    megabyte at a time and each entry is decoded by json's own scanner, so memory holds a chunk
    and a batch, never the whole bank. Entries that lie whole in the text read so far, one comma
    (and a space) apart, take the fast path; anything else (white space, an entry cut by the end
    of the text, an error) takes `_entry`."""

    def __init__(self, stream, where: str):
        self.stream, self.where = stream, where
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.text, self.pos, self.eof, self.read = "", 0, False, 0

    def _fill(self, size: int = _CHUNK_BYTES) -> bool:
        """Append `size` more bytes to the text not yet parsed; False at the end of the member."""
        if self.eof:
            return False
        data = self.stream.read(size)
        self.read += len(data)
        self.eof = not data
        try:
            more = self.decoder.decode(data, final=self.eof)
        except UnicodeDecodeError as exc:
            raise ImportError_(f"{self.where} is not UTF-8 text ({exc.reason})") from None
        self.text = self.text[self.pos :] + more
        self.pos = 0
        return True

    def _peek(self) -> str:
        """The next character that is not white space ("" at the end), not consumed."""
        while True:
            content = _CONTENT.search(self.text, self.pos)
            self.pos = content.start() if content else len(self.text)
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._fill():
                return ""

    def batches(self):
        """The entries in lists of _BATCH_ROWS (fewer when they are long: _BATCH_CHARS)."""
        if self._peek() != "[":
            raise ImportError_(f"{self.where} is not a JSON list")
        self.pos += 1
        batch, chars, n = [], 0, 0
        scan = _DECODER.scan_once
        more = self._peek() != "]"
        if not more:
            self.pos += 1  # an empty list
        while more:
            text, start = self.text, self.pos
            try:
                value, end = scan(text, start)
            except (StopIteration, ValueError, RecursionError):
                end = len(text)
            if end >= len(text):  # not the plain case: let the careful path tell
                value, start, end = self._entry(n)
                text = self.text
            if end - start > MAX_ENTRY_CHARS:
                raise ImportError_(
                    f"{self.where}, entry {n + 1} is longer than {MAX_ENTRY_CHARS:,} characters"
                )
            batch.append(value)
            chars += end - start
            n += 1
            if len(batch) >= _BATCH_ROWS or chars >= _BATCH_CHARS:
                yield batch
                batch, chars = [], 0
            separator = text[end : end + 2]
            if separator == ", ":  # json.dumps' own
                self.pos = end + 2
            elif separator[:1] == ",":
                self.pos = end + 1
            else:
                more = self._next_or_end(end, n)
        if batch:
            yield batch
        if self._peek():
            raise ImportError_(f"{self.where} is not valid JSON (more text after its list)")

    def _next_or_end(self, end: int, n: int) -> bool:
        """After entry `n` (ending at `end` in self.text) and the white space after it: True at a
        comma (consumed), False at the list's end."""
        self.pos = end
        separator = self._peek()
        self.pos += 1
        if separator == "]":
            return False
        if separator != ",":
            problem = (
                f"entry {n} is not followed by , or ]" if separator else "it ends inside its list"
            )
            raise ImportError_(f"{self.where} is not valid JSON ({problem})")
        return True

    def _entry(self, n: int) -> tuple[object, int, int]:
        """Entry `n` the careful way: (entry, its start and end in self.text)."""
        where = f"{self.where}, entry {n + 1}"
        self._peek()
        while True:
            end = None
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except _BadNumber as exc:
                raise ImportError_(f"{where}: {exc}") from None
            except RecursionError:  # json's reader follows ~1,000 levels
                raise ImportError_(f"{where} is nested too deeply (about 1,000 levels)") from None
            except json.JSONDecodeError as exc:
                # an entry cut by the end of the text fails at the cut or in its last string
                cut = exc.pos >= len(self.text) - 64 or exc.msg.startswith("Unterminated string")
                if not cut or self.eof:
                    raise ImportError_(
                        f"{self.where} is not valid JSON (entry {n + 1}: {exc.msg})"
                    ) from None
            if end is not None and (end < len(self.text) or self.eof):
                return value, self.pos, end
            pending = len(self.text) - self.pos
            if pending > MAX_ENTRY_CHARS:
                raise ImportError_(f"{where} is longer than {MAX_ENTRY_CHARS:,} characters")
            # read on to four times what is pending: a long entry is parsed about once more
            self._fill(max(_CHUNK_BYTES, 3 * pending))


def _batches(archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str):
    """(number of the first entry, entries, bytes of the bank read so far), batch by batch."""
    try:
        with archive.open(info) as stream:
            entries = _Entries(stream, where)
            first = 0
            for batch in entries.batches():
                yield first, batch, entries.read
                first += len(batch)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
        raise ImportError_(f"{where} cannot be read ({exc})") from None


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
            raise _bad(where, n, row, '[expression, "freq" | "pitch" | "ipa", data]')
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
_COUNTED = ("terms", "term_meta", "kanji", "kanji_meta")


# ------------------------------------------------------------------------------ frequency and pitch


def frequency(data) -> tuple[float, str] | None:
    """(value, display) of one freq record's data (a number, a string, {value, displayValue});
    None for anything else, and for a value that is not a finite number (NaN, Infinity, 1e400,
    which a store imported before the import's number checks may hold)."""
    while isinstance(data, dict) and "frequency" in data:  # {"reading": …, "frequency": …}
        data = data["frequency"]
    if isinstance(data, str):
        m = re.match(r"\s*(\d+(?:\.\d+)?)", data)
        value = float(m.group(1)) if m else 0.0
        return (value, data) if math.isfinite(value) else None
    display = None
    if isinstance(data, dict):
        data, display = data.get("value"), data.get("displayValue")
    if isinstance(data, bool) or not isinstance(data, (int, float)) or not _finite(data):
        return None
    return float(data), str(display) if display else _number(data)


def _finite(number: float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an int beyond a double
        return False


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def pitch_position(position) -> int | None:
    """A downstep position from an int or a pattern such as "LHHL" (mora after which it drops)."""
    if isinstance(position, bool):
        return None
    if isinstance(position, int):
        return position if position >= 0 else None
    if isinstance(position, str) and position and set(position.upper()) <= {"H", "L"}:
        p = position.upper()
        drop = p.find("HL")
        return drop + 1 if drop >= 0 else 0
    return None


def same_reading(a: str, b: str) -> bool:
    return to_hiragana(a) == to_hiragana(b)
