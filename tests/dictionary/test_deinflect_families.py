"""Deinflection families of issue #11, each from its own table of forms, through the rules and
through real lookups on the real JMdict index.

The forms are built here from verb and adjective lists with templates written for the tests (not
from the rule table), so a rule that is missing or checks the wrong part of speech fails.
"""

from __future__ import annotations

import pytest

from app.dictionary.deinflect import agrees, deinflect

# godan rows as the tests spell them: dictionary ending -> (a, i, e, o, -te, -ta)
ROWS = {
    "く": ("か", "き", "け", "こ", "いて", "いた"),
    "ぐ": ("が", "ぎ", "げ", "ご", "いで", "いだ"),
    "す": ("さ", "し", "せ", "そ", "して", "した"),
    "つ": ("た", "ち", "て", "と", "って", "った"),
    "ぬ": ("な", "に", "ね", "の", "んで", "んだ"),
    "ぶ": ("ば", "び", "べ", "ぼ", "んで", "んだ"),
    "む": ("ま", "み", "め", "も", "んで", "んだ"),
    "る": ("ら", "り", "れ", "ろ", "って", "った"),
    "う": ("わ", "い", "え", "お", "って", "った"),
}
GODAN = [
    ("書く", "v5k"),
    ("聞く", "v5k"),
    ("泳ぐ", "v5g"),
    ("急ぐ", "v5g"),
    ("話す", "v5s"),
    ("出す", "v5s"),
    ("待つ", "v5t"),
    ("持つ", "v5t"),
    ("死ぬ", "v5n"),
    ("遊ぶ", "v5b"),
    ("呼ぶ", "v5b"),
    ("読む", "v5m"),
    ("飲む", "v5m"),
    ("取る", "v5r"),
    ("作る", "v5r"),
    ("買う", "v5u"),
    ("使う", "v5u"),
]
ICHIDAN = ["食べる", "見る", "起きる", "教える", "寝る", "考える", "忘れる", "始める", "調べる"]
ADJECTIVES = ["高い", "寒い", "美しい", "強い", "悪い", "楽しい", "早い", "痛い", "難しい"]


def godan(template: str) -> list[tuple[str, str, str]]:
    """`template` with {a} {i} {e} {o} {te} {ta} {u} filled per verb (the stem goes in front);
    {to}, {cha}, {chi}: the -te ending contracted (書いと-, 読んど-, 書いちゃ, 読んじゃ, 書いち-)."""
    out = []
    for verb, pos in GODAN:
        stem, u = verb[:-1], verb[-1]
        a, i, e, o, te, ta = ROWS[u]
        to = te[:-1] + ("と" if te[-1] == "て" else "ど")  # -toku / -doku
        cha = te[:-1] + ("ちゃ" if te[-1] == "て" else "じゃ")
        chi = te[:-1] + ("ち" if te[-1] == "て" else "じ")
        form = template.format(a=a, i=i, e=e, o=o, te=te, ta=ta, u=u, to=to, cha=cha, chi=chi)
        out.append((stem + form, verb, pos))
    return out


def ichidan(template: str) -> list[tuple[str, str, str]]:
    return [(verb[:-1] + template, verb, "v1") for verb in ICHIDAN]


def adjective(template: str) -> list[tuple[str, str, str]]:
    return [(adj[:-1] + template, adj, "adj-i") for adj in ADJECTIVES]


def both(godan_template: str, ichidan_template: str) -> list[tuple[str, str, str]]:
    return godan(godan_template) + ichidan(ichidan_template)


# ------------------------------------------------------------------------------------ the tables

