"""Ranking, normalisation, kanji info, Chinese, language choice, furigana, CLI output."""

from __future__ import annotations

import argparse
import json

import pytest

from app.dictionary import CREDITS
from app.dictionary.chinese import pinyin_with_marks, syllable_with_mark
from app.dictionary.text import choose_language, variants

ENTRY_KEYS = {"headword", "reading", "readings", "pos", "senses", "source", "match"}


# ------------------------------------------------------------------------------------------ ranking


def test_hon_is_read_hon_before_moto(dictionary):
    readings = [e.reading for e in dictionary.lookup("本").entries if e.source == "jmdict"]
    assert readings.index("ほん") < readings.index("もと")


@pytest.mark.parametrize("text", ["行った", "昨日学校に行った"])
def test_itta_is_iku_not_okonau(dictionary, text):
    start = text.index("行った")
    entries = dictionary.lookup(text, start).entries
    assert entries[0].headword == "行く" and entries[0].deinflection == ["past"]
    heads = [e.headword for e in entries]
    assert "行う" in heads and heads.index("行く") < heads.index("行う")


def test_a_lone_a_is_the_interjection(dictionary):
    # the analyser calls it an interjection (感動詞): "ah!" before the pronoun あ (あれ, "that"),
    # which has the same spelling and reading
    entries = dictionary.lookup("あ").entries
    assert entries[0].pos == ["int"] and "ah" in entries[0].senses[0].glosses
    assert any(e.pos == ["pn"] for e in entries[1:])


def test_longer_match_first(dictionary):
    result = dictionary.lookup("食べ物を買った")
    assert result.match_len == 3
    assert result.entries[0].headword == "食べ物"
    lengths = [len(e.match) for e in result.entries]
    assert lengths == sorted(lengths, reverse=True)


def test_fewer_steps_first_at_equal_length(dictionary):
    entries = [
        e for e in dictionary.lookup("食べられなかった").entries if e.match == "食べられなかった"
    ]
    steps = [len(e.deinflection) for e in entries]
    assert steps == sorted(steps)


def test_lookup_from_the_middle_of_a_line(dictionary):
    line = "昨日、本を読んでいた。"
    result = dictionary.lookup(line, line.index("読"))
    assert result.match_len == len("読んでいた")
    assert result.entries[0].headword == "読む"
    assert result.entries[0].deinflection == ["-te iru", "past"]


def test_punctuation_and_out_of_range_give_nothing(dictionary):
    assert dictionary.lookup("。、", 0).match_len == 0
    assert dictionary.lookup("本", 5).entries == []
    assert dictionary.lookup("", 0).entries == []


def test_names_come_after_words_of_the_same_length(dictionary):
    entries = dictionary.lookup("田中さん").entries
    assert (
        entries[0].source == "jmnedict" and entries[0].headword == "田中"
    )  # longer than the word 田
    entries = dictionary.lookup("本").entries
    sources = [e.source for e in entries]
    assert sources[0] == "jmdict" and "jmnedict" in sources
    assert sources.index("jmnedict") > max(i for i, s in enumerate(sources) if s == "jmdict")


# -------------------------------------------------------------------------------- width and kana


@pytest.mark.parametrize(
    ("text", "headword"),
    [
        ("ﾀﾍﾞﾙ", "食べる"),
        ("タベル", "食べる"),
        ("たべる", "食べる"),
        ("ｶﾞｯｺｳ", "学校"),
        ("がっこう", "学校"),
        ("すごーーい", "すごい"),
        ("時々", "時々"),
        ("ﾀﾍﾞﾗﾚﾅｶｯﾀ", "食べる"),
        ("コーヒー", "コーヒー"),
    ],
)
def test_width_and_kana_variants(dictionary, text, headword):
    result = dictionary.lookup(text)
    assert result.match_len == len(text)
    assert any(e.headword == headword for e in result.entries), [e.headword for e in result.entries]


def test_variants_cover_the_normalisations():
    assert "たべる" in variants("ﾀﾍﾞﾙ")
    assert "すごい" in variants("すごーーい")
    assert "時時" in variants("時々")
    assert "あっ" in variants("あっっっ")
    assert "ABC" in variants("ＡＢＣ")


def test_kana_lookup_shows_the_kanji_spelling_and_the_matched_reading(dictionary):
    entry = dictionary.lookup("たべる").entries[0]
    assert (entry.headword, entry.reading) == ("食べる", "たべる")
    uk = next(e for e in dictionary.lookup("する").entries if "vs-i" in e.pos)
    assert uk.headword == "する"  # "usually written in kana": the kana is the headword


