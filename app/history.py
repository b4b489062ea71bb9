"""The capture history: SQLite in the data dir (or HAYAI_CONFIG_DIR), newest first, last N kept.

Each row: when, which screen, the box (virtual-desktop physical px), a small PNG thumbnail and the
text. Used from the GUI thread only; every call is a few milliseconds.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from app.settings import data_dir

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


def default_path() -> Path:
    return data_dir() / "history.sqlite3"


class History:
    def __init__(self, path: Path | None = None, limit: int = 500):
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.limit = limit
        self._db = sqlite3.connect(str(self.path))
        self._db.executescript(SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(captures)")}
        if "source" not in columns:  # a database from before the reading log
            with self._db:
                self._db.execute("ALTER TABLE captures ADD COLUMN source TEXT NOT NULL DEFAULT ''")

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
    ) -> int:
        with self._db:
            cursor = self._db.execute(
                "INSERT INTO captures (created, screen, box, text, thumbnail, source)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    time.time() if created is None else created,
                    screen,
                    json.dumps([int(v) for v in box]),
                    text,
                    thumbnail,
                    source,
                ),
            )
            self._prune()
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
        query = "SELECT id, created, screen, box, text, thumbnail, source FROM captures"
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
        return [
            Entry(row[0], row[1], row[2], tuple(json.loads(row[3]) or (0, 0, 0, 0)), *row[4:7])
            for row in self._db.execute(query, params)
        ]

    def get(self, entry_id: int) -> Entry | None:
        row = self._db.execute(
            "SELECT id, created, screen, box, text, thumbnail, source FROM captures WHERE id = ?",
            (entry_id,),
        ).fetchone()
        return (
            None
            if row is None
            else Entry(row[0], row[1], row[2], tuple(json.loads(row[3])), *row[4:7])
        )

    def update_text(self, entry_id: int, text: str) -> None:
        """The user corrected a read (the reading log's editor)."""
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