CONTRACTED = (
    both("{te}る", "てる")
    + both("{te}た", "てた")
    + both("{to}る", "とる")
    + both("{to}った", "とった")
    + both("{to}く", "とく")
    + both("{to}いた", "といた")
    + both("{te}く", "てく")
    + both("{a}ないどく", "ないどく")
    + both("{a}ないでおく", "ないでおく")
    + both("{cha}う", "ちゃう")
    + both("{cha}った", "ちゃった")
    + both("{chi}まう", "ちまう")
    + both("{chi}まった", "ちまった")
    + both("{cha}", "ちゃ")
    + both("{te}は", "ては")
    + both("{te}も", "ても")
    + both("{ta}って", "たって")
    + adjective("くたって")
    + adjective("くても")
    + both("{a}なきゃ", "なきゃ")
    + both("{a}なくちゃ", "なくちゃ")
    + both("{a}なけりゃ", "なけりゃ")
    + both("{a}にゃ", "にゃ")
    + ichidan("りゃ")
    + ichidan("りゃあ")
    + [(v[:-1] + ROWS[v[-1]][1] + "ゃ", v, p) for v, p in GODAN if v[-1] != "う"]
)

AUXILIARIES = (
    both("{i}過ぎる", "過ぎる")
    + both("{i}すぎる", "すぎる")
    + both("{i}すぎた", "すぎた")
    + both("{i}すぎ", "すぎ")
    + adjective("すぎ")
    + both("{o}うとする", "ようとする")
    + both("{o}うとした", "ようとした")
    + both("{i}そう", "そう")
    + both("{i}そうな", "そうな")
    + both("{i}たがる", "たがる")
    + both("{i}たがっている", "たがっている")
    + both("{i}なさい", "なさい")
    + both("{ta}り", "たり")
    + both("{ta}ら", "たら")
    + both("{a}なかったら", "なかったら")
    + both("{a}なかったり", "なかったり")
    + both("{i}ます", "ます")
    + both("{i}ませんでした", "ませんでした")
    + both("{i}ましょう", "ましょう")
    + both("{i}ましたら", "ましたら")
    + both("{o}う", "よう")
    + both("{o}うか", "ようか")
    + both("{o}っか", "よっか")
    + both("{i}ましょっか", "ましょっか")
    + adjective("げ")
    + adjective("気")
    + adjective("さ")
    + adjective("き")
    + adjective("がる")
    + adjective("がった")
    + adjective("すぎる")
    + adjective("過ぎる")
    + adjective("そう")
    + adjective("かったら")
    + adjective("かったり")
    + adjective("くなかったら")
)

LITERARY = (
    both("{a}ぬ", "ぬ")
    + both("{a}ん", "ん")
    + both("{a}んかった", "んかった")
    + both("{a}ず", "ず")
    + both("{a}ずに", "ずに")
    + both("{a}ざる", "ざる")
    + both("{a}ねば", "ねば")
    + both("{u}まい", "まい")
    + both("{a}んばかり", "んばかり")
    + both("{a}んとする", "んとする")
    + both("{a}んとした", "んとした")
    + both("{i}やがる", "やがる")
    + both("{i}やがった", "やがった")
    + both("{i}やがって", "やがって")
    + both("{i}やがらない", "やがらない")
    + both("{i}やがれ", "やがれ")
    + ichidan("まい")
    + [
        ("せぬ", "する", "vs-i"),
        ("せず", "する", "vs-i"),
        ("せねば", "する", "vs-i"),
        ("するまい", "する", "vs-i"),
        ("すまい", "する", "vs-i"),
        ("勉強せぬ", "勉強", "vs"),
        ("勉強せん", "勉強", "vs"),
        ("勉強せねば", "勉強", "vs"),
        ("来ぬ", "来る", "vk"),
        ("来ん", "来る", "vk"),
        ("来んかった", "来る", "vk"),
        ("こぬ", "くる", "vk"),
        ("こねば", "くる", "vk"),
        ("来まい", "来る", "vk"),
        ("くるまい", "くる", "vk"),
    ]
)

# kana adjectives for the colloquial vowel changes (-ai/-oi -> -ee, -ui -> -ii), spelled here
KANA_ADJECTIVES = [
    "たかい",
    "いたい",
    "うまい",
    "やばい",
    "すごい",
    "ひどい",
    "うるさい",
    "きたない",
    "あぶない",
    "おもしろい",
    "くさい",
    "でかい",
    "うざい",
    "あまい",
    "ながい",
    "つめたい",
    "ださい",
    "さむい",
    "あつい",
    "ねむい",
    "かるい",
    "わるい",
    "ぬるい",
    "ずるい",
    "まるい",
    "せまい",
    "うすい",
]
_E_ROW = dict(
    zip(
        "かがさざただなばまらこごそぞとどのぼもろ",
        "けげせぜてでねべめれけげせぜてでねべめれ",
        strict=True,
    )
)
_I_ROW = dict(zip("くぐすつぬぶむる", "きぎしちにびみり", strict=True))


