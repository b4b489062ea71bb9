"""The capture history: SQLite in the data dir (or HAYAI_CONFIG_DIR), newest first, last N kept.

Each row: when, which screen, the box (virtual-desktop physical px), a small PNG thumbnail, the
text (with the user's corrections) and the model's own text (`ocr_text`, never edited). Used from
the GUI thread only; every call is a few milliseconds.

The file is private (0600 in a 0700 folder). One that cannot be read (not a database, truncated,
malformed, a folder in its place) is moved aside to `history.sqlite3.corrupt-DATE` and an empty
history starts; `moved_aside` says where it went, so the app can tell the user.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from app.private_files import move_aside, private_dir, private_file
from app.settings import data_dir

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS captures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,          -- unix time
    screen TEXT NOT NULL DEFAULT '',
    box TEXT NOT NULL DEFAULT '[]', -- JSON [x, y, w, h], virtual-desktop physical px
    text TEXT NOT NULL,
    thumbnail BLOB                  -- PNG, longest side <= 160 px
);
CREATE INDEX IF NOT EXISTS captures_created ON captures(created);
"""
COLUMNS = "id, created, screen, box, text, thumbnail, source, ocr_text"  # in Entry's order
SOURCES = ("box", "click", "watch", "clipboard", "folder")  # how a read came in ('' = older rows)


@dataclass(frozen=True)
class Entry:
    id: int
    created: float
    screen: str
    box: tuple[int, int, int, int]
    text: str
    thumbnail: bytes | None
    source: str = ""  # one of SOURCES
    ocr_text: str = ""  # what the model read, before any correction (`text` is the corrected one)


def _entry(row) -> Entry:
    """A row as an Entry; values of the wrong type (a file edited by hand) become harmless ones."""
    try:
        box = tuple(int(v) for v in json.loads(row[3]))
    except (TypeError, ValueError):
        box = ()
    try:
        created = float(row[1])
    except (TypeError, ValueError):
        created = 0.0
    return Entry(
        int(row[0]),
        created,
        str(row[2] or ""),
        box if len(box) == 4 else (0, 0, 0, 0),
        str(row[4] or ""),
        row[5] if isinstance(row[5], bytes) else None,
        str(row[6] or "") if len(row) > 6 else "",
        str(row[7] or "") if len(row) > 7 else "",
    )


def default_path() -> Path:
    return data_dir() / "history.sqlite3"


class History:
    def __init__(self, path: Path | None = None, limit: int = 500):
        self.path = Path(path) if path else default_path()
        private_dir(self.path.parent)
        self.limit = limit
        self.moved_aside: Path | None = None  # where an unreadable file went, for a message
        try:
            self._db = self._connect()
        except (sqlite3.Error, OSError) as exc:
            self.moved_aside = move_aside(self.path)
            log.warning(
                "history %s was unreadable (%s); moved it to %s and starting an empty history",
                self.path,
                exc,
                self.moved_aside,
            )
            self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        """The database, checked: a file that is not one (or is damaged) raises sqlite3.Error."""
        if self.path.exists() and not self.path.is_file():
            raise sqlite3.DatabaseError(f"{self.path} is not a file")
        private_file(self.path)  # SQLite gives its journal the database file's mode
        db = sqlite3.connect(str(self.path))
        try:
            db.executescript(SCHEMA)
            problem = db.execute("PRAGMA quick_check").fetchone()[0]
            if problem != "ok":
                raise sqlite3.DatabaseError(problem)
            columns = {row[1] for row in db.execute("PRAGMA table_info(captures)")}
            if "source" not in columns:  # a database from before the reading log
                with db:
                    db.execute("ALTER TABLE captures ADD COLUMN source TEXT NOT NULL DEFAULT ''")
            if "ocr_text" not in columns:  # from before corrections were kept apart: its text
                with db:  # is all there is of what the model read, so it is both
                    db.execute("ALTER TABLE captures ADD COLUMN ocr_text TEXT")
                    db.execute("UPDATE captures SET ocr_text = text WHERE ocr_text IS NULL")
            db.execute(f"SELECT {COLUMNS} FROM captures LIMIT 1")
        except BaseException:
            db.close()
            raise
        return db

    def close(self) -> None:
        self._db.close()

    def add(
        self,
        text: str,
        screen: str = "",
        box=(0, 0, 0, 0),
        thumbnail: bytes | None = None,
        created: float | None = None,
        source: str = "",
        ocr_text: str | None = None,
    ) -> int:
        """A read: `text` as kept (corrected when the user already edited it), `ocr_text` what the
        model read (None: the same as `text`)."""
        with self._db:
            cursor = self._db.execute(
                "INSERT INTO captures (created, screen, box, text, thumbnail, source, ocr_text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time() if created is None else created,
                    screen,
                    json.dumps([int(v) for v in box]),
                    text,
                    thumbnail,
                    source,
                    text if ocr_text is None else ocr_text,
                ),
            )
            self._prune()
        assert cursor.lastrowid is not None  # the INSERT above set it
        return int(cursor.lastrowid)

    def set_limit(self, limit: int) -> None:
        self.limit = max(1, int(limit))
        with self._db:
            self._prune()

    def _prune(self) -> None:
        self._db.execute(
            "DELETE FROM captures WHERE id NOT IN (SELECT id FROM captures ORDER BY created DESC, id DESC LIMIT ?)",
            (self.limit,),
        )

    def entries(
        self, search: str = "", limit: int | None = None, since: float | None = None
    ) -> list[Entry]:
        """Newest first; `search` matches a substring of the text (case-insensitive for Latin letters);
        `since` (unix time) keeps the rows from then on (the reading log's session)."""
        query = f"SELECT {COLUMNS} FROM captures"
        params: list = []
        where = []
        if search:
            where.append("text LIKE ? ESCAPE '\\'")
            escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params.append(f"%{escaped}%")
        if since is not None:
            where.append("created >= ?")
            params.append(float(since))
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY created DESC, id DESC"
        if limit:
            query += " LIMIT ?"
            params.append(int(limit))
        return [_entry(row) for row in self._db.execute(query, params)]

    def get(self, entry_id: int) -> Entry | None:
        row = self._db.execute(
            f"SELECT {COLUMNS} FROM captures WHERE id = ?",
            (entry_id,),
        ).fetchone()
        return None if row is None else _entry(row)

    def update_text(self, entry_id: int, text: str) -> None:
        """The user corrected a read (the overlay, the reading log); `ocr_text` stays as read."""
        with self._db:
            self._db.execute("UPDATE captures SET text = ? WHERE id = ?", (text, entry_id))

    def delete(self, entry_id: int) -> None:
        with self._db:
            self._db.execute("DELETE FROM captures WHERE id = ?", (entry_id,))

    def clear(self) -> None:
        with self._db:
            self._db.execute("DELETE FROM captures")

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM captures").fetchone()[0])
