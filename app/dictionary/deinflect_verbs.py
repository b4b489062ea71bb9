"""The verb families of the deinflection rules, as data: each a table built from the grammar of the
family (a template per godan row, a stem per spelling of くる), never from lists of example words.
A family's rows are (inflected, base, takes, gives, name), expanded where the grammar is regular;
`VERB_FAMILIES` holds the rules of each, in the order the search tries them (app/dictionary/
deinflect.py)."""

from __future__ import annotations

from app.dictionary.deinflect_types import (
    ADJ_I,
    ADJ_NA,
    BA,
    HEN,
    IMP,
    MAI,
    MASU,
    NEG_N,
    RAW,
    SHORT_SASU,
    SHORT_SU,
    STEM_I,
    TA,
    TE,
    V1,
    VK,
    VS,
    VZ,
    Rule,
    rules,
    types,
)

# Godan rows: class -> (dictionary ending, a-stem, i-stem, e-stem, o-stem, -te, -ta)
GODAN = {
    "v5u": ("う", "わ", "い", "え", "お", "って", "った"),
    "v5k": ("く", "か", "き", "け", "こ", "いて", "いた"),
    "v5k-s": ("く", "か", "き", "け", "こ", "って", "った"),  # 行く: 行って, not 行いて
    "v5g": ("ぐ", "が", "ぎ", "げ", "ご", "いで", "いだ"),
    "v5s": ("す", "さ", "し", "せ", "そ", "して", "した"),
    "v5t": ("つ", "た", "ち", "て", "と", "って", "った"),
    "v5n": ("ぬ", "な", "に", "ね", "の", "んで", "んだ"),
    "v5b": ("ぶ", "ば", "び", "べ", "ぼ", "んで", "んだ"),
    "v5m": ("む", "ま", "み", "め", "も", "んで", "んだ"),
    "v5r": ("る", "ら", "り", "れ", "ろ", "って", "った"),
    "v5u-s": ("う", "わ", "い", "え", "お", "うて", "うた"),  # 問う: 問うて
    "v5aru": ("る", "ら", "い", "れ", "ろ", "って", "った"),  # くださる: ください, くださいます
}
# Which entry POS a godan row may stand for; v5k covers 行く except in -te/-ta (own row above).
GODAN_POS = {
    "v5k": types("v5k", "v5k-s"),
    "v5u": types("v5u", "v5u-s"),
    "v5s": types("v5s") | SHORT_SU | SHORT_SASU,  # a short causative conjugates as a -su verb
    "v5r": types("v5r", "v5r-i"),
    "v5aru": types("v5aru", "v4"),  # JMdict tags ござる as the archaic yodan "v4"
}

# Forms built on the continuative stem, which every verb shares: (ending, takes, name)
CONTINUATIVE = [
    ("ます", MASU, "polite"),
    ("ません", MASU, "polite negative"),
    ("ました", MASU, "polite past"),
    ("ませんでした", MASU, "polite past negative"),
    ("ましょう", MASU, "polite volitional"),
    ("ましょ", MASU, "polite volitional"),
    ("ましょうか", MASU, "polite volitional (-ka)"),
    ("ましょっか", MASU, "polite volitional (-ka)"),
    ("まして", MASU, "polite -te"),
    ("ませ", MASU, "polite imperative"),
    ("ましたら", MASU, "polite -tara"),
    ("ましたり", MASU, "polite -tari"),
    ("たい", ADJ_I, "-tai (want to)"),
    ("たがる", types("v5r"), "-tagaru (wants to)"),
    ("ながら", types("nagara"), "-nagara (while)"),
    ("そう", ADJ_NA, "-sou (looks like)"),
    ("すぎる", V1, "too much"),
    ("過ぎる", V1, "too much"),
    ("すぎ", types("n"), "too much (noun)"),
    ("過ぎ", types("n"), "too much (noun)"),
    ("なさい", IMP, "-nasai (polite imperative)"),
    ("やがる", types("v5r"), "-yagaru (contempt)"),
]

# The rare and old polite chains: ます has a -mai, a -ba and a colloquial negative past of its own
POLITE_CHAINS = [
    ("ますまい", MAI, "polite -mai (will not)"),
    ("ますれば", BA, "polite -ba (if)"),
    ("ませんかった", TA, "polite past negative"),
]