def colloquial(adjective: str) -> list[tuple[str, str, str]]:
    """すごい -> すげえ, すげー, すげぇ; さむい -> さみい, さみー."""
    stem, last = adjective[:-2], adjective[-2]
    if last in _E_ROW:
        return [(stem + _E_ROW[last] + tail, adjective, "adj-i") for tail in ("え", "ー", "ぇ")]
    return [(stem + _I_ROW[last] + tail, adjective, "adj-i") for tail in ("い", "ー")]


# colloquial vowel changes: (form, dictionary form, pos)
COLLOQUIAL = (
    [
        ("すげえ", "すごい", "adj-i"),
        ("すげー", "すごい", "adj-i"),
        ("うめえ", "うまい", "adj-i"),
        ("うめー", "うまい", "adj-i"),
        ("やべえ", "やばい", "adj-i"),
        ("やべぇ", "やばい", "adj-i"),
        ("いてえ", "いたい", "adj-i"),
        ("痛え", "痛い", "adj-i"),
        ("凄え", "凄い", "adj-i"),
        ("ねえ", "ない", "adj-i"),
        ("うるせえ", "うるさい", "adj-i"),
        ("きたねえ", "きたない", "adj-i"),
        ("つえー", "つよい", "adj-i"),
        ("わりい", "わるい", "adj-i"),
        ("さみい", "さむい", "adj-i"),
        ("あちい", "あつい", "adj-i"),
        ("あぶねえ", "あぶない", "adj-i"),
        ("しねえ", "する", "vs-i"),
        ("こねえ", "くる", "vk"),
        ("勉強しねえ", "勉強", "vs"),
    ]
    + [form for adjective in KANA_ADJECTIVES for form in colloquial(adjective)]
    + both("{a}ねえ", "ねえ")
    + both("{a}ねー", "ねー")
    + both("{a}ねぇ", "ねぇ")
    + adjective("くねえ")
)

KANSAI = (
    both("{a}へん", "へん")
    + both("{e}へん", "ひん")
    + both("{a}へんかった", "へんかった")
    + both("{a}へんかったら", "へんかったら")
    + both("{a}へんかったり", "へんかったり")
    + both("{e}へんかった", "ひんかった")
    + adjective("うて")
    + adjective("う")
    + [
        ("せえへん", "する", "vs-i"),
        ("しいひん", "する", "vs-i"),
        ("勉強せえへん", "勉強", "vs"),
        ("こおへん", "くる", "vk"),
        ("けえへん", "くる", "vk"),
        ("きいひん", "くる", "vk"),
        ("来おへん", "来る", "vk"),
        ("たこうて", "たかい", "adj-i"),
        ("さむうて", "さむい", "adj-i"),
        ("おいしゅう", "おいしい", "adj-i"),
        ("うれしゅうて", "うれしい", "adj-i"),
        ("ありがとう", "ありがたい", "adj-i"),
        ("買うた", "買う", "v5u"),
        ("買うて", "買う", "v5u"),
        ("言うた", "言う", "v5u"),
        ("使うたら", "使う", "v5u"),
    ]
)

