"""`hayai bench --dictionary [--runs N] [--json]`: first lookup, per-hover latency, the slowest
lookup and the slowest furigana in pathological texts, memory added."""

from __future__ import annotations

import json
import statistics
import sys
import time

# A few lines of the kind people box: manga dialogue, a game, a news sentence, a light novel.
SAMPLE_TEXT = [
    "昨日は学校に行ったけど、先生はいなかった。",
    "そんなこと言われても、食べられなかったんだから仕方ないじゃん！",
    "彼女は毎朝早く起きて、公園を散歩しながら音楽を聴いています。",
    "政府は来年度の予算案について、野党との協議を続ける方針を示した。",
    "ちょっと待ってて。すぐ戻ってくるから、ここで本を読んでいてくれる？",
]

# Texts no one boxes but anyone can paste: each lookup in them must cost what a hover costs ('た' and
# 100,000 combining marks took 5.4 s before a lookup read only the text around the pointer).
PATHOLOGICAL = {
    "kana + 100,000 combining marks": "た" + "\u3099" * 100_000,
    "kana + 100,000 accents": "た" + "\u0301" * 100_000,
    "100,000 kana": "あ" * 100_000,
    "100,000 small tsu": "っ" * 100_000,
    "100,000 ー": "ー" * 100_000,
    "100,000 kanji": "日" * 100_000,
    "100,000 hangul": "한" * 100_000,
    "mixed scripts": "日本語のテキストABCｶﾞ한국어、" * 5_000,
}


def worst_lookup(dictionary) -> tuple[float, str]:
    """(the slowest lookup in PATHOLOGICAL in ms, which): at the start, middle and end of each text,
    in each language."""
    from app.dictionary.lookup import LANGUAGES

    worst = (0.0, "")
    for name, text in PATHOLOGICAL.items():
        for start in (0, len(text) // 2, len(text) - 1):
            for lang in LANGUAGES:
                t = time.perf_counter()
                dictionary.lookup(text, start, lang)
                ms = (time.perf_counter() - t) * 1000
                worst = max(worst, (ms, f"{name}, at {start}, {lang}"))
    return worst


def worst_furigana(dictionary) -> tuple[float, str]:
    """(the slowest furigana of a text in PATHOLOGICAL in ms, which): what the overlay's furigana
    view costs the GUI thread for such a text."""
    worst = (0.0, "")
    for name, text in PATHOLOGICAL.items():
        t = time.perf_counter()
        dictionary.furigana(text)
        worst = max(worst, ((time.perf_counter() - t) * 1000, name))
    return worst


def rss_mb() -> float:
    """Resident set size now, from /proc (Linux) or resource (elsewhere: peak, not current)."""
    try:
        with open("/proc/self/statm") as fh:
            import os

            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2**20 if sys.platform == "darwin" else 2**10)


def run(runs: int = 5) -> dict:
    from app.dictionary.lookup import Dictionary

    rss_before = rss_mb()
    dictionary = Dictionary()
    build_s = None
    if not dictionary.is_ready():  # the once-per-machine index build is reported separately
        started = time.perf_counter()
        dictionary.prepare()
        build_s = time.perf_counter() - started
    dictionary.close()
    dictionary = Dictionary()
    started = time.perf_counter()  # the first lookup opens the index and the names database
    first = dictionary.lookup(SAMPLE_TEXT[0], 0)
    first_ms = (time.perf_counter() - started) * 1000
    hover_ms: list[float] = []
    for _ in range(max(1, runs)):
        for line in SAMPLE_TEXT:
            for start in range(len(line)):  # the mouse passes over every character
                t = time.perf_counter()
                dictionary.lookup(line, start)
                hover_ms.append((time.perf_counter() - t) * 1000)
    furigana_ms = []
    for line in SAMPLE_TEXT:
        t = time.perf_counter()
        dictionary.furigana(line)
        furigana_ms.append((time.perf_counter() - t) * 1000)
    hover_ms.sort()
    worst_ms, worst = worst_lookup(dictionary)
    worst_furigana_ms, worst_furigana_text = worst_furigana(dictionary)
    imported = dictionary.imported()
    enabled = imported.store.dictionaries(enabled_only=True) if imported is not None else []
    return {
        "index_build_s": round(build_s, 1) if build_s is not None else None,
        "first_lookup_ms": round(first_ms, 1),
        "first_lookup_entries": len(first.entries),
        "hover_median_ms": round(statistics.median(hover_ms), 2),
        "hover_p95_ms": round(hover_ms[int(0.95 * (len(hover_ms) - 1))], 2),
        "hover_max_ms": round(hover_ms[-1], 2),
        "hovers": len(hover_ms),
        "furigana_line_ms": round(statistics.median(furigana_ms), 2),
        "pathological_max_ms": round(worst_ms, 2),  # the slowest lookup in PATHOLOGICAL
        "pathological_worst": worst,
        "pathological_furigana_max_ms": round(worst_furigana_ms, 2),  # the whole text's furigana
        "pathological_furigana_worst": worst_furigana_text,
        "rss_added_mb": round(rss_mb() - rss_before, 1),
        "index_file": str(dictionary.index_file),
        "imported_dictionaries": len(enabled),  # Yomitan dictionaries taking part in the hovers
        "imported_terms": sum(d.terms for d in enabled),
    }


def main(args) -> int:
    from app.dictionary.lookup import DictionaryUnavailable

    try:
        report = run(getattr(args, "runs", 5) or 5)
    except DictionaryUnavailable as exc:
        print(f"hayai bench --dictionary: {exc}", file=sys.stderr)
        return 1
    if getattr(args, "json", False):
        print(json.dumps(report))
        return 0
    if report["index_build_s"] is not None:
        print(f"index built first:   {report['index_build_s']} s (once per machine)")
    print(f"first lookup:        {report['first_lookup_ms']} ms")
    print(
        f"per hover:           median {report['hover_median_ms']} ms, p95 {report['hover_p95_ms']} ms, "
        f"max {report['hover_max_ms']} ms over {report['hovers']} hovers"
    )
    print(f"furigana per line:   {report['furigana_line_ms']} ms (median)")
    print(
        f"pathological text:   max {report['pathological_max_ms']} ms "
        f"({report['pathological_worst']})"
    )
    print(
        f"pathological furigana: max {report['pathological_furigana_max_ms']} ms "
        f"({report['pathological_furigana_worst']})"
    )
    print(f"memory added (RSS):  {report['rss_added_mb']} MB")
    if report["imported_dictionaries"]:
        print(
            f"imported:            {report['imported_dictionaries']} dictionaries "
            f"({report['imported_terms']:,} terms) take part"
        )
    return 0