# ------------------------------------------------------------------------------------------ kanji


def test_kanji_info(dictionary):
    entry = dictionary.lookup("食べる").entries[0]
    (info,) = entry.kanji
    assert info.char == "食" and info.strokes == 9 and info.grade == 2 and info.jlpt == 4
    assert "eat" in info.meanings and "ショク" in info.on and "た.べる" in info.kun
    two = dictionary.lookup("学校").entries[0]
    assert [k.char for k in two.kanji] == ["学", "校"]


# ---------------------------------------------------------------------------------------- Chinese


@pytest.mark.parametrize("text", ["中国人", "中國人"])
def test_chinese_in_both_scripts(dictionary, text):
    result = dictionary.lookup(text, lang="zh")
    first = result.entries[0]
    assert result.language == "zh" and result.match_len == 3
    assert (first.simplified, first.traditional) == ("中国人", "中國人")
    assert first.headword == text and first.pinyin == "Zhōng guó rén"
    assert first.to_json()["pinyin"] == "Zhōng guó rén"


def test_chinese_traditional_only_word(dictionary):
    first = dictionary.lookup("學習", lang="zh").entries[0]
    assert first.simplified == "学习" and first.pinyin == "xué xí"
    assert any("to learn" in s.glosses for s in first.senses)


@pytest.mark.parametrize(
    ("numbered", "marked"),
    [
        ("zhong1", "zhōng"),
        ("guo2", "guó"),
        ("hao3", "hǎo"),
        ("xie4", "xiè"),
        ("ma5", "ma"),
        ("lu:4", "lǜ"),
        ("nu:3", "nǚ"),
        ("gou3", "gǒu"),
        ("liu2", "liú"),
        ("gui4", "guì"),
        ("er2", "ér"),
        ("r5", "r"),
        ("Zhong1", "Zhōng"),
        ("xx5", "xx"),
    ],
)
def test_tone_marks(numbered, marked):
    assert syllable_with_mark(numbered) == marked


def test_tone_marks_keep_non_syllables():
    assert pinyin_with_marks("san1 C") == "sān C"


# -------------------------------------------------------------------------------------- languages


@pytest.mark.parametrize(
    ("text", "default", "lang"),
    [
        ("食べる", "zh", "ja"),
        ("カタカナ", "ja", "ja"),
        ("한국어", "ja", "ko"),
        ("中国", "ja", "ja"),
        ("中国", "zh", "zh"),
        ("我的中文", "zh", "zh"),
        ("abc", "ja", "ja"),
    ],
)
def test_choose_language(text, default, lang):
    assert choose_language(text, default) == lang


def test_han_only_follows_the_setting(dictionary_index):
    from app.dictionary import Dictionary

    zh = Dictionary(han_language="zh", index_file=dictionary_index)
    ja = Dictionary(han_language="ja", index_file=dictionary_index)
    try:
        assert (
            zh.lookup("学生").language == "zh" and zh.lookup("学生").entries[0].source == "cedict"
        )
        assert (
            ja.lookup("学生").language == "ja" and ja.lookup("学生").entries[0].source == "jmdict"
        )
        assert ja.lookup("学生", lang="zh").language == "zh"  # an explicit language wins
    finally:
        zh.close()
        ja.close()


def test_korean_without_a_dictionary_says_how_to_add_one(dictionary):
    result = dictionary.lookup("학교에 갔습니다")
    assert result.language == "ko" and result.entries == []
    assert "No Korean dictionary yet" in result.message and "Import" in result.message


def test_unknown_language_is_a_clear_error(dictionary):
    with pytest.raises(ValueError, match="unknown language"):
        dictionary.lookup("本", lang="fr")


# ------------------------------------------------------------------------- bounded work per lookup