_SURU = [
    ("し", "ます"),
    ("し", "ない"),
    ("し", "た"),
    ("し", "て"),
    ("し", "ている"),
    ("し", "ません"),
    ("し", "ませんでした"),
    ("し", "よう"),
    ("し", "ろ"),
    ("し", "たら"),
    ("し", "たり"),
    ("し", "たい"),
    ("し", "ちゃった"),
    ("し", "なかった"),
    ("す", "れば"),
    ("さ", "せる"),
    ("さ", "れる"),
    ("せ", "ず"),
    ("せ", "ぬ"),
    ("し", "ながら"),
]
_KURU = [  # (kana stem, suffix)
    ("き", "ます"),
    ("こ", "ない"),
    ("き", "た"),
    ("き", "て"),
    ("き", "ている"),
    ("き", "ました"),
    ("こ", "よう"),
    ("こ", "い"),
    ("く", "れば"),
    ("こ", "られる"),
    ("こ", "させる"),
    ("き", "たら"),
    ("き", "たり"),
    ("こ", "なかった"),
    ("き", "たい"),
]
IRREGULAR = (
    [(k + s, "する", "vs-i") for k, s in _SURU]
    + [("為" + s, "為る", "vs-i") for _k, s in _SURU]
    + [("勉強" + k + s, "勉強", "vs") for k, s in _SURU]
    + [(k + s, "くる", "vk") for k, s in _KURU]
    + [("来" + s, "来る", "vk") for _k, s in _KURU if s != "れば"]
    + [("來" + s, "來る", "vk") for _k, s in _KURU if s != "れば"]
    + [("来れば", "来る", "vk"), ("來れば", "來る", "vk")]
    + [
        (stem + s, verb, pos)
        for stem, verb, pos in (("論じ", "論ずる", "vz"), ("論じ", "論じる", "v1"))
        for s in ("ます", "ない", "た", "て", "ている", "られる", "させる", "よう", "ろ", "れば")
    ]
    + [
        ("論ずれば", "論ずる", "vz"),
        ("論ぜず", "論ずる", "vz"),
        ("論ぜよ", "論ずる", "vz"),
        ("論ずれば", "論じる", "v1"),
        ("感じます", "感ずる", "vz"),
        ("感ずれば", "感じる", "v1"),
        ("信じない", "信ずる", "vz"),
    ]
    + [
        (verb[:-1] + s, verb, "v4" if verb == "ござる" else "v5aru")  # JMdict: ござる is yodan
        for verb in ("いらっしゃる", "おっしゃる", "くださる", "なさる", "ござる")
        for s in ("います", "いました", "いません", "いませ", "った", "って", "らない")
    ]
    + [("いらっしゃい", "いらっしゃる", "v5aru"), ("ください", "くださる", "v5aru")]
    + [
        ("行って", "行く", "v5k-s"),
        ("行った", "行く", "v5k-s"),
        ("行ったら", "行く", "v5k-s"),
        ("行ってる", "行く", "v5k-s"),
        ("行っちゃった", "行く", "v5k-s"),
        ("いって", "いく", "v5k-s"),
    ]
)

FAMILIES = {
    "contracted auxiliaries": CONTRACTED,
    "-sugiru, -sou, -garu, -ge, -nasai, -tari/-tara, -masu, volitional": AUXILIARIES,
    "literary negatives, conjecture, -yagaru": LITERARY,
    "colloquial -ee": COLLOQUIAL,
    "kansai-ben": KANSAI,
    "irregular verbs in every written form": IRREGULAR,
}

# What is not a form: never offered as する/くる (the verbs themselves, not homophones like 擦る)
NOT_FORMS = [
    ("すれる", "する", "vs-i"),
    ("すれない", "する", "vs-i"),
    ("すれた", "する", "vs-i"),
    ("くられる", "くる", "vk"),
    ("くらない", "くる", "vk"),
    ("きない", "くる", "vk"),
    ("くれる", "くる", "vk"),
    ("しる", "する", "vs-i"),
    ("すない", "する", "vs-i"),
]


def test_every_family_has_a_table_of_hundreds_of_forms():
    assert sum(len(t) for t in FAMILIES.values()) >= 1500
    for name, table in FAMILIES.items():
        assert len(table) >= 60, name
        assert len({f for f, _b, _p in table}) >= 0.9 * len(table), f"{name}: duplicates"


