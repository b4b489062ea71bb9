"""The deinflection families beyond a verb's own conjugation, as data: the auxiliaries after the -te
form and the forms built on forms, the i- and na-adjectives, and the sound changes of slang and
dialect (-え slang, n-slang, Kansai-ben and the -u sound change). `FORM_FAMILIES` holds the rules
of each, in the order the search tries them after the verbs' (app/dictionary/deinflect.py)."""

from __future__ import annotations

from app.dictionary.deinflect_types import (
    ADJ_I,
    ADJ_NA,
    BA,
    HEN,
    IMP,
    MASU,
    NEG_N,
    TA,
    TE,
    V1,
    VK,
    VS,
    Rule,
    rules,
    types,
)

# Auxiliaries after the -te form: (suffix after て, type of the whole form, name, contracted forms)
TE_AUXILIARIES = [
    ("いる", V1, "-te iru", [("てる", "でる", "-teru (-te iru)")]),
    ("ある", types("v5r", "v5r-i"), "-te aru", []),
    ("おる", types("v5r"), "-te oru", [("とる", "どる", "-toru (-te oru)")]),
    ("ください", IMP, "-te kudasai", []),
    ("おく", types("v5k"), "-te oku", [("とく", "どく", "-toku (-te oku)")]),
    (
        "しまう",
        types("v5u"),
        "-te shimau",
        [("ちゃう", "じゃう", "-chau (-te shimau)"), ("ちまう", "じまう", "-chimau (-te shimau)")],
    ),
    ("もらう", types("v5u"), "-te morau", []),
    ("くれる", V1, "-te kureru", []),
    ("あげる", V1, "-te ageru", []),
    ("みる", V1, "-te miru (try)", []),
    ("いく", types("v5k-s"), "-te iku", [("てく", "でく", "-teku (-te iku)")]),
    ("くる", VK, "-te kuru", []),
]
# Forms built on other forms: (inflected, base, takes, gives, name)
ON_FORMS = [
    ("ては", "て", types("teha"), TE, "-te wa"),
    ("では", "で", types("teha"), TE, "-te wa"),
    ("ちゃ", "て", types("teha"), TE, "-cha (-te wa)"),
    ("じゃ", "で", types("teha"), TE, "-ja (-te wa)"),
    ("ても", "て", types("temo"), TE, "-temo (even if)"),
    ("でも", "で", types("temo"), TE, "-temo (even if)"),
    ("たって", "た", types("temo"), TA, "-tatte (even if)"),  # 食べたって, 読んだって
    ("だって", "だ", types("temo"), TA, "-tatte (even if)"),
    ("ゃあ", "ゃ", BA, BA, None),  # drawn-out contracted conditionals: 行きゃあ, 食べりゃー, 言やあ
    ("ゃー", "ゃ", BA, BA, None),
    ("やあ", "や", BA, BA, None),  # 買や -> 買やあ
    ("やー", "や", BA, BA, None),
    ("うとする", "う", VS, types("vol"), "-ou to suru (try to)"),  # 食べようとした
    # the -n negatives (食べんかった, 行かんかったら) and Kansai -hen (食べへんかった) have a past
    ("んかった", "ん", TA, NEG_N, "past"),
    ("んかったら", "ん", types("tara"), NEG_N, "-tara (if/when)"),
    ("んで", "ん", TE, NEG_N, "-te"),
    ("へんかった", "へん", TA, HEN, "past"),
    ("へんかったら", "へん", types("tara"), HEN, "-tara (if/when)"),
    ("へんかったり", "へん", types("tari"), HEN, "-tari"),
    ("ひんかった", "ひん", TA, HEN, "past"),
]