# Godan forms: (template on the row's stems, takes, name); {u} {a} {i} {e} {o} are the row's
# kana, {te} {ta} its -te and -ta endings. Rows v5k-s and v5u-s share all but -te/-ta with v5k/v5u.
GODAN_FORMS = [
    ("{a}ない", ADJ_I, "negative"),
    ("{a}ず", types("zu"), "-zu (without)"),
    ("{a}ずに", types("zu"), "-zu (without)"),
    ("{a}れる", V1, "passive"),
    ("{a}せる", V1, "causative"),
    ("{a}す", SHORT_SU, "short causative"),  # 書かす (話さす: see GODAN_SHORT_SASU)
    ("{a}される", V1, "causative-passive"),  # 書かされる: the short causative's passive
    ("{e}", IMP, "imperative"),
    ("{i}", STEM_I, None),
    ("{e}る", V1, "potential"),
    ("{e}ば", BA, "-ba (if)"),
    ("{o}う", types("vol"), "volitional"),
    ("{u}な", IMP, "negative imperative"),
    ("{a}ないで", TE, "-naide (without doing)"),  # 書かないで(おく)
    ("{a}ぬ", types("nu"), "-nu (classical negative)"),
    ("{a}ん", NEG_N, "-n (negative)"),
    ("{a}ざる", types("attr"), "-zaru (classical negative)"),
    ("{a}ねば", BA, "-neba (unless; must)"),
    ("{a}にゃ", BA, "-nya (-neba)"),
    ("{a}んばかり", types("n"), "-nbakari (as if about to)"),
    ("{a}んとする", VS, "-n to suru (about to)"),
    ("{u}まい", MAI, "-mai (will not; probably not)"),
    ("{o}うか", types("vol"), "volitional (-ka)"),
    ("{o}っか", types("vol"), "volitional (-kka)"),
    ("{a}へん", HEN, "negative (Kansai -hen)"),
    ("{e}へん", HEN, "negative (Kansai -hen)"),
    ("{i}ゃ", BA, "-ba (contracted)"),  # 書けば -> 書きゃ, 取れば -> 取りゃ
]
GODAN_TE_FORMS = [
    ("{te}", TE, "-te"),
    ("{ta}", TA, "past"),
    ("{ta}ら", types("tara"), "-tara (if/when)"),
    ("{ta}り", types("tari"), "-tari"),
]
# Where a row departs from the templates: (class, template) pairs left out, and rows' own forms
GODAN_LEFT_OUT = {
    ("v5s", "{a}される"),  # 話さされる would be the passive of a さす causative: no form
    ("v5s", "{a}す"),  # 話さす ends in さす: its own row below (no passive)
    ("v5u", "{i}ゃ"),  # 買えば contracts to 買や, not 買いゃ (below)
    ("v5aru", "{i}ゃ"),  # くだされば -> くださりゃ (below)
    ("v5aru", "{e}"),  # くださ|い is the imperative (below), not a silent stem
}
GODAN_OWN = [
    ("さす", "す", SHORT_SASU, types("v5s"), "short causative"),
    ("や", "う", BA, types("v5u", "v5u-s"), "-ba (contracted)"),  # 買えば -> 買や
    ("りゃ", "る", BA, types("v5aru", "v4"), "-ba (contracted)"),
    ("い", "る", IMP, types("v5aru", "v4"), "imperative"),
]

# Ichidan verbs: the stem is the dictionary form minus る (inflected ending, takes, name)
ICHIDAN = [
    ("", STEM_I, None),
    ("ない", ADJ_I, "negative"),
    ("ず", types("zu"), "-zu (without)"),
    ("ずに", types("zu"), "-zu (without)"),
    ("られる", V1, "passive/potential"),
    ("れる", V1, "potential (colloquial)"),  # ら-less: 食べれる
    ("させる", V1, "causative"),
    ("さす", SHORT_SASU, "short causative"),
    ("れば", BA, "-ba (if)"),
    ("よう", types("vol"), "volitional"),
    ("ろ", IMP, "imperative"),
    ("よ", IMP, "imperative"),
    ("るな", IMP, "negative imperative"),
    ("て", TE, "-te"),
    ("た", TA, "past"),
    ("たら", types("tara"), "-tara (if/when)"),
    ("たり", types("tari"), "-tari"),
    ("ないで", TE, "-naide (without doing)"),
    ("ぬ", types("nu"), "-nu (classical negative)"),
    ("ん", NEG_N, "-n (negative)"),
    ("ざる", types("attr"), "-zaru (classical negative)"),
    ("ねば", BA, "-neba (unless; must)"),
    ("にゃ", BA, "-nya (-neba)"),
    ("んばかり", types("n"), "-nbakari (as if about to)"),
    ("んとする", VS, "-n to suru (about to)"),
    ("まい", MAI, "-mai (will not; probably not)"),
    ("るまい", MAI, "-mai (will not; probably not)"),
    ("ようか", types("vol"), "volitional (-ka)"),
    ("よっか", types("vol"), "volitional (-kka)"),
    ("りゃ", BA, "-ba (contracted)"),
    ("へん", HEN, "negative (Kansai -hen)"),
    ("ひん", HEN, "negative (Kansai -hin)"),
]