@pytest.mark.parametrize("family", list(FAMILIES))
def test_rules_reach_the_dictionary_form(family):
    # GIVEN the family's table, WHEN each form is deinflected, THEN its base appears with a type
    # that agrees with the base's part of speech, through at least one named step
    missing = []
    for form, base, pos in FAMILIES[family]:
        if not any(c.text == base and c.steps and agrees(c, {pos}) for c in deinflect(form)):
            missing.append(f"{form}→{base}")
    assert not missing, f"{len(missing)} of {len(FAMILIES[family])}: {missing[:30]}"


@pytest.mark.parametrize("family", list(FAMILIES))
def test_real_lookup_finds_the_entry_over_the_whole_form(dictionary, family):
    # GIVEN the real JMdict, WHEN the whole form is looked up, THEN an entry of the base with the
    # right part of speech covers all of it
    missing = []
    for form, base, pos in FAMILIES[family]:
        result = dictionary.lookup(form)
        if not any(
            (e.headword == base or base in e.readings) and pos in e.pos and e.match == form
            for e in result.entries
        ):
            missing.append(f"{form}→{base}")
    assert not missing, f"{len(missing)} of {len(FAMILIES[family])}: {missing[:30]}"


@pytest.mark.parametrize(("form", "base", "pos"), NOT_FORMS, ids=[f for f, _b, _p in NOT_FORMS])
def test_what_is_not_a_form_is_not_offered(dictionary, form, base, pos):
    assert not any(c.text == base and agrees(c, {pos}) and c.steps for c in deinflect(form))
    offered = [
        e
        for e in dictionary.lookup(form).entries
        if (e.headword == base or base in e.readings) and pos in e.pos and e.match == form
    ]
    assert not offered, [(e.headword, e.pos, e.deinflection) for e in offered]


@pytest.mark.parametrize(
    ("form", "base"),
    [
        ("行かなきゃ", "行く"),
        ("食べとる", "食べる"),
        ("食べちゃ", "食べる"),
        ("食べないどく", "食べる"),
        ("食べぬ", "食べる"),
        ("食べん", "食べる"),
        ("食べざる", "食べる"),
        ("食べねば", "食べる"),
        ("食べまい", "食べる"),
        ("食べよっか", "食べる"),
        ("食べやがった", "食べる"),
        ("食べなさい", "食べる"),
        ("食べたがる", "食べる"),
        ("愛しげ", "愛しい"),
        ("すげえ", "すごい"),
        ("食べへん", "食べる"),
        ("高うて", "高い"),
        ("為ます", "為る"),
        ("來た", "來る"),
        ("論じます", "論ずる"),
        ("食べねえ", "食べる"),
    ],
)
def test_the_examples_of_the_issue(dictionary, form, base):
    result = dictionary.lookup(form)
    assert result.match_len == len(form)
    assert any(e.headword == base and e.match == form for e in result.entries), [
        (e.headword, e.match) for e in result.entries
    ]


def test_a_lexicalised_entry_comes_first_and_the_verb_beside_it(dictionary):
    entries = dictionary.lookup("食べ過ぎる").entries
    assert entries[0].headword == "食べ過ぎる" and entries[0].deinflection == []
    assert entries[1].headword == "食べる" and entries[1].deinflection == ["too much"]
    entries = dictionary.lookup("愛し過ぎる").entries
    assert {e.headword for e in entries[:3]} >= {"愛する", "愛しい"}


def test_the_spelling_written_comes_before_its_zuru_twin(dictionary):
    # 論じます: the -jiru verb in one step, the -zuru verb in two
    entries = [e for e in dictionary.lookup("論じます").entries if e.match == "論じます"]
    assert [e.headword for e in entries[:2]] == ["論じる", "論ずる"]
    assert entries[0].deinflection == ["polite"]
    assert entries[1].deinflection == ["-zuru = -jiru", "polite"] or entries[1].deinflection == [
        "-jiru = -zuru",
        "polite",
    ]


def test_fewer_steps_rank_first_at_full_length(dictionary):
    # 行かなきゃ (two steps) stays behind nothing shorter; 取れる (0 steps) before 取る (potential)
    assert dictionary.lookup("行かなきゃ").entries[0].headword == "行く"
    first = dictionary.lookup("取れる").entries[0]
    assert first.headword == "取れる" and first.deinflection == []
