"""The capture history: SQLite in the data dir (or HAYAI_CONFIG_DIR), newest first, last N kept.

Each row: when, which screen, the box (virtual-desktop physical px), a small PNG thumbnail, the
text (with the user's corrections) and the model's own text (`ocr_text`, never edited).

The GUI thread never waits on the file: one thread, `hayai-history`, owns the connection. `add`,
`update_text`, `delete`, `clear` and `set_limit` queue the change in memory and return at once;
the thread saves the queue in order. While another program holds the file locked (a backup tool,
a sync client, an sqlite shell), the disk is full or writing fails, the changes stay queued and the
thread tries again with back-off; the user is told once (`notice`) what is wrong and that nothing is
lost, and again when all is saved. The queue keeps every read's text however long that lasts; its
thumbnails only up to MAX_QUEUED_THUMBNAILS bytes (later reads wait without theirs, logged once).
A change that fails by itself (a bug, an IntegrityError: not the file's state) is tried CHANGE_TRIES
times, then logged with its traceback, left out (the user told once) and the rest saved. Windows ask through `fetch`, answered by the same thread as
`fetched`, with the unsaved changes applied, so they show every read, saved or not; `entries`,
`get` and `count` wait for that answer (tests and scripts, never the GUI thread).

The file is private (0600 in a 0700 folder). Only a file SQLite calls damaged (not a database,
malformed, failing its quick check, a `captures` table of other columns, a folder in its place) is
moved aside to `history.sqlite3.corrupt-DATE` and an empty history starts (`moved_aside`, and a
notice); a locked one is waited for.
"""

from __future__ import annotations

import errno
import json
import logging
import sqlite3
import string
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.platform.private_files import move_aside, private_dir, private_file
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
BASE_COLUMNS = {"id", "created", "screen", "box", "text", "thumbnail"}  # SCHEMA's
COLUMNS = "id, created, screen, box, text, thumbnail, source, ocr_text"  # in Entry's order
# how a read came in ('' = older rows)
SOURCES = ("box", "click", "watch", "clipboard", "folder", "hover")

BUSY_WAIT_S = 1.0  # SQLite's own wait for another program's lock (on the history thread)
RETRY_S = (0.25, 0.5, 1.0, 2.0)  # pauses between tries while saving fails, the last one repeated
CLOSE_WAIT_S = 3.0  # at quit, how long unsaved changes may still take to be saved
MAX_QUEUED_THUMBNAILS = 32 * 2**20  # bytes of thumbnails kept in the queue while it cannot be saved
CHANGE_TRIES = 3  # tries of a change that fails by itself before it is left out
CHANGE_WORDS = {  # a change, in the user's words
    "add": "a new read",
    "edit": "a correction",
    "delete": "a deletion",
    "clear": "clearing the history",
    "limit": "the history's new length",
}
DAMAGED_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB
_LATIN_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


@dataclass(frozen=True)
class Entry:
    id: int  # the row's, or for a row added in this session -1, -2, …, saved or not
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


def matches(entry: Entry, search: str, since: float | None) -> bool:
    """What `entries` keeps: LIKE's substring, which folds the case of Latin letters only."""
    if since is not None and entry.created < since:
        return False
    return search.translate(_LATIN_LOWER) in entry.text.translate(_LATIN_LOWER)


class Damaged(Exception):
    """The file is not a history SQLite can use (never one that is only locked): moved aside."""


class ChangeFailed(Exception):
    """One change failed by itself, not for the file's state (tried again, then left out)."""


def about_the_file(exc: Exception) -> bool:
    """Whether `exc` is about the file's state (locked, full, read-only, I/O), which passes, rather
    than about the change being saved (a constraint, a value SQLite cannot bind, a bug)."""
    return isinstance(exc, (sqlite3.OperationalError, OSError))