# i-adjectives: (ending replacing い, takes, name)
ADJECTIVE_I = [
    ("く", types("adv"), "adverbial (-ku)"),
    ("くて", TE, "-te"),
    ("かった", TA, "past"),
    ("くない", ADJ_I, "negative"),
    ("さ", types("n"), "-sa (noun)"),
    ("ければ", BA, "-ba (if)"),
    ("かったら", types("tara"), "-tara (if/when)"),
    ("かったり", types("tari"), "-tari"),
    ("くありません", MASU, "polite negative"),
    ("くありませんでした", MASU, "polite past negative"),
    ("くありませんかった", MASU, "polite past negative"),
    ("そう", ADJ_NA, "-sou (looks like)"),
    ("すぎる", V1, "too much"),
    ("かろう", types("vol"), "volitional"),
    ("くなる", types("v5r"), "becoming"),
    ("過ぎる", V1, "too much"),
    ("がる", types("v5r"), "-garu (shows signs of)"),
    ("げ", ADJ_NA, "-ge (seeming)"),
    ("気", ADJ_NA, "-ge (seeming)"),
    ("き", types("attr"), "-ki (classical attributive)"),
    ("けりゃ", BA, "-ba (contracted)"),
    ("きゃ", BA, "-ba (contracted)"),
    ("くては", types("teha"), "-te wa"),
    ("くちゃ", types("teha"), "-cha (-te wa)"),
    ("くたって", types("temo"), "-kutatte (even if)"),
    ("すぎ", types("n"), "too much (noun)"),
    ("過ぎ", types("n"), "too much (noun)"),
    ("いです", MASU, "polite"),
    ("かったです", MASU, "polite past"),
]
# na-adjectives with the copula (also -sou forms, which behave as na-adjectives)
ADJECTIVE_NA = [
    ("だ", types("da"), "copula"),
    ("だった", TA, "past"),
    ("で", TE, "-te"),
    ("じゃない", ADJ_I, "negative"),
    ("ではない", ADJ_I, "negative"),
    ("です", MASU, "polite"),
    ("でした", MASU, "polite past"),
    ("じゃありません", MASU, "polite negative"),
    ("ではありません", MASU, "polite negative"),
    ("じゃありませんでした", MASU, "polite past negative"),
    ("ではありませんでした", MASU, "polite past negative"),
    ("な", types("attr"), "attributive (-na)"),
    ("に", types("adv"), "adverbial (-ni)"),
    ("なら", BA, "-nara (if)"),
    ("だろう", types("vol"), "presumptive"),
    ("でしょう", types("vol"), "presumptive"),
    ("だったら", types("tara"), "-tara (if/when)"),
    ("だったり", types("tari"), "-tari"),
    ("じゃなかったら", types("tara"), "-tara (if/when)"),
    ("さ", types("n"), "-sa (noun)"),
    ("そう", ADJ_NA, "-sou (looks like)"),
    ("すぎる", V1, "too much"),
    ("過ぎる", V1, "too much"),
]

# -え slang: the last two vowels of an i-adjective fuse into a long e (or a long i after u):
# すごい -> すげえ, さむい -> さめえ / さみい, ない -> ねえ (so 食べない -> 食べねえ). Written with
# え, ぇ or ー; after a palatal or a glide the e keeps it (ちっちゃい -> ちっちぇえ, つよい -> ついぇえ,
# こわい -> こうぇえ), and an emphatic っ may double the consonant (まずい -> まっぜえ, すごい -> すっげえ).
E_TAILS = ("え", "ぇ", "ー")
I_TAILS = ("い", "ぃ", "ー")
# (the kana before い, the e-row kana it becomes): the a, o and u rows of each consonant
SLANG_E_ROWS = [
    (before, e)
    for rows, e_row in (
        ("かこく", "け"),
        ("がごぐ", "げ"),
        ("さそす", "せ"),
        ("ざぞず", "ぜ"),
        ("たと", "て"),
        ("だど", "で"),
        ("なのぬ", "ね"),
        ("ばぼぶ", "べ"),
        ("まもむ", "め"),
        ("らろる", "れ"),
        ("わ", "え"),
        ("よ", "え"),  # つよい -> つええ
        ("い", "え"),  # かわいい -> かわええ
    )
    for before in rows
    for e in [e_row]
]
SLANG_E_PALATAL = [  # (ending before い, its e-form)
    ("ちゃ", "ちぇ"),
    ("しゃ", "しぇ"),
    ("じゃ", "じぇ"),
    ("つ", "ちぇ"),  # あつい -> あちぇえ
    ("わ", "うぇ"),  # こわい -> こうぇえ
    ("よ", "いぇ"),  # つよい -> ついぇえ
]
SLANG_II_ROWS = list(zip("くぐすつぬぶむる", "きぎしちにびみり", strict=True))  # さむい -> さみい

# n-slang: ら/り/る/れ before an n- ending become ん (わからない -> わかんない, 食べられない ->
# 食べらんない, やりなさい -> やんなさい, するな -> すんな). (slang, standard, type of both)
N_SLANG = [
    ("んない", "らない", ADJ_I),
    ("んない", "れない", ADJ_I),
    ("んなさい", "りなさい", IMP),
    ("んな", "るな", IMP),
]

