"""Conjugation fixtures: inflected form -> dictionary form and part of speech, through the real data.

Every rule family of the issue appears here: ichidan, each godan row, 来る/する and compounds,
i-adjectives, na-adjectives with the copula, polite forms, -te/-ta, -nai/-nakatta, -zu, potential,
passive, causative, causative-passive, volitional, imperative, -ba, -tara, -tai family, -sou,
-nagara, -chau/-jau, -te iru/-teru, -te aru, -te oku/-toku, -te shimau, -te morau/kureru/ageru and
the adjective -ku/-kute/-katta/-kunai/-sa/-kereba forms.
"""

from __future__ import annotations

import pytest

from app.dictionary.deinflect import RULES, agrees, deinflect

# (inflected form, dictionary form, POS code the entry must carry)
CASES = [
    # ichidan
    ("食べない", "食べる", "v1"),
    ("食べなかった", "食べる", "v1"),
    ("食べます", "食べる", "v1"),
    ("食べません", "食べる", "v1"),
    ("食べました", "食べる", "v1"),
    ("食べませんでした", "食べる", "v1"),
    ("食べましょう", "食べる", "v1"),
    ("食べまして", "食べる", "v1"),
    ("食べて", "食べる", "v1"),
    ("食べた", "食べる", "v1"),
    ("食べず", "食べる", "v1"),
    ("食べずに", "食べる", "v1"),
    ("食べられる", "食べる", "v1"),
    ("食べれる", "食べる", "v1"),
    ("食べさせる", "食べる", "v1"),
    ("食べさせられる", "食べる", "v1"),
    ("食べよう", "食べる", "v1"),
    ("食べろ", "食べる", "v1"),
    ("食べれば", "食べる", "v1"),
    ("食べたら", "食べる", "v1"),
    ("食べたり", "食べる", "v1"),
    ("食べたい", "食べる", "v1"),
    ("食べたくない", "食べる", "v1"),
    ("食べたかった", "食べる", "v1"),
    ("食べたくなかった", "食べる", "v1"),
    ("食べそう", "食べる", "v1"),
    ("食べそうだ", "食べる", "v1"),
    ("食べながら", "食べる", "v1"),
    ("食べちゃう", "食べる", "v1"),
    ("食べちゃった", "食べる", "v1"),
    ("食べている", "食べる", "v1"),
    ("食べてる", "食べる", "v1"),
    ("食べていた", "食べる", "v1"),
    ("食べています", "食べる", "v1"),
    ("食べておく", "食べる", "v1"),
    ("食べとく", "食べる", "v1"),
    ("食べてしまう", "食べる", "v1"),
    ("食べてしまった", "食べる", "v1"),
    ("食べてもらう", "食べる", "v1"),
    ("食べてくれる", "食べる", "v1"),
    ("食べてあげる", "食べる", "v1"),
    ("食べられなかった", "食べる", "v1"),
    ("食べなければ", "食べる", "v1"),
    ("食べなくて", "食べる", "v1"),
    ("見ない", "見る", "v1"),
    ("見た", "見る", "v1"),
    ("見られる", "見る", "v1"),
    ("起きて", "起きる", "v1"),
    ("教えてもらった", "教える", "v1"),
    ("寝すぎる", "寝る", "v1"),
    # godan -ku
    ("書かない", "書く", "v5k"),
    ("書きます", "書く", "v5k"),
    ("書いて", "書く", "v5k"),
    ("書いた", "書く", "v5k"),
    ("書ける", "書く", "v5k"),
    ("書かれる", "書く", "v5k"),
    ("書かせる", "書く", "v5k"),
    ("書かされる", "書く", "v5k"),
    ("書かせられる", "書く", "v5k"),
    ("書こう", "書く", "v5k"),
    ("書け", "書く", "v5k"),
    ("書けば", "書く", "v5k"),
    ("書いたら", "書く", "v5k"),
    ("書きたい", "書く", "v5k"),
    ("書きながら", "書く", "v5k"),
    ("書いちゃう", "書く", "v5k"),
    ("書いてある", "書く", "v5k"),
    ("書いておく", "書く", "v5k"),
    ("書いとく", "書く", "v5k"),
    ("書かず", "書く", "v5k"),
    ("書かなかった", "書く", "v5k"),
    ("書きそう", "書く", "v5k"),
    # godan -gu
    ("泳いで", "泳ぐ", "v5g"),
    ("泳いだ", "泳ぐ", "v5g"),
    ("泳がない", "泳ぐ", "v5g"),
    ("泳げる", "泳ぐ", "v5g"),
    ("泳ぎます", "泳ぐ", "v5g"),
    ("泳いじゃう", "泳ぐ", "v5g"),
    ("泳いでいる", "泳ぐ", "v5g"),
    # godan -su
    ("話して", "話す", "v5s"),
    ("話した", "話す", "v5s"),
    ("話さない", "話す", "v5s"),
    ("話せる", "話す", "v5s"),
    ("話します", "話す", "v5s"),
    ("話させる", "話す", "v5s"),
    ("話そう", "話す", "v5s"),
    # godan -tsu
    ("待って", "待つ", "v5t"),
    ("待った", "待つ", "v5t"),
    ("待たない", "待つ", "v5t"),
    ("待てる", "待つ", "v5t"),
    ("待ちます", "待つ", "v5t"),
    ("待とう", "待つ", "v5t"),
    ("待て", "待つ", "v5t"),
    ("待たされる", "待つ", "v5t"),
    ("待ってて", "待つ", "v5t"),
    # godan -nu
    ("死んで", "死ぬ", "v5n"),
    ("死んだ", "死ぬ", "v5n"),
    ("死なない", "死ぬ", "v5n"),
    ("死ねば", "死ぬ", "v5n"),
    ("死にます", "死ぬ", "v5n"),
    # godan -bu
    ("遊んで", "遊ぶ", "v5b"),
    ("遊んだ", "遊ぶ", "v5b"),
    ("遊ばない", "遊ぶ", "v5b"),
    ("遊べる", "遊ぶ", "v5b"),
    ("遊びます", "遊ぶ", "v5b"),
    ("遊ぼう", "遊ぶ", "v5b"),
    ("遊んでる", "遊ぶ", "v5b"),
    # godan -mu
    ("読んで", "読む", "v5m"),
    ("読んだ", "読む", "v5m"),
    ("読まない", "読む", "v5m"),
    ("読める", "読む", "v5m"),
    ("読まれる", "読む", "v5m"),
    ("読みます", "読む", "v5m"),
    ("読もう", "読む", "v5m"),
    ("読んじゃった", "読む", "v5m"),
    ("読んでおく", "読む", "v5m"),
    ("読んどく", "読む", "v5m"),
    ("読めば", "読む", "v5m"),
    ("読みたい", "読む", "v5m"),
    ("読んでいた", "読む", "v5m"),
    # godan -ru
    ("取って", "取る", "v5r"),
    ("取った", "取る", "v5r"),
    ("取らない", "取る", "v5r"),
    ("取れる", "取る", "v5r"),
    ("取られる", "取る", "v5r"),
    ("取ります", "取る", "v5r"),
    ("取ろう", "取る", "v5r"),
    ("取れ", "取る", "v5r"),
    ("取れば", "取る", "v5r"),
    # godan -u
    ("買って", "買う", "v5u"),
    ("買った", "買う", "v5u"),
    ("買わない", "買う", "v5u"),
    ("買える", "買う", "v5u"),
    ("買われる", "買う", "v5u"),
    ("買います", "買う", "v5u"),
    ("買おう", "買う", "v5u"),
    ("買えば", "買う", "v5u"),
    ("買わせる", "買う", "v5u"),
    ("買ってもらう", "買う", "v5u"),
    ("買ってあげる", "買う", "v5u"),
    ("買ってくれる", "買う", "v5u"),
    ("買ってくれた", "買う", "v5u"),
    # irregular godan
    ("行って", "行く", "v5k-s"),
    ("行った", "行く", "v5k-s"),
    ("行かない", "行く", "v5k-s"),
    ("行きます", "行く", "v5k-s"),
    ("行ける", "行く", "v5k-s"),
    ("行こう", "行く", "v5k-s"),
    ("くださいます", "くださる", "v5aru"),
    ("くださらない", "くださる", "v5aru"),
    ("あった", "ある", "v5r-i"),
    ("あります", "ある", "v5r-i"),
    # する and compounds
    ("しない", "する", "vs-i"),
    ("した", "する", "vs-i"),
    ("して", "する", "vs-i"),
    ("します", "する", "vs-i"),
    ("しません", "する", "vs-i"),
    ("しました", "する", "vs-i"),
    ("される", "する", "vs-i"),
    ("させる", "する", "vs-i"),
    ("させられる", "する", "vs-i"),
    ("しよう", "する", "vs-i"),
    ("しろ", "する", "vs-i"),
    ("すれば", "する", "vs-i"),
    ("したい", "する", "vs-i"),
    ("しながら", "する", "vs-i"),
    ("せず", "する", "vs-i"),
    ("しちゃう", "する", "vs-i"),
    ("勉強した", "勉強", "vs"),
    ("勉強します", "勉強", "vs"),
    ("勉強しない", "勉強", "vs"),
    ("勉強している", "勉強", "vs"),
    ("勉強させる", "勉強", "vs"),
    ("勉強できる", "勉強", "vs"),
    ("勉強しませんでした", "勉強", "vs"),
    ("愛した", "愛する", "vs-s"),
    ("愛している", "愛する", "vs-s"),
    # 来る in kanji and kana
    ("来ない", "来る", "vk"),
    ("来た", "来る", "vk"),
    ("来て", "来る", "vk"),
    ("来ます", "来る", "vk"),
    ("来られる", "来る", "vk"),
    ("来させる", "来る", "vk"),
    ("来よう", "来る", "vk"),
    ("来い", "来る", "vk"),
    ("来れば", "来る", "vk"),
    ("こない", "くる", "vk"),
    ("きた", "くる", "vk"),
    ("きて", "くる", "vk"),
    ("きます", "くる", "vk"),
    ("こよう", "くる", "vk"),
    ("こなかった", "くる", "vk"),
    # i-adjectives
    ("高く", "高い", "adj-i"),
    ("高くて", "高い", "adj-i"),
    ("高かった", "高い", "adj-i"),
    ("高くない", "高い", "adj-i"),
    ("高くなかった", "高い", "adj-i"),
    ("高さ", "高い", "adj-i"),
    ("高ければ", "高い", "adj-i"),
    ("高かったら", "高い", "adj-i"),
    ("高そう", "高い", "adj-i"),
    ("高すぎる", "高い", "adj-i"),
    ("高くありません", "高い", "adj-i"),
    ("高くなった", "高い", "adj-i"),
    ("よかった", "よい", "adj-i"),
    ("よくない", "よい", "adj-i"),
    ("よさそう", "よい", "adj-i"),
    ("美しかった", "美しい", "adj-i"),
    ("寒くて", "寒い", "adj-i"),
    # na-adjectives with the copula
    ("静かだ", "静か", "adj-na"),
    ("静かだった", "静か", "adj-na"),
    ("静かで", "静か", "adj-na"),
    ("静かじゃない", "静か", "adj-na"),
    ("静かではない", "静か", "adj-na"),
    ("静かじゃなかった", "静か", "adj-na"),
    ("静かです", "静か", "adj-na"),
    ("静かでした", "静か", "adj-na"),
    ("静かな", "静か", "adj-na"),
    ("静かに", "静か", "adj-na"),
    ("静かなら", "静か", "adj-na"),
    ("静かじゃありません", "静か", "adj-na"),
    ("きれいだった", "きれい", "adj-na"),
]


