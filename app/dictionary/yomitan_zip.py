"""Reading a Yomitan dictionary zip safely: its checked sizes, index.json, and each bank's entries.

A zip is checked before anything in it is read: each bank's declared size, all of them together
and each one's compression ratio against the limits below (zip bombs). zipfile never inflates a
member past its declared size, and one that declares less than it holds fails its CRC check. The
banks are then parsed an entry at a time (json's own scanner on a megabyte of text at a time), so
memory holds one chunk and one batch of rows whatever a bank's size. Numbers must be finite and
fit a double; an entry nested deeper than json can follow (~1,000 levels) is refused.

Nothing here knows the store: app/dictionary/yomitan_banks.py turns the entries into its rows and
app/dictionary/yomitan.py (`Store.import_zip`) writes them in one transaction.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

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


class ImportError_(ValueError):
    """A dictionary file cannot be imported; the message names the file and the problem."""


@dataclass(frozen=True)
class Header:
    """What index.json says of a dictionary (checked) and the zip's file name."""

    file: str
    title: str  # stripped
    format: int
    index: dict


def open_zip(path: Path) -> zipfile.ZipFile:
    """The zip at `path`, once it is a regular file whose list of files is of a sane size."""
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


def read_header(archive: zipfile.ZipFile, name: str, reserved_title: str) -> Header:
    """index.json, checked: a JSON object with a title (not `reserved_title`, a name the store
    gives its built-in dictionary) and a Yomitan format of 1-3."""
    index = _read_index(archive, name)
    if not isinstance(index, dict):
        raise ImportError_(f"{name}: index.json is not a JSON object")
    title = index.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ImportError_(f"{name}: index.json has no title")
    if title.strip() == reserved_title:
        raise ImportError_(f"{name}: the title “{reserved_title}” is the built-in dictionary's")
    fmt = index.get("format", index.get("version"))
    if fmt not in (1, 2, 3):
        raise ImportError_(
            f"{name}: index.json format {fmt!r} is not supported (Yomitan formats 1-3)"
        )
    return Header(name, title.strip(), fmt, index)


def bank_members(
    archive: zipfile.ZipFile, name: str, kinds: Iterable[str]
) -> list[zipfile.ZipInfo]:
    """The zip's banks of the given kinds (`term_bank`, …: named KIND_N.json), by kind and number,
    once their declared sizes are checked."""
    bank = re.compile(rf"^({'|'.join(map(re.escape, kinds))})_\d+\.json$")
    banks = sorted(
        (i for i in archive.infolist() if bank.match(Path(i.filename).name)),
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

    def batches(self) -> Iterator[list]:
        """The entries in lists of _BATCH_ROWS (fewer when they are long: _BATCH_CHARS)."""
        if self._peek() != "[":
            raise ImportError_(f"{self.where} is not a JSON list")
        self.pos += 1
        batch, chars, n = [], 0, 0
        # made by JSONDecoder.__init__ (the C scanner); typeshed does not declare it
        scan = _DECODER.scan_once  # type: ignore[attr-defined]
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


def entry_batches(archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str):
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