# する and its compounds (勉強する, 愛する), in kana: (form, takes, name). Written with the kanji
# 為る, the kanji replaces the first kana (為ます, 為れる, 為せる, 為す), except in the Kansai forms.
SURU = [
    ("し", STEM_I, None),
    ("しない", ADJ_I, "negative"),
    ("せず", types("zu"), "-zu (without)"),
    ("せずに", types("zu"), "-zu (without)"),
    ("される", V1, "passive"),
    ("せられる", V1, "passive/potential (classical)"),
    ("させる", V1, "causative"),
    ("せさせる", V1, "causative"),
    ("さす", SHORT_SASU, "short causative"),
    ("させられる", V1, "causative-passive"),
    ("せさせられる", V1, "causative-passive"),
    ("できる", V1, "potential"),
    ("すれば", BA, "-ba (if)"),
    ("しよう", types("vol"), "volitional"),
    ("しろ", IMP, "imperative"),
    ("せよ", IMP, "imperative"),
    ("するな", IMP, "negative imperative"),
    ("して", TE, "-te"),
    ("した", TA, "past"),
    ("したら", types("tara"), "-tara (if/when)"),
    ("したり", types("tari"), "-tari"),
    ("しないで", TE, "-naide (without doing)"),
    ("せぬ", types("nu"), "-nu (classical negative)"),
    ("せん", NEG_N, "-n (negative)"),
    ("せざる", types("attr"), "-zaru (classical negative)"),
    ("せねば", BA, "-neba (unless; must)"),
    ("せにゃ", BA, "-nya (-neba)"),
    ("せんばかり", types("n"), "-nbakari (as if about to)"),
    ("せんとする", VS, "-n to suru (about to)"),
    ("するまい", MAI, "-mai (will not; probably not)"),
    ("すまい", MAI, "-mai (will not; probably not)"),
    ("しまい", MAI, "-mai (will not; probably not)"),
    ("しようか", types("vol"), "volitional (-ka)"),
    ("しよっか", types("vol"), "volitional (-kka)"),
    ("すりゃ", BA, "-ba (contracted)"),
]
SURU_KANSAI = [
    ("せえへん", HEN, "negative (Kansai -hen)"),
    ("せーへん", HEN, "negative (Kansai -hen)"),
    ("しいひん", HEN, "negative (Kansai -hin)"),
    ("しーひん", HEN, "negative (Kansai -hin)"),
]

# 来る: (form with the stems {i} き, {a} こ, {u} く of the reading, takes, name). Written with the
# kanji (来, or the old 來), the kanji stands for the stem whatever its reading: 来ない, 来ます, 来れば.
KURU = [
    ("{i}", STEM_I, None),
    ("{a}ない", ADJ_I, "negative"),
    ("{a}ず", types("zu"), "-zu (without)"),
    ("{a}ずに", types("zu"), "-zu (without)"),
    ("{a}られる", V1, "passive/potential"),
    ("{a}れる", V1, "potential (colloquial)"),
    ("{a}させる", V1, "causative"),
    ("{a}さす", SHORT_SASU, "short causative"),
    ("{a}させられる", V1, "causative-passive"),
    ("{u}れば", BA, "-ba (if)"),
    ("{u}りゃ", BA, "-ba (contracted)"),
    ("{a}よう", types("vol"), "volitional"),
    ("{a}ようか", types("vol"), "volitional (-ka)"),
    ("{a}よっか", types("vol"), "volitional (-kka)"),
    ("{a}い", IMP, "imperative"),
    ("{i}て", TE, "-te"),
    ("{i}た", TA, "past"),
    ("{i}たら", types("tara"), "-tara (if/when)"),
    ("{i}たり", types("tari"), "-tari"),
    ("{a}ないで", TE, "-naide (without doing)"),
    ("{a}ぬ", types("nu"), "-nu (classical negative)"),
    ("{a}ん", NEG_N, "-n (negative)"),
    ("{a}ざる", types("attr"), "-zaru (classical negative)"),
    ("{a}ねば", BA, "-neba (unless; must)"),
    ("{a}にゃ", BA, "-nya (-neba)"),
    ("{a}んばかり", types("n"), "-nbakari (as if about to)"),
    ("{a}んとする", VS, "-n to suru (about to)"),
    ("{u}るまい", MAI, "-mai (will not; probably not)"),
    ("{a}まい", MAI, "-mai (will not; probably not)"),
]
KURU_SPELLINGS = {  # dictionary form -> stems {i}, {a}, {u}
    "くる": ("き", "こ", "く"),
    "来る": ("来", "来", "来"),
    "來る": ("來", "來", "來"),
}
# Kansai negatives of 来る, on the same stems: こおへん, けえへん, きいひん
KURU_KANSAI = ["{a}おへん", "{a}ーへん", "{a}へん", "{i}いひん", "{i}ーひん", "{e}えへん"]