def test_enough_cases():
    assert len(CASES) >= 150
    assert len(RULES) > 200


@pytest.mark.parametrize(("form", "base", "pos"), CASES, ids=[c[0] for c in CASES])
def test_rule_table_reaches_the_dictionary_form(form, base, pos):
    # GIVEN an inflected form, WHEN deinflected (no data), THEN the base appears with a type that fits pos
    cands = [c for c in deinflect(form) if c.text == base and agrees(c, {pos})]
    assert cands, f"{form} does not deinflect to {base} ({pos})"
    assert cands[0].steps, "an inflected form must name at least one step"


@pytest.mark.parametrize(("form", "base", "pos"), CASES, ids=[c[0] for c in CASES])
def test_lookup_finds_the_entry(dictionary, form, base, pos):
    # GIVEN the real JMdict, WHEN the whole inflected form is looked up, THEN the entry is found over its full length
    result = dictionary.lookup(form)
    found = [
        e
        for e in result.entries
        if (e.headword == base or base in e.readings) and pos in e.pos and e.match == form
    ]
    assert found, (
        f"{form}: no {base} [{pos}] among {[(e.headword, e.pos, e.match) for e in result.entries]}"
    )
    assert result.match_len == len(form)


def test_chain_is_named_in_order(dictionary):
    entry = next(e for e in dictionary.lookup("食べられなかった").entries if e.headword == "食べる")
    assert entry.deinflection == ["passive/potential", "negative", "past"]


