"""Deinflection families of issue #23 (the speech of manga and games: slang, dialect, old forms),
one table per family, each form checked through the rules and through a real lookup on JMdict.

The forms are written here from our own word lists with templates of the tests' own (not taken
from the rule tables or from another project's test data), so a family that is missing, or a step
that checks the wrong part of speech, fails.
"""

from __future__ import annotations

import pytest

from app.dictionary.deinflect import FAMILIES, agrees, deinflect

# -え slang: (adjective in kana, the kana its last two vowels fuse into before the long e)
E_SLANG_ADJECTIVES = [
    ("あまい", "あめ"),
    ("うすい", "うせ"),
    ("やすい", "やせ"),
    ("まずい", "まぜ"),
    ("ほそい", "ほせ"),
    ("くろい", "くれ"),
    ("しろい", "しれ"),
    ("かるい", "かれ"),
    ("ずるい", "ずれ"),
    ("あかい", "あけ"),
    ("ひくい", "ひけ"),
    ("ふかい", "ふけ"),
    ("にがい", "にげ"),
    ("おそい", "おせ"),
    ("つらい", "つれ"),
    ("ひろい", "ひれ"),
    ("せまい", "せめ"),
    ("さむい", "さめ"),
    ("ねむい", "ねめ"),
    ("こわい", "こうぇ"),
    ("よわい", "ようぇ"),
    ("つよい", "ついぇ"),
    ("ちっちゃい", "ちっちぇ"),
    ("あつい", "あちぇ"),
    ("かわいい", "かわえ"),
]
E_SLANG = (
    [(stem + tail, adj, "adj-i") for adj, stem in E_SLANG_ADJECTIVES for tail in ("え", "ぇ", "ー")]
    + [  # an emphatic っ doubles the consonant of the fused syllable
        ("すっげえ", "すごい", "adj-i"),
        ("たっけえ", "たかい", "adj-i"),
        ("やっべぇ", "やばい", "adj-i"),
        ("まっぜえ", "まずい", "adj-i"),
        ("あっめえ", "あまい", "adj-i"),
        ("でっけー", "でかい", "adj-i"),
    ]
    + [  # on the negative of verbs and adjectives
        ("知らねぇ", "知る", "v5r"),
        ("見ねえ", "見る", "v1"),
        ("わからねー", "わかる", "v5r"),
        ("高くねぇ", "高い", "adj-i"),
        ("できねぇ", "できる", "v1"),
    ]
)

# n-slang: ら, り, る, れ before an n- ending become ん
N_SLANG = [
    ("わかんない", "わかる", "v5r"),
    ("わかんねえ", "わかる", "v5r"),
    ("わかんなかった", "わかる", "v5r"),
    ("わかんなくて", "わかる", "v5r"),
    ("分かんねー", "分かる", "v5r"),
    ("止まんない", "止まる", "v5r"),
    ("帰んない", "帰る", "v5r"),
    ("入んなきゃ", "入る", "v5r"),
    ("やんなきゃ", "やる", "v5r"),
    ("乗んなさい", "乗る", "v5r"),
    ("座んなさい", "座る", "v5r"),
    ("帰んな", "帰る", "v5r"),
    ("すんな", "する", "vs-i"),
    ("くんない", "くれる", "v1"),
    ("くんなきゃ", "くれる", "v1"),
    ("食べらんない", "食べる", "v1"),
    ("見らんない", "見る", "v1"),
    ("寝らんねえ", "寝る", "v1"),
    ("来らんない", "来る", "vk"),
    ("信じらんない", "信じる", "v1"),
    ("忘れらんなかった", "忘れる", "v1"),
    ("いらんない", "いる", "v1"),
]

# Kansai-ben and old speech: the -u sound change of -u verbs and of i-adjectives
KANSAI = [
    (form + ending, verb, "v5u")
    for form, verb in (
        ("わろう", "わらう"),
        ("ならう", "ならう"),
        ("なろう", "ならう"),
        ("はろう", "はらう"),
        ("おう", "あう"),
        ("こう", "かう"),
        ("ゆう", "いう"),
        ("うとう", "うたう"),
        ("おもう", "おもう"),
        ("使う", "使う"),
    )
    for ending in ("て", "た", "たら", "たり")
] + [
    ("たこうない", "たかい", "adj-i"),
    ("高うない", "高い", "adj-i"),
    ("うれしゅうない", "うれしい", "adj-i"),
    ("よろしゅうない", "よろしい", "adj-i"),
    ("はよう", "はやい", "adj-i"),
    ("さむうて", "さむい", "adj-i"),
    ("おおきゅうて", "おおきい", "adj-i"),
    ("良うない", "良い", "adj-i"),
]