# The bare stem of an ichidan verb as written (食べ in 食べ放題, 食べ始める) is taken for the verb: a
# guess, ranked after real inflections, from a stem ending in an i- or e-row kana
ICHIDAN_STEM_ENDINGS = "いきぎしじちにひびみりえけげせぜてでねへべめれ"

# -ずる verbs (論ずる) share the ichidan forms of their -じる twin (論じる) and keep the old forms
# of their own, on the stems ぜ (negative, passive, causative) and ず (conditional, -mai)
ZURU = [
    ("ずれば", BA, "-ba (if)"),
    ("ずりゃ", BA, "-ba (contracted)"),
    ("ずるまい", MAI, "-mai (will not; probably not)"),
    ("ぜず", types("zu"), "-zu (without)"),
    ("ぜずに", types("zu"), "-zu (without)"),
    ("ぜぬ", types("nu"), "-nu (classical negative)"),
    ("ぜん", NEG_N, "-n (negative)"),
    ("ぜんばかり", types("n"), "-nbakari (as if about to)"),
    ("ぜんとする", VS, "-n to suru (about to)"),
    ("ぜざる", types("attr"), "-zaru (classical negative)"),
    ("ぜねば", BA, "-neba (unless; must)"),
    ("ぜにゃ", BA, "-nya (-neba)"),
    ("ぜよ", IMP, "imperative"),
    ("ぜられる", V1, "passive/potential"),
    ("ざれる", V1, "passive/potential"),
    ("ぜされる", V1, "passive"),
    ("じされる", V1, "passive"),
    ("ぜさせる", V1, "causative"),
    ("ぜさす", SHORT_SASU, "short causative"),
    ("ぜさせられる", V1, "causative-passive"),
]


def _godan_family() -> list[Rule]:
    rows = []
    for cls, (u, a, i, e, o, te, ta) in GODAN.items():
        stems = {"u": u, "a": a, "i": i, "e": e, "o": o, "te": te, "ta": ta}
        gives = GODAN_POS.get(cls, types(cls))
        if cls not in ("v5k-s", "v5u-s"):
            for template, takes, name in GODAN_FORMS:
                if (cls, template) not in GODAN_LEFT_OUT:
                    form_gives = gives - SHORT_SASU if template == "{a}れる" else gives
                    rows.append((template.format(**stems), u, takes, form_gives, name))
        te_gives = types(cls) if cls in ("v5k", "v5k-s", "v5u", "v5u-s") else gives
        for template, takes, name in GODAN_TE_FORMS:
            rows.append((template.format(**stems), u, takes, te_gives, name))
    return rules(GODAN_OWN + rows)  # first: くださ|い is the imperative before the silent stem


def _ichidan_family() -> list[Rule]:
    rows = [(ending, "る", takes, V1, name) for ending, takes, name in ICHIDAN]
    rows += [(kana, kana + "る", RAW, V1, "continuative") for kana in ICHIDAN_STEM_ENDINGS]
    return rules(rows)


def _continuative_family(table) -> list[Rule]:
    return rules((ending, "", takes, STEM_I, name) for ending, takes, name in table)


def _suru_family() -> list[Rule]:
    rows = [(form, "する", takes, VS, name) for form, takes, name in SURU + SURU_KANSAI]
    rows += [
        ("為" + form[1:], "為る", takes, VS, name)
        for form, takes, name in SURU
        if form[0] in "しすさせ"
    ]
    rows.append(("出来る", "する", V1, VS, "potential"))
    # 勉強する -> the noun 勉強 tagged vs in JMdict
    rows.append(("する", "", VS, types("vs"), None))
    return rules(rows)


def _kuru_family() -> list[Rule]:
    rows = []
    for kuru, (i, a, u) in KURU_SPELLINGS.items():
        stems = {"i": i, "a": a, "u": u, "e": "け" if a == "こ" else a}
        for template, takes, name in KURU:
            rows.append((template.format(**stems), kuru, takes, VK, name))
        for template in KURU_KANSAI:
            rows.append((template.format(**stems), kuru, HEN, VK, "negative (Kansai -hen)"))
    return rules(rows)


def _zuru_family() -> list[Rule]:
    rows = [("じる", "ずる", V1, VZ, "-jiru = -zuru"), ("ずる", "じる", VZ, V1, "-zuru = -jiru")]
    rows += [(form, "ずる", takes, VZ, name) for form, takes, name in ZURU]
    return rules(rows)


VERB_FAMILIES: dict[str, list[Rule]] = {
    "continuative stem": _continuative_family(CONTINUATIVE),
    "rare polite chains": _continuative_family(POLITE_CHAINS),
    "godan": _godan_family(),
    "ichidan": _ichidan_family(),
    "する": _suru_family(),
    "くる": _kuru_family(),
    "-ずる": _zuru_family(),
}
