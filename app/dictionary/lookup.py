"""`Dictionary`: the one object the overlay, the CLI and the tests use."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from app.dictionary import chinese, index, japanese, korean, yomitan
from app.dictionary.deinflect import Candidate
from app.dictionary.imported import Imported
from app.dictionary.models import Entry, LookupResult
from app.dictionary.text import around, choose_language, is_han, is_kana

KOREAN_MESSAGE = (
    "No Korean dictionary yet: import a Korean dictionary in Yomitan's format (Settings → "
    "Dictionary → Import) and Korean words are looked up through their dictionary forms."
)
LANGUAGES = ("auto", "ja", "zh", "ko")


def _han_only(text: str) -> bool:
    return any(is_han(ch) for ch in text) and not any(is_kana(ch) for ch in text)


class DictionaryUnavailable(RuntimeError):
    """The dictionary data is missing or unusable; the message says what to do."""


class Dictionary:
    """Offline JMdict/JMnedict/KANJIDIC2 + CC-CEDICT lookups.

    Nothing is opened until the first lookup (or `prepare()`); the first lookup builds the index
    when it is missing (~20 s, once per machine), so apps call `prepare(progress)` from a worker
    thread at start-up and check `is_ready()` before looking up on the GUI thread.
    """

    def __init__(
        self,
        han_language: str = "ja",
        index_file: Path | None = None,
        store_file: Path | None = None,
    ):
        self.han_language = han_language  # what Han-only text is looked up as: "ja" or "zh"
        self._index_file = index_file
        self._store_file = store_file  # imported Yomitan dictionaries (yomitan.store_path())
        self._store: yomitan.Store | None = None
        self._imported: Imported | None = None
        self._lock = threading.RLock()
        self._con: sqlite3.Connection | None = None
        self._names: sqlite3.Connection | None = None
        self._builder: japanese.EntryBuilder | None = None

    @property
    def index_file(self) -> Path:
        return self._index_file or index.index_path()

    @property
    def store_file(self) -> Path:
        return self._store_file or yomitan.store_path()

    def store(self) -> yomitan.Store:
        """The imported dictionaries (created on first use; `hayai dict` and Settings edit it)."""
        with self._lock:
            if self._store is None:
                self._store = yomitan.Store(self.store_file)
                self._imported = Imported(self._store)
            return self._store

    def imported(self) -> Imported | None:
        """Lookups in the imported dictionaries; None while none was ever imported (no file)."""
        with self._lock:
            if self._imported is None and self.store_file.exists():
                self.store()
            return self._imported

    def is_ready(self) -> bool:
        """True when lookups are fast now (the index is open or can be opened without building)."""
        with self._lock:
            if self._con is None:
                self._con = index.open_index(self.index_file)
            return self._con is not None

    def prepare(self, progress: index.Progress | None = None) -> None:
        """Open the index (building it first if needed) and load the analyser; call it from a worker
        thread at start-up so that the first hover on the GUI thread costs milliseconds."""
        with self._lock:
            ready = self._con is not None
        if not ready:
            try:
                con = index.ensure_index(progress, self.index_file)
            except (OSError, sqlite3.Error, index.IndexBuildError) as exc:
                raise DictionaryUnavailable(
                    f"the dictionary index could not be built at {self.index_file}: {exc}. Check that "
                    "jamdict-data is installed and the folder is writable (HAYAI_CONFIG_DIR moves it)."
                ) from exc
            with self._lock:
                if self._con is None:
                    self._con = con
                else:
                    con.close()
        # loads the morphological analyser (Sudachi, ~0.05 s) here rather than on a hover
        self._lemma_at("日本語を読む", 0)
        imported = self.imported()
        if imported is not None and imported.has_language("ko"):
            try:
                korean.analyser()  # ~1.5 s, here rather than on the first Korean hover
            except korean.KoreanUnavailable:
                pass  # the Korean lookup says what to install

    def _connections(self) -> tuple[sqlite3.Connection, sqlite3.Connection, japanese.EntryBuilder]:
        if not self.is_ready():
            self.prepare()  # blocking build (~20 s, once); the app calls prepare() on a worker thread instead
        if self._names is None:
            self._names = sqlite3.connect(
                f"file:{index.jamdict_db_path()}?mode=ro", uri=True, check_same_thread=False
            )
        con = self._con
        assert con is not None  # prepare() opened it or raised
        if self._builder is None:
            self._builder = japanese.EntryBuilder(con)
        return con, self._names, self._builder

    def lookup(self, text: str, start: int = 0, lang: str = "auto") -> LookupResult:
        """Entries for the longest match beginning at `text[start]`, best first; only the text
        around `start` is read (`around`), so a lookup costs the same whatever the text's length."""
        if lang not in LANGUAGES:
            raise ValueError(f"unknown language {lang!r}; use one of {', '.join(LANGUAGES)}")
        text, start = around(text, start)
        language = choose_language(text, self.han_language) if lang == "auto" else lang
        if not text or not 0 <= start < len(text):
            return LookupResult(0, [], language)
        return _LOOKUPS[language](self, text, start, lang == "auto")

    def _lookup_chinese(self, text: str, start: int, auto: bool) -> LookupResult:
        with self._lock:
            con, _names, _builder = self._connections()
            entries = chinese.lookup(con, text, start)
        message = None if entries else "No entry in CC-CEDICT."
        return LookupResult(_match_len(entries), entries, "zh", message)

    def _lookup_japanese(self, text: str, start: int, auto: bool) -> LookupResult:
        with self._lock:
            con, _names, _builder = self._connections()
            entries = self._japanese_entries(text, start)
            if (
                auto
                and not any(e.source in ("jmdict", "yomitan") for e in entries)
                and _han_only(text)
            ):
                # Han-only text that JMdict does not know (學習, 这个): Chinese may, so offer that instead
                zh = chinese.lookup(con, text, start)
                if zh and len(zh[0].match) >= _match_len(entries):
                    return LookupResult(len(zh[0].match), zh, "zh")
        message = None if entries else "No entry in JMdict."
        return LookupResult(_match_len(entries), entries, "ja", message)

    def _japanese_entries(self, text: str, start: int) -> list[Entry]:
        """JMdict's words, the imported dictionaries' and JMnedict's names, ranked, with the
        imported frequencies, pitch and kanji (under the lock)."""
        con, names, builder = self._connections()
        wanted = japanese.wanted_forms(text, start)
        hits = japanese.find_hits(
            con, text, start, context=lambda: self._lemma_at(text, start), wanted=wanted
        )
        entries = builder.build(text, start, hits[: japanese.MAX_ENTRIES])
        imported = self.imported()
        if imported is not None and imported.active:
            extra = imported.entries(text, start, wanted)[: japanese.MAX_ENTRIES]
            for entry in extra:
                entry.kanji = builder.kanji_for(entry.headword)
            entries += extra
        entries += japanese.find_names(
            names, builder, text, start, min_length=max(_match_len(entries), 1)
        )
        # a longer name (田中 in 田中さん) goes before shorter words; at equal length the words,
        # fewer deinflection steps first, then by dictionary in the user's order (JMdict has
        # its place in it, first unless moved), then names
        rank = imported.rank if imported is not None else (lambda _entry: 0)
        entries.sort(
            key=lambda e: (
                -len(e.match),
                e.source == "jmnedict",
                len(e.deinflection or ()),
                rank(e) if e.source != "jmnedict" else 0,
            )
        )
        if imported is not None:
            imported.annotate([e for e in entries if e.source != "jmnedict"])
            imported.annotate_kanji(entries)
        return entries

    def _lookup_korean(self, text: str, start: int, auto: bool) -> LookupResult:
        imported = self.imported()
        if imported is None or not imported.has_language("ko"):
            return LookupResult(0, [], "ko", KOREAN_MESSAGE)
        try:
            keys = korean.keys_at(text, start)
        except korean.KoreanUnavailable as exc:
            return LookupResult(0, [], "ko", str(exc))
        wanted = {key: [(n, Candidate(key, None, ()))] for key, n in keys.items()}
        with self._lock:
            entries = imported.entries(text, start, wanted, japanese=False)
        message = None if entries else "No entry in the imported Korean dictionaries."
        return LookupResult(_match_len(entries), entries[: japanese.MAX_ENTRIES], "ko", message)

    @staticmethod
    def _lemma_at(text: str, start: int) -> japanese.Lemma | None:
        try:
            from app.dictionary.furigana import lemma_tokens

            return japanese.lemma_at(lemma_tokens(text), start)
        except Exception:  # the analyser missing or broken: ranking just skips this tie-break
            return None

    def furigana(self, text: str) -> list[tuple[str, str | None]]:
        from app.dictionary.furigana import furigana

        return furigana(text)

    def close(self) -> None:
        with self._lock:
            for con in (self._con, self._names):
                if con is not None:
                    con.close()
            self._con = self._names = self._builder = None
            if self._store is not None:
                self._store.close()
            self._store = self._imported = None


def _match_len(entries: list[Entry]) -> int:
    """Characters of the text the best entry covers (0: none)."""
    return max((len(e.match) for e in entries), default=0)


# The lookup of each language: (dictionary, text, start, whether the language was guessed)
_LOOKUPS: dict[str, Callable[[Dictionary, str, int, bool], LookupResult]] = {
    "ja": Dictionary._lookup_japanese,
    "zh": Dictionary._lookup_chinese,
    "ko": Dictionary._lookup_korean,
}