# する and くる written with kanji and in their short and old forms
SURU_KURU = [
    ("為させられる", "為る", "vs-i"),
    ("為せる", "為る", "vs-i"),
    ("為れる", "為る", "vs-i"),
    ("為させる", "為る", "vs-i"),
    ("為られる", "為る", "vs-i"),
    ("為んとする", "為る", "vs-i"),
    ("さします", "する", "vs-i"),
    ("ささない", "する", "vs-i"),
    ("さしたい", "する", "vs-i"),
    ("せさせる", "する", "vs-i"),
    ("せられる", "する", "vs-i"),
    ("せられない", "する", "vs-i"),
    ("せんばかり", "する", "vs-i"),
    ("せんとする", "する", "vs-i"),
    ("勉強させられる", "勉強", "vs"),
    ("出来ない", "する", "vs-i"),
    ("来にゃ", "来る", "vk"),
    ("こにゃ", "くる", "vk"),
    ("こんとする", "くる", "vk"),
    ("来んとした", "来る", "vk"),
    ("来んばかり", "来る", "vk"),
    ("來んばかり", "來る", "vk"),
    ("こさす", "くる", "vk"),
    ("来さします", "来る", "vk"),
    ("来ささない", "来る", "vk"),
    ("こさせられた", "くる", "vk"),
]

# -ずる verbs in their own old forms
ZURU = [
    (stem + ending, verb, "vz")
    for stem, verb in (("信", "信ずる"), ("感", "感ずる"), ("命", "命ずる"), ("禁", "禁ずる"))
    for ending in (
        "ぜねば",
        "ぜにゃ",
        "ぜず",
        "ぜん",
        "ぜんかった",
        "ぜんばかり",
        "ぜんとする",
        "ぜられる",
        "ぜられない",
        "ぜさせる",
        "ぜさす",
        "ぜささない",
        "ずりゃ",
        "ずるまい",
        "じされる",
        "ぜされない",
    )
]

# Continuative stems standing alone, and contracted conditionals of -u verbs
STEMS = [
    ("食べ", "食べる", "v1"),
    ("起き", "起きる", "v1"),
    ("考え", "考える", "v1"),
    ("忘れ", "忘れる", "v1"),
    ("調べ", "調べる", "v1"),
    ("買や", "買う", "v5u"),
    ("言や", "言う", "v5u"),
    ("会や", "会う", "v5u"),
    ("使や", "使う", "v5u"),
    ("買やあ", "買う", "v5u"),
]

# The rare polite chains on every verb class, and polite negatives of adjectives
POLITE = [
    (stem + ending, verb, pos)
    for stem, verb, pos in (
        ("書き", "書く", "v5k"),
        ("読み", "読む", "v5m"),
        ("食べ", "食べる", "v1"),
        ("し", "する", "vs-i"),
        ("来", "来る", "vk"),
        ("論じ", "論ずる", "vz"),
    )
    for ending in ("ますまい", "ますれば", "ませんかった")
] + [
    (adj[:-1] + ending, adj, "adj-i")
    for adj in ("高い", "寒い", "美しい", "悪い")
    for ending in ("くありませんでした", "くありませんかった")
]

# Uncommon -u verbs with the old -te/-ta, and combinations of the families above
RARE_AND_COMBINED = [
    ("たもうた", "たまう", "v5u"),
    ("たもうて", "たまう", "v5u"),
    ("のたもうた", "のたまう", "v5u"),
    ("たゆとうて", "たゆたう", "v5u"),
    ("たゆとうたり", "たゆたう", "v5u"),
    ("食べさせらんない", "食べる", "v1"),
    ("わかんなきゃ", "わかる", "v5r"),
    ("来らんねえ", "来る", "vk"),
    ("書かされたくありませんでした", "書く", "v5k"),
    ("言わんとしませんかった", "言う", "v5u"),
    ("ゆうてたら", "いう", "v5u"),
    ("わかんなかったら", "わかる", "v5r"),
]

