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

The zip is read by app/dictionary/yomitan_zip.py (its sizes checked against zip bombs, the banks
streamed an entry at a time) and its entries become rows in app/dictionary/yomitan_banks.py.

    store = Store()                     # opens (creates) the file
    info = store.import_zip(path, progress=lambda what, done, total: ...)  # model/progress.py
    store.dictionaries()                # [DictionaryInfo], in the user's order
    store.set_enabled(title, False); store.move(title, -1); store.remove(title)
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from app.dictionary.yomitan_banks import BANK_KINDS, COUNTED, insert_banks
from app.dictionary.yomitan_zip import Header, bank_members, open_zip, read_header
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
_DICTIONARY_TABLES = ("terms", "term_meta", "kanji", "kanji_meta", "tags")  # rows with a `dict`


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
    folder is created private, 0700, like all per-user state: app/platform/paths.py)."""
    from app.platform.paths import user_dir

    return user_dir("data") / "dictionary" / FILE_NAME


class Store:
    """The imported dictionaries. Thread-safe: one connection behind a lock."""

    def __init__(self, path: Path | None = None):
        from app.platform.private_files import private_dir, private_file

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
                self._delete(dict_id)
                self.con.execute("COMMIT")
            except BaseException:
                self.con.execute("ROLLBACK")
                raise
            self.revision += 1

    def _delete(self, dict_id: int) -> None:
        """A dictionary's rows in every table and its row in `dictionaries` (inside the caller's
        transaction)."""
        for table in _DICTIONARY_TABLES:
            self.con.execute(f"DELETE FROM {table} WHERE dict = ?", (dict_id,))
        self.con.execute("DELETE FROM dictionaries WHERE id = ?", (dict_id,))

    # --- import ------------------------------------------------------------------------------

    def import_zip(self, path: str | Path, progress: Progress | None = None) -> DictionaryInfo:
        """Import (or replace) one Yomitan dictionary, all or nothing. Raises ImportError_."""
        path = Path(path)
        report = progress or (lambda what, done, total: None)
        started = time.perf_counter()
        with open_zip(path) as archive:
            header = read_header(archive, path.name, reserved_title=JMDICT)
            banks = bank_members(archive, path.name, BANK_KINDS)
            with self._lock:
                self.con.execute("BEGIN IMMEDIATE")
                try:
                    dict_id = self._replace(header, path)
                    counts, hangul = insert_banks(self.con, archive, banks, dict_id, header, report)
                    language = str(header.index.get("sourceLanguage") or "")
                    if not language and counts["terms"]:
                        language = "ko" if hangul else "ja"
                    self.con.execute(
                        "UPDATE dictionaries SET terms = ?, term_meta = ?, kanji = ?, kanji_meta = ?, "
                        "language = ?, imported_s = ? WHERE id = ?",
                        (
                            *(counts[column] for column in COUNTED),
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

    def _replace(self, header: Header, path: Path) -> int:
        """A new row for the dictionary (inside the import's transaction), in the place and with
        the enabled state of the one of that title it replaces; its id."""
        con = self.con
        old = con.execute(
            "SELECT id, position, enabled FROM dictionaries WHERE title = ?", (header.title,)
        ).fetchone()
        if old:
            self._delete(old[0])
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