@pytest.mark.parametrize(
    ("form", "steps"),
    [
        ("書かされた", ["causative-passive", "past"]),
        ("勉強しませんでした", ["polite past negative"]),
        ("食べたくなかった", ["-tai (want to)", "negative", "past"]),
        ("読んでる", ["-teru (-te iru)"]),
        ("食べちゃった", ["-chau (-te shimau)", "past"]),
        ("高くなかった", ["negative", "past"]),
    ],
)
def test_named_steps(form, steps):
    assert any(list(c.steps) == steps for c in deinflect(form)), [c.steps for c in deinflect(form)]


def test_pos_must_agree(dictionary):
    # 来た must not be read as an ichidan "来る" and 入れる stays 入れる (0 steps) ahead of 入る (potential)
    assert not any(
        c.text == "来る"
        and agrees(c, {"v1"})
        and not agrees(c, {"vk"})
        and c.steps == ("past",)
        and "vk" in c.types
        for c in deinflect("来た")
    )
    first = dictionary.lookup("入れる").entries[0]
    assert first.headword == "入れる" and first.deinflection == []


def test_an_adjective_rule_does_not_apply_to_a_verb(dictionary):
    # 書く is a verb: "書かった" must not come back as an adjective past of 書い
    result = dictionary.lookup("書かった")
    assert all(e.match != "書かった" for e in result.entries)