SPEECH = {
    "-え slang": E_SLANG,
    "n-slang": N_SLANG,
    "Kansai-ben": KANSAI,
    "する and くる in kanji and short forms": SURU_KURU,
    "-ずる verbs": ZURU,
    "continuative and contracted stems": STEMS,
    "rare polite chains": POLITE,
    "uncommon verbs and combinations": RARE_AND_COMBINED,
}

# Not forms: never offered as the irregular verb or through a short causative's passive
NOT_FORMS = [
    ("すれる", "する", "vs-i"),
    ("すれない", "する", "vs-i"),
    ("すられる", "する", "vs-i"),
    ("くられる", "くる", "vk"),
    ("くらない", "くる", "vk"),
    ("さされる", "する", "vs-i"),
    ("為される", "為る", "vs-i"),
    ("食べさされる", "食べる", "v1"),
    ("話さされる", "話す", "v5s"),
    ("こさされる", "くる", "vk"),
    ("来さされる", "来る", "vk"),
    ("信ぜさされる", "信ずる", "vz"),
    ("行いたら", "行く", "v5k-s"),
]


def _is(entry, base: str, pos: str, form: str) -> bool:
    return (
        (entry.headword == base or base in entry.readings)
        and pos in entry.pos
        and (entry.match == form)
    )


def test_each_family_is_a_table_of_its_own():
    assert {
        "-え slang",
        "n-slang",
        "Kansai-ben and the -u sound change",
        "rare polite chains",
    } <= set(FAMILIES)
    for name, table in SPEECH.items():
        assert len(table) >= 10, name
        assert len({f for f, _b, _p in table}) == len(table), f"{name}: duplicates"


@pytest.mark.parametrize("family", list(SPEECH))
def test_rules_reach_the_dictionary_form(family):
    # GIVEN the family's forms, WHEN each is deinflected, THEN its base appears through named steps
    # with a type that agrees with the base's part of speech
    missing = [
        f"{form}→{base}"
        for form, base, pos in SPEECH[family]
        if not any(c.text == base and c.steps and agrees(c, {pos}) for c in deinflect(form))
    ]
    assert not missing, f"{len(missing)} of {len(SPEECH[family])}: {missing}"


@pytest.mark.parametrize("family", list(SPEECH))
def test_real_lookup_finds_the_entry_over_the_whole_form(dictionary, family):
    missing = [
        f"{form}→{base}"
        for form, base, pos in SPEECH[family]
        if not any(_is(e, base, pos, form) for e in dictionary.lookup(form).entries)
    ]
    assert not missing, f"{len(missing)} of {len(SPEECH[family])}: {missing}"


@pytest.mark.parametrize(("form", "base", "pos"), NOT_FORMS, ids=[f for f, _b, _p in NOT_FORMS])
def test_what_is_not_a_form_is_not_offered(dictionary, form, base, pos):
    assert not any(c.text == base and agrees(c, {pos}) and c.steps for c in deinflect(form))
    offered = [e for e in dictionary.lookup(form).entries if _is(e, base, pos, form)]
    assert not offered, [(e.headword, e.pos, e.deinflection) for e in offered]


def test_the_real_godan_suru_and_kuru_stay_reachable(dictionary):
    # すれる is no form of する, but it is the potential of 擦る/掏る (godan する); くられる the passive
    # of 繰る
    assert any(e.headword in ("擦る", "掏る") for e in dictionary.lookup("すれる").entries)
    assert any(e.headword == "繰る" for e in dictionary.lookup("くられる").entries)


def test_a_bare_stem_ranks_after_a_real_form(dictionary):
    # こい: the imperative of くる (a form) before 恋いる's bare stem (a guess); 食べ alone: 食べる,
    # named as a continuative
    entries = dictionary.lookup("こい").entries
    heads = [e.headword for e in entries]
    assert "来る" in heads
    if "恋いる" in heads:
        assert heads.index("来る") < heads.index("恋いる")
    taberu = next(e for e in dictionary.lookup("食べ").entries if e.headword == "食べる")
    assert taberu.deinflection == ["continuative"] and taberu.match == "食べ"


def test_chains_are_named(dictionary):
    steps = {
        e.headword: e.deinflection
        for e in dictionary.lookup("わかんねえ").entries
        if e.match == "わかんねえ"
    }
    assert steps["わかる"] == ["negative", "n-slang", "colloquial (-ee)"]
    entry = next(e for e in dictionary.lookup("こうた").entries if e.headword == "買う")
    assert entry.deinflection == ["past (Kansai)"]