def is_damaged(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in DAMAGED_CODES
    return "not a database" in str(exc) or "malformed" in str(exc)


def why_unsaved(exc: Exception, path: Path) -> tuple[str, str]:
    """What keeps the history from being saved, and when it will be, in words."""
    text = str(exc)
    if "locked" in text:  # SQLITE_BUSY, SQLITE_LOCKED
        return f"another program is using the history file {path}", "as soon as it lets go"
    if "full" in text or getattr(exc, "errno", None) == errno.ENOSPC:  # SQLITE_FULL
        return "the disk is full", "when there is room"
    return f"{text} ({path})", "when it can be written again"


def default_path() -> Path:
    return data_dir() / "history.sqlite3"


class History(QObject):
    fetched = Signal(
        int, object, int
    )  # a fetch's token, its entries (newest first), how many in all
    changed = Signal()  # the file was opened (late, or afresh): views fetch again
    notice = Signal(str, str, bool)  # title, message, error: for the user (Application.notify)

    def __init__(self, path: Path | None = None, limit: int = 500, parent=None):
        super().__init__(parent)
        self.path = Path(path) if path else default_path()
        self.limit = limit
        self.moved_aside: Path | None = None  # where a damaged file went
        self.trouble = ""  # why changes wait unsaved, in words ("" while all is saved)
        self._cv = threading.Condition()
        self._changes: list[tuple] = []  # unsaved, oldest first; the thread pops what it saved
        self._queued_thumbnails = 0  # bytes of thumbnails in `_changes`
        self._thumbnails_told = False  # that reads wait without their thumbnails (logged once)
        self._questions: list[tuple] = []  # (search, since, reply(entries, total))
        self._closing_at: float | None = None
        self._thread: threading.Thread | None = None
        self._tokens = 0
        self._new_ids = 0
        # The history thread's own: the connection, this session's ids ↔ the rows' once saved.
        self._db: sqlite3.Connection | None = None
        self._row_ids: dict[int, int] = {}
        self._our_ids: dict[int, int] = {}
        self._told = False
        self._failing: tuple | None = None  # the change failing by itself, and how often
        self._tries = 0
        self._left_out_told = False

    def start(self) -> None:
        """Start the history thread (its owner connects `notice` first); a change starts it too."""
        with self._cv:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="hayai-history", daemon=True)
                self._thread.start()

    def close(self) -> None:
        """Save what is queued, waiting at most CLOSE_WAIT_S for a file that cannot take it."""
        with self._cv:
            thread = self._thread
            if thread is None or self._closing_at is not None:
                return
            self._closing_at = time.monotonic() + CLOSE_WAIT_S
            self._cv.notify_all()
        thread.join(CLOSE_WAIT_S + BUSY_WAIT_S + 1)

    # --- changes: queued, never waited for ---------------------------------------------------------

    def _queue(self, change: tuple) -> tuple:
        """`change` queued (a read beyond the thumbnails the queue may hold without its thumbnail);
        what was queued."""
        self.start()
        with self._cv:
            if change[0] == "add" and change[1].thumbnail:
                size = len(change[1].thumbnail)
                if self._queued_thumbnails + size > MAX_QUEUED_THUMBNAILS:
                    change = ("add", replace(change[1], thumbnail=None))
                    if not self._thumbnails_told:
                        self._thumbnails_told = True
                        log.warning(
                            "history %s: %d MB of thumbnails wait unsaved; the reads after them are "
                            "kept without a thumbnail until the history can be saved",
                            self.path,
                            self._queued_thumbnails // 2**20,
                        )
                else:
                    self._queued_thumbnails += size
            self._changes.append(change)
            self._cv.notify_all()
        return change

    def add(
        self,
        text: str,
        screen: str = "",
        box=(0, 0, 0, 0),
        thumbnail: bytes | None = None,
        created: float | None = None,
        source: str = "",
        ocr_text: str | None = None,
    ) -> Entry:
        """A read: `text` as kept (corrected when the user already edited it), `ocr_text` what the
        model read (None: the same as `text`). Its entry comes back at once, with its lasting id."""
        x, y, w, h = (int(v) for v in box)
        with self._cv:
            self._new_ids -= 1
            entry_id = self._new_ids
        entry = Entry(
            entry_id,
            time.time() if created is None else float(created),
            screen,
            (x, y, w, h),
            text,
            thumbnail,
            source,
            text if ocr_text is None else ocr_text,
        )
        return self._queue(("add", entry))[1]

    def update_text(self, entry_id: int, text: str) -> None:
        """The user corrected a read (the overlay, the reading log); `ocr_text` stays as read."""
        self._queue(("edit", entry_id, text))

    def delete(self, entry_id: int) -> None:
        self._queue(("delete", entry_id))

    def clear(self) -> None:
        self._queue(("clear",))

    def set_limit(self, limit: int) -> None:
        self.limit = max(1, int(limit))
        self._queue(("limit",))

    # --- questions: answered by the history thread -------------------------------------------------

    def fetch(self, search: str = "", since: float | None = None) -> int:
        """Ask for `entries(search, since=since)`; the answer comes as `fetched` with this token."""
        self._tokens += 1
        token = self._tokens
        self._ask(search, since, lambda entries, total: self.fetched.emit(token, entries, total))
        return token

    def entries(
        self, search: str = "", limit: int | None = None, since: float | None = None
    ) -> list[Entry]:
        """Newest first, saved or not; `search` matches a substring of the text (case-insensitive
        for Latin letters); `since` (unix time) keeps the rows from then on (the reading log's
        session). Waits for the history thread: never on the GUI thread (windows `fetch`)."""
        entries = self._answer_of(search, since)[0]
        return entries[:limit] if limit else entries

    def get(self, entry_id: int) -> Entry | None:
        return next((e for e in self.entries() if e.id == entry_id), None)

    def count(self) -> int:
        return self._answer_of("", None)[1]

    def _ask(self, search: str, since: float | None, reply: Callable) -> None:
        self.start()
        with self._cv:
            self._questions.append((search, since, reply))
            self._cv.notify_all()

    def _answer_of(self, search: str, since: float | None) -> tuple[list[Entry], int]:
        answered = threading.Event()
        answer: list[tuple[list[Entry], int]] = []

        def reply(entries: list[Entry], total: int) -> None:
            answer.append((entries, total))
            answered.set()

        self._ask(search, since, reply)
        while not answered.wait(0.5):
            if self._thread is None or not self._thread.is_alive():
                raise RuntimeError(f"the history {self.path} is closed")
        return answer[0]

    # --- the history thread ------------------------------------------------------------------------

    def _run(self) -> None:
        failures = 0
        while True:
            with self._cv:
                pause = RETRY_S[min(failures, len(RETRY_S)) - 1] if failures else None
                self._cv.wait_for(partial(self._due, failures), pause)
                questions, self._questions = self._questions, []
                closing_at = self._closing_at
            problem = self._try(self._open)
            for question in questions:
                self._try(self._answer, *question)
            if problem is None:
                problem = self._try(self._save)
            if problem is None:
                failures = 0
                self._saved()
                if closing_at is not None:
                    break
                continue
            failures += 1
            if not isinstance(problem, ChangeFailed):  # that one passes within seconds: left out
                self._unsaved(problem)
            if closing_at is not None and time.monotonic() >= closing_at:
                log.warning(
                    "history %s: %d changes not saved at quit: %s",
                    self.path,
                    len(self._changes),
                    problem,
                )
                break
        if self._db is not None:
            self._db.close()

    def _due(self, failures: int) -> bool:
        """A question is answered at once; saving waits out the pause after a failure."""
        if self._questions:
            return True
        work = self._db is None or self._changes or self._closing_at is not None
        return not failures and bool(work)

    @staticmethod
    def _try(step: Callable[..., object], *args) -> Exception | None:
        try:
            step(*args)
        except (sqlite3.Error, OSError, Damaged, ChangeFailed) as exc:
            return exc
        except Exception as exc:  # a bug: logged whole; the thread goes on and retries
            log.exception("history thread")
            return exc
        return None

    def _open(self) -> None:
        if self._db is not None:
            return
        try:
            self._db = self._connect()
        except Damaged as exc:
            self.moved_aside = move_aside(self.path)
            # the rows saved so far went with it: their ids must not reach the new file's rows
            self._row_ids.clear()
            self._our_ids.clear()
            log.warning(
                "history %s was unreadable (%s); moved it to %s and starting an empty history",
                self.path,
                exc,
                self.moved_aside,
            )
            self.notice.emit(
                "History reset",
                f"The capture history could not be read; it was moved to {self.moved_aside} and "
                "a new, empty history was started.",
                True,
            )
            self._db = self._connect()
        self.changed.emit()

    def _connect(self) -> sqlite3.Connection:
        """The database, checked: Damaged when SQLite says the file is not a usable history."""
        private_dir(self.path.parent)
        if self.path.exists() and not self.path.is_file():
            raise Damaged(f"{self.path} is not a file")
        private_file(self.path)  # SQLite gives its journal the database file's mode
        db = sqlite3.connect(str(self.path), timeout=BUSY_WAIT_S)
        try:
            problem = db.execute("PRAGMA quick_check").fetchone()[0]
            if problem != "ok":
                raise Damaged(problem)
            columns = {row[1] for row in db.execute("PRAGMA table_info(captures)")}
            if columns and not BASE_COLUMNS <= columns:
                raise Damaged("its table of captures has other columns")
            db.executescript(SCHEMA)
            columns = {row[1] for row in db.execute("PRAGMA table_info(captures)")}
            if "source" not in columns:  # a database from before the reading log
                with db:
                    db.execute("ALTER TABLE captures ADD COLUMN source TEXT NOT NULL DEFAULT ''")
            if "ocr_text" not in columns:  # from before corrections were kept apart: its text
                with db:  # is all there is of what the model read, so it is both
                    db.execute("ALTER TABLE captures ADD COLUMN ocr_text TEXT")
                    db.execute("UPDATE captures SET ocr_text = text WHERE ocr_text IS NULL")
            db.execute(f"SELECT {COLUMNS} FROM captures LIMIT 1")
        except sqlite3.Error as exc:
            db.close()
            if is_damaged(exc):
                raise Damaged(str(exc)) from exc
            raise  # locked, full, …: tried again
        except BaseException:
            db.close()
            raise
        return db

    def _save(self) -> None:
        """Every queued change, in order, each in its own transaction."""
        db = self._db
        assert db is not None  # _open came first
        while True:
            with self._cv:
                if not self._changes:
                    return
                change = self._changes[0]
            try:
                with db:
                    row_id = self._apply(db, change)
            except Exception as exc:
                if isinstance(exc, sqlite3.Error) and db.in_transaction:
                    db.rollback()
                if isinstance(exc, sqlite3.Error) and is_damaged(exc):
                    db.close()  # checked again when opened next (and moved aside if it is)
                    self._db = None
                    raise
                if about_the_file(exc):
                    raise
                if not self._left_out(change, exc):
                    raise ChangeFailed(f"{type(exc).__name__}: {exc}") from exc
                self._pop()
                continue
            self._failing = None
            if row_id is not None:
                self._row_ids[change[1].id] = row_id
                self._our_ids[row_id] = change[1].id
            self._pop()

    def _pop(self) -> None:
        """The oldest change is done (saved or left out)."""
        with self._cv:
            change = self._changes.pop(0)
            if change[0] == "add" and change[1].thumbnail:
                self._queued_thumbnails -= len(change[1].thumbnail)
            if not self._queued_thumbnails:
                self._thumbnails_told = False

    def _left_out(self, change: tuple, exc: Exception) -> bool:
        """Whether `change`, failing by itself, has had its tries: then it is logged with its
        traceback, the user is told (once a session) and it is left out."""
        if self._failing is not change:
            self._failing, self._tries = change, 0
        self._tries += 1
        if self._tries < CHANGE_TRIES:
            return False
        self._failing = None
        what = CHANGE_WORDS.get(change[0], change[0])
        log.error(
            "history %s: %s could not be saved after %d tries and is left out; the other changes "
            "are saved",
            self.path,
            what,
            CHANGE_TRIES,
            exc_info=exc,
        )
        if not self._left_out_told:
            self._left_out_told = True
            self.notice.emit(
                "History: a change not saved",
                f"Hayai could not save {what} to the history ({type(exc).__name__}: {exc}), so it "
                "was left out; everything else is saved. Hayai's log has the details (hayai -v).",
                True,
            )
        return True

    def _apply(self, db: sqlite3.Connection, change: tuple) -> int | None:
        """One change; an added row's id."""
        kind = change[0]
        if kind == "add":
            e = change[1]
            cursor = db.execute(
                "INSERT INTO captures (created, screen, box, text, thumbnail, source, ocr_text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    e.created,
                    e.screen,
                    json.dumps(list(e.box)),
                    e.text,
                    e.thumbnail,
                    e.source,
                    e.ocr_text,
                ),
            )
            self._prune(db)
            return cursor.lastrowid
        if kind == "edit":
            row_id = self._row_ids.get(change[1], change[1])
            db.execute("UPDATE captures SET text = ? WHERE id = ?", (change[2], row_id))
        elif kind == "delete":
            db.execute(
                "DELETE FROM captures WHERE id = ?", (self._row_ids.get(change[1], change[1]),)
            )
        elif kind == "clear":
            db.execute("DELETE FROM captures")
        elif kind == "limit":
            self._prune(db)
        return None

    def _prune(self, db: sqlite3.Connection) -> None:
        db.execute(
            "DELETE FROM captures WHERE id NOT IN (SELECT id FROM captures ORDER BY created DESC, id DESC LIMIT ?)",
            (self.limit,),
        )

    def _answer(self, search: str, since: float | None, reply: Callable) -> None:
        """The file's rows (none while it cannot be read) as they will be once the queue is saved."""
        rows: list[Entry] = []
        total = 0
        if self._db is not None:
            try:
                rows, total = self._query(self._db, search, since)
            except sqlite3.Error as exc:  # locked: the unsaved rows are what can be shown now
                log.info("history %s not read: %s", self.path, exc)
        with self._cv:
            changes = list(self._changes)
        for change in changes:
            kind = change[0]
            if kind == "add":
                total += 1
                if matches(change[1], search, since):
                    rows.insert(0, change[1])
            elif kind == "edit":
                rows = [replace(e, text=change[2]) if e.id == change[1] else e for e in rows]
            elif kind == "delete":
                total = max(0, total - 1)
                rows = [e for e in rows if e.id != change[1]]
            elif kind == "clear":
                rows, total = [], 0
        rows.sort(key=lambda e: e.created, reverse=True)  # stable: the newest added first on ties
        reply(rows[: self.limit], min(total, self.limit))

    def _query(
        self, db: sqlite3.Connection, search: str, since: float | None
    ) -> tuple[list[Entry], int]:
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
        rows = [_entry(row) for row in db.execute(query, params)]
        total = int(db.execute("SELECT COUNT(*) FROM captures").fetchone()[0])
        ours = self._our_ids
        return [replace(e, id=ours[e.id]) if e.id in ours else e for e in rows], total

    def _unsaved(self, problem: Exception) -> None:
        reason, until = why_unsaved(problem, self.path)
        with self._cv:
            waiting = len(self._changes)
        if reason != self.trouble:
            log.warning("history %s not saved (%d changes wait): %s", self.path, waiting, problem)
            self.trouble = reason
        if waiting and not self._told:
            self._told = True
            self.notice.emit(
                "History not saved",
                f"History can't be saved: {reason}. Your reads are kept and will be saved {until}.",
                True,
            )

    def _saved(self) -> None:
        if not self.trouble:
            return
        log.info("history %s saved again", self.path)
        self.trouble = ""
        if self._told:
            self._told = False
            self.notice.emit(
                "History saved", "The history is saved again: no read was lost.", False
            )