def test_a_lookup_reads_only_the_text_around_the_pointer(dictionary, monkeypatch):
    from app.dictionary import bench, furigana, lookup
    from app.dictionary.text import CONTEXT

    # GIVEN counting wrappers on what reads the text: the language guess, each language's lookup
    # (normalisation, deinflection, the queries) and the morphological analyser
    read: list[int] = []

    def counting(function):
        def wrapper(*args):
            read.append(max(len(a) for a in args if isinstance(a, str)))
            return function(*args)

        return wrapper

    monkeypatch.setattr(lookup, "choose_language", counting(lookup.choose_language))
    monkeypatch.setattr(furigana, "analyse", counting(furigana.analyse))
    for language, function in list(lookup._LOOKUPS.items()):
        monkeypatch.setitem(lookup._LOOKUPS, language, counting(function))
    # WHEN every pathological text is looked up at its start, middle and end, in every language
    for text in bench.PATHOLOGICAL.values():
        for start in (0, len(text) // 2, len(text) - 1):
            for lang in lookup.LANGUAGES:
                read.clear()
                dictionary.lookup(text, start, lang)
                # THEN no step saw more than CONTEXT characters on each side of the pointer
                assert read and max(read) <= 2 * CONTEXT, (text[:5], start, lang, read)
    assert dictionary.lookup("た" + "\u0301" * 100_000).entries[0].match == "た"


def test_what_lies_beyond_the_context_changes_nothing(dictionary):
    from app.dictionary.text import CONTEXT

    line = "昨日、本を読んでいた。食べられなかったんだから仕方ないじゃん！"
    far = "。" * (3 * CONTEXT)
    for start in range(len(line)):
        plain = dictionary.lookup(line, start)
        padded = dictionary.lookup(far + line + far, len(far) + start)
        assert (padded.match_len, padded.language) == (plain.match_len, plain.language)
        assert [e.to_json() for e in padded.entries] == [e.to_json() for e in plain.entries]


def test_a_korean_word_is_at_most_max_match_long():
    from app.dictionary.korean import word_at
    from app.dictionary.text import MAX_MATCH

    assert word_at("학교에 갔습니다", 0) == "학교에"
    assert word_at("한" * 100_000, 5) == "한" * MAX_MATCH


# ------------------------------------------------------------------------------------------ furigana


def test_furigana_over_the_kanji_only(dictionary):
    pieces = dictionary.furigana("昨日、取り扱い説明書を読んだ。")
    assert "".join(s for s, _ in pieces) == "昨日、取り扱い説明書を読んだ。"
    assert ("昨日", "きのう") in pieces and ("扱", "あつか") in pieces and ("読", "よ") in pieces
    assert all(r is None for s, r in pieces if not any("\u4e00" <= c <= "\u9fff" for c in s))


def test_furigana_of_any_text_gives_the_analyser_bounded_pieces(dictionary, monkeypatch):
    from app.dictionary import bench, furigana

    # GIVEN a counting wrapper on the morphological analyser (the overlay asks for the furigana of
    # whatever it shows, on the GUI thread)
    read: list[int] = []

    def counting(text):
        read.append(len(text))
        return analyse(text)

    analyse = furigana.analyse
    monkeypatch.setattr(furigana, "analyse", counting)
    for text in bench.PATHOLOGICAL.values():
        read.clear()
        pieces = dictionary.furigana(text)
        # THEN it saw pieces of at most PIECE characters, FURIGANA_CHARS in all, and the pieces
        # still join back to the whole text (the rest without readings)
        assert read and max(read) <= furigana.PIECE, (text[:5], max(read))
        assert sum(read) <= furigana.FURIGANA_CHARS, (text[:5], sum(read))
        assert "".join(s for s, _ in pieces) == text
    # ... with readings over the start of a long text
    assert any(reading for _, reading in dictionary.furigana("日本語" * 50_000))


def test_furigana_of_a_text_in_pieces_is_that_of_the_whole(dictionary):
    from app.dictionary import bench, furigana

    # a text of several sentences, longer than a piece: cut after its sentences, read as a whole
    long = "".join(bench.SAMPLE_TEXT) * 3
    for text in [*bench.SAMPLE_TEXT, long, long.replace("。", "\n")]:
        assert dictionary.furigana(text) == furigana._furigana_of(text)


def test_furigana_never_reads_a_word_as_itself(dictionary):
    # 滅 alone is not in the analyser's dictionary: its "reading" would be 滅 itself
    pieces = dictionary.furigana("鬼滅の刃を読んだ")
    assert "".join(s for s, _ in pieces) == "鬼滅の刃を読んだ"
    assert ("鬼", "おに") in pieces and ("読", "よ") in pieces
    assert all(reading != surface for surface, reading in pieces), pieces


def test_furigana_keeps_spaces_and_latin(dictionary):
    pieces = dictionary.furigana("ABC  東京")
    assert "".join(s for s, _ in pieces) == "ABC  東京"
    assert ("東京", "とうきょう") in pieces


# --------------------------------------------------------------------------------------------- CLI


def _run_cli(capsys, text, lang="auto", as_json=True):
    from app.dictionary.cli import main

    code = main(argparse.Namespace(text=text, lang=lang, json=as_json))
    return code, capsys.readouterr()


def test_cli_json_schema(capsys, dictionary, dictionary_index, monkeypatch):
    monkeypatch.setattr("app.dictionary.index.index_path", lambda: dictionary_index)
    code, out = _run_cli(capsys, "食べられなかった")
    assert code == 0
    entries = json.loads(out.out)
    assert entries and entries[0]["headword"] == "食べられる"
    for e in entries:
        assert set(e) == ENTRY_KEYS | {"deinflection", "kanji"}
        assert all(set(s) == {"glosses", "pos"} for s in e["senses"])
        assert all(
            set(k) == {"char", "meanings", "on", "kun", "jlpt", "grade", "strokes"}
            for k in e["kanji"]
        )
    taberu = next(e for e in entries if e["headword"] == "食べる")
    assert taberu["deinflection"] == ["passive/potential", "negative", "past"]
    assert taberu["match"] == "食べられなかった" and taberu["source"] == "jmdict"


def test_cli_json_chinese_schema(capsys, dictionary_index, monkeypatch):
    monkeypatch.setattr("app.dictionary.index.index_path", lambda: dictionary_index)
    code, out = _run_cli(capsys, "中國人", lang="zh")
    entries = json.loads(out.out)
    assert code == 0 and set(entries[0]) == ENTRY_KEYS | {"pinyin", "simplified", "traditional"}


def test_cli_human_output_and_errors(capsys, dictionary_index, monkeypatch):
    monkeypatch.setattr("app.dictionary.index.index_path", lambda: dictionary_index)
    code, out = _run_cli(capsys, "食べられなかった", as_json=False)
    assert code == 0 and "食べられなかった ← 食べる: passive/potential · negative · past" in out.out
    code, out = _run_cli(capsys, "한국어", as_json=False)
    assert code == 0 and "No Korean dictionary yet" in out.out
    code, out = _run_cli(capsys, "   ", as_json=False)
    assert code == 2 and "empty" in out.err


def test_credits_name_the_licences():
    for name in (
        "JMdict",
        "JMnedict",
        "KANJIDIC2",
        "EDRDG",
        "CC-CEDICT",
        "UniDic",
        "Attribution-ShareAlike 4.0",
    ):
        assert name in CREDITS


def test_importing_is_cheap():
    import subprocess
    import sys

    code = (
        "import sys, app.dictionary; "
        "print(any(m in sys.modules for m in ('sqlite3', 'sudachipy', 'PySide6', 'app.dictionary.lookup')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_bench_reports_every_number(dictionary_index, monkeypatch, capsys):
    from app.dictionary import bench

    monkeypatch.setattr("app.dictionary.index.index_path", lambda: dictionary_index)
    assert bench.main(argparse.Namespace(json=True, runs=1)) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["index_build_s"] is None  # the index existed
    assert report["hovers"] == sum(len(line) for line in bench.SAMPLE_TEXT)
    assert 0 < report["hover_median_ms"] <= report["hover_p95_ms"] <= report["hover_max_ms"]
    assert report["first_lookup_ms"] > 0 and report["first_lookup_entries"] > 0
    assert report["rss_added_mb"] >= 0
    assert report["pathological_max_ms"] > 0 and report["pathological_worst"]
    assert report["pathological_furigana_max_ms"] > 0
    assert report["pathological_furigana_worst"] in bench.PATHOLOGICAL
    assert report["imported_dictionaries"] == 0 and report["imported_terms"] == 0


def test_prepare_warms_up_and_lookups_need_no_build(dictionary_index):
    from app.dictionary import Dictionary

    d = Dictionary(index_file=dictionary_index)
    try:
        d.prepare()
        assert d.is_ready()
        assert d.lookup("行った").entries[0].headword == "行く"
    finally:
        d.close()


def test_names_from_kana_only_when_written_in_katakana(dictionary):
    # GIVEN hiragana runs inside a sentence, THEN no JMnedict name is matched by its reading
    for text, start in (("そんなこと", 2), ("散歩しながら", 2), ("知らなかった", 1)):
        assert all(e.source != "jmnedict" for e in dictionary.lookup(text, start).entries), text
    assert any(
        e.source == "jmnedict" and e.headword == "トム"
        for e in dictionary.lookup("トムさん").entries
    )