# Kansai-ben and old speech: the -u sound change (ウ音便). -u verbs: the -te and -ta endings keep
# the う, which fuses with the vowel before it: 買うて, かう -> こうて, はう -> ほうて, いう -> ゆうて,
# あう -> おうて, たまう -> たもうた, たゆたう -> たゆとうた. i-adjectives: the -ku stem becomes -u
# with the same fusion: 高う, たこう(て), よろしゅう(ない), ありがとう.
U_EUPHONY_VERB_ENDINGS = [  # (ending after the fused う, takes, name)
    ("て", TE, "-te (Kansai)"),
    ("た", TA, "past (Kansai)"),
    ("たら", types("tara"), "-tara (Kansai)"),
    ("たり", types("tari"), "-tari (Kansai)"),
]
U_EUPHONY_ADJECTIVE_ENDINGS = [
    ("", types("adv"), "-u stem (Kansai, polite)"),
    ("て", TE, "-te (Kansai)"),
    ("ない", ADJ_I, "negative (Kansai)"),
]
# (kana before the final う or い, what it becomes with the fused う)
U_EUPHONY_A = list(zip("かがさざただなばはまらや", "こごそぞとどのぼほもろよ", strict=True))
U_EUPHONY_I = [(i, i + "ゅ") for i in "しきじちにびみりぎ"]  # おいしい -> おいしゅう
U_EUPHONY_VERB_ONLY = [("い", "ゆ"), ("あ", "お")]  # いう -> ゆうた, あう -> おうた


def _te_family() -> list[Rule]:
    rows = []
    for aux, aux_type, name, contracted in TE_AUXILIARIES:
        rows += [("て" + aux, "て", aux_type, TE, name), ("で" + aux, "で", aux_type, TE, name)]
        for te_form, de_form, short_name in contracted:
            rows += [
                (te_form, "て", aux_type, TE, short_name),
                (de_form, "で", aux_type, TE, short_name),
            ]
    return rules(rows + ON_FORMS)


def _adjective_family() -> list[Rule]:
    rows = [(ending, "い", takes, ADJ_I, name) for ending, takes, name in ADJECTIVE_I]
    rows.append(("さそう", "い", ADJ_NA, ADJ_I, "-sou (looks like)"))  # よさそう, なさそう
    rows += [(ending, "", takes, ADJ_NA, name) for ending, takes, name in ADJECTIVE_NA]
    return rules(rows)


def _slang_e_family() -> list[Rule]:
    ee, name = types("ee"), "colloquial (-ee)"
    # 凄え, 痛え: the kanji stays
    rows = [(tail, "い", ee, ADJ_I, name) for tail in ("え", "ぇ", "ー")]
    for before, e in SLANG_E_ROWS + SLANG_E_PALATAL:
        for tail in E_TAILS:
            rows.append((e + tail, before + "い", ee, ADJ_I, name))
            if e not in ("え", "うぇ", "いぇ"):
                rows.append(("っ" + e + tail, before + "い", ee, ADJ_I, name))  # emphatic: まっぜえ
    for u, i in SLANG_II_ROWS:
        rows += [(i + tail, u + "い", ee, ADJ_I, "colloquial (-ii)") for tail in I_TAILS]
    return rules(rows)


def _n_slang_family() -> list[Rule]:
    return rules((slang, standard, types, types, "n-slang") for slang, standard, types in N_SLANG)


def _kansai_family() -> list[Rule]:
    u_verbs = types("v5u", "v5u-s")
    rows = []
    for ending, takes, name in U_EUPHONY_VERB_ENDINGS:
        rows.append(("う" + ending, "う", takes, u_verbs, name))  # 買うて: the kanji stays
        for before, fused in U_EUPHONY_A + U_EUPHONY_VERB_ONLY:
            rows.append((fused + "う" + ending, before + "う", takes, u_verbs, name))
    for ending, takes, name in U_EUPHONY_ADJECTIVE_ENDINGS:
        rows.append(("う" + ending, "い", takes, ADJ_I, name))  # 高う, 良うない: the kanji stays
        for before, fused in U_EUPHONY_A + U_EUPHONY_I:
            rows.append((fused + "う" + ending, before + "い", takes, ADJ_I, name))
    return rules(rows)


FORM_FAMILIES: dict[str, list[Rule]] = {
    "-te auxiliaries and forms on forms": _te_family(),
    "adjectives": _adjective_family(),
    "-え slang": _slang_e_family(),
    "n-slang": _n_slang_family(),
    "Kansai-ben and the -u sound change": _kansai_family(),
}
