"""Japanese deinflection: our own condition-tagged suffix rules (written for Hayai, not copied).

A rule says: a word whose *inflected* form ends in `inflected` and has one of the grammatical
types in `takes` may come from a word ending in `base` whose type is one of `gives`. The raw text
may have any type; each later step must agree with the type the previous step produced, and the
final type must agree with the dictionary entry's part of speech (checked by the caller).

Types are JMdict POS codes (v1, v5k, vs-i, adj-i, adj-na, …) for words, plus a few tags for forms
that only exist inside a chain: `stem-i` (the continuative stem before ます/たい/ながら/そう),
`te` (the -te form before いる/ある/おく/しまう/…), `v5sp`/`v5ss` (a short causative in す, which
takes the passive, or in さす, which does not), and one tag per terminal form (`ta`, `ba`, `zu`, …)
so that such a form is only ever reached from the raw text or from a rule producing it. Steps
named None are silent (a stem going back to its dictionary form).

The rules are data: one table per family (`FAMILIES`), each built from the grammar of that family
(the godan rows, the stems of する and くる, the sound changes of slang and dialect), never from
lists of example words.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Rule:
    inflected: str
    base: str
    takes: frozenset[str]
    gives: frozenset[str]
    name: str | None


@dataclass(frozen=True)
class Candidate:
    text: str  # the dictionary-form guess
    types: frozenset[str] | None  # None: the raw text, any part of speech
    # named steps from the base outwards, e.g. ("passive/potential", "negative", "past")
    steps: tuple[str, ...]
    guess: bool = False  # a bare stem taken for its verb (食べ -> 食べる): ranked after real forms


def _t(*tags: str) -> frozenset[str]:
    return frozenset(tags)


V1 = _t("v1", "v1-s")
VS = _t("vs-i", "vs-s")  # する itself and compounds such as 愛する
VK = _t("vk")
ADJ_I = _t("adj-i", "adj-ix")
ADJ_NA = _t("adj-na")
VZ = _t("vz")  # 論ずる
STEM_I = _t("stem-i")
TE = _t("te")
NEG_N = _t("neg-n")  # 食べん, 行かん: a form with a past of its own (食べんかった)
HEN = _t("hen")  # Kansai 食べへん, 行かへん
RAW = _t("raw")  # a rule only for the text as written (no step produces this type)
SHORT_SU = _t("v5sp")  # 書かす: a short causative that has a passive (書かされる)
SHORT_SASU = _t("v5ss")  # 食べさす, 話さす, さす: no passive (食べさされる is no form)
MASU, TA, BA, IMP, MAI = _t("masu"), _t("ta"), _t("ba"), _t("imp"), _t("mai")

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
    "v5k": _t("v5k", "v5k-s"),
    "v5u": _t("v5u", "v5u-s"),
    "v5s": _t("v5s") | SHORT_SU | SHORT_SASU,  # a short causative conjugates as a -su verb
    "v5r": _t("v5r", "v5r-i"),
    "v5aru": _t("v5aru", "v4"),  # JMdict tags ござる as the archaic yodan "v4"
}

# ------------------------------------------------------------------------------ the families
# Each family is a table of (inflected, base, takes, gives, name) rows, expanded where the grammar
# is regular (a template per godan row, a stem per spelling of くる).

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
    ("たがる", _t("v5r"), "-tagaru (wants to)"),
    ("ながら", _t("nagara"), "-nagara (while)"),
    ("そう", ADJ_NA, "-sou (looks like)"),
    ("すぎる", V1, "too much"),
    ("過ぎる", V1, "too much"),
    ("すぎ", _t("n"), "too much (noun)"),
    ("過ぎ", _t("n"), "too much (noun)"),
    ("なさい", IMP, "-nasai (polite imperative)"),
    ("やがる", _t("v5r"), "-yagaru (contempt)"),
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
    ("{a}ず", _t("zu"), "-zu (without)"),
    ("{a}ずに", _t("zu"), "-zu (without)"),
    ("{a}れる", V1, "passive"),
    ("{a}せる", V1, "causative"),
    ("{a}す", SHORT_SU, "short causative"),  # 書かす (話さす: see GODAN_SHORT_SASU)
    ("{a}される", V1, "causative-passive"),  # 書かされる: the short causative's passive
    ("{e}", IMP, "imperative"),
    ("{i}", STEM_I, None),
    ("{e}る", V1, "potential"),
    ("{e}ば", BA, "-ba (if)"),
    ("{o}う", _t("vol"), "volitional"),
    ("{u}な", IMP, "negative imperative"),
    ("{a}ないで", TE, "-naide (without doing)"),  # 書かないで(おく)
    ("{a}ぬ", _t("nu"), "-nu (classical negative)"),
    ("{a}ん", NEG_N, "-n (negative)"),
    ("{a}ざる", _t("attr"), "-zaru (classical negative)"),
    ("{a}ねば", BA, "-neba (unless; must)"),
    ("{a}にゃ", BA, "-nya (-neba)"),
    ("{a}んばかり", _t("n"), "-nbakari (as if about to)"),
    ("{a}んとする", VS, "-n to suru (about to)"),
    ("{u}まい", MAI, "-mai (will not; probably not)"),
    ("{o}うか", _t("vol"), "volitional (-ka)"),
    ("{o}っか", _t("vol"), "volitional (-kka)"),
    ("{a}へん", HEN, "negative (Kansai -hen)"),
    ("{e}へん", HEN, "negative (Kansai -hen)"),
    ("{i}ゃ", BA, "-ba (contracted)"),  # 書けば -> 書きゃ, 取れば -> 取りゃ
]
GODAN_TE_FORMS = [
    ("{te}", TE, "-te"),
    ("{ta}", TA, "past"),
    ("{ta}ら", _t("tara"), "-tara (if/when)"),
    ("{ta}り", _t("tari"), "-tari"),
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
    ("さす", "す", SHORT_SASU, _t("v5s"), "short causative"),
    ("や", "う", BA, _t("v5u", "v5u-s"), "-ba (contracted)"),  # 買えば -> 買や
    ("りゃ", "る", BA, _t("v5aru", "v4"), "-ba (contracted)"),
    ("い", "る", IMP, _t("v5aru", "v4"), "imperative"),
]

# Ichidan verbs: the stem is the dictionary form minus る (inflected ending, takes, name)
ICHIDAN = [
    ("", STEM_I, None),
    ("ない", ADJ_I, "negative"),
    ("ず", _t("zu"), "-zu (without)"),
    ("ずに", _t("zu"), "-zu (without)"),
    ("られる", V1, "passive/potential"),
    ("れる", V1, "potential (colloquial)"),  # ら-less: 食べれる
    ("させる", V1, "causative"),
    ("さす", SHORT_SASU, "short causative"),
    ("れば", BA, "-ba (if)"),
    ("よう", _t("vol"), "volitional"),
    ("ろ", IMP, "imperative"),
    ("よ", IMP, "imperative"),
    ("るな", IMP, "negative imperative"),
    ("て", TE, "-te"),
    ("た", TA, "past"),
    ("たら", _t("tara"), "-tara (if/when)"),
    ("たり", _t("tari"), "-tari"),
    ("ないで", TE, "-naide (without doing)"),
    ("ぬ", _t("nu"), "-nu (classical negative)"),
    ("ん", NEG_N, "-n (negative)"),
    ("ざる", _t("attr"), "-zaru (classical negative)"),
    ("ねば", BA, "-neba (unless; must)"),
    ("にゃ", BA, "-nya (-neba)"),
    ("んばかり", _t("n"), "-nbakari (as if about to)"),
    ("んとする", VS, "-n to suru (about to)"),
    ("まい", MAI, "-mai (will not; probably not)"),
    ("るまい", MAI, "-mai (will not; probably not)"),
    ("ようか", _t("vol"), "volitional (-ka)"),
    ("よっか", _t("vol"), "volitional (-kka)"),
    ("りゃ", BA, "-ba (contracted)"),
    ("へん", HEN, "negative (Kansai -hen)"),
    ("ひん", HEN, "negative (Kansai -hin)"),
]

# する and its compounds (勉強する, 愛する), in kana: (form, takes, name). Written with the kanji
# 為る, the kanji replaces the first kana (為ます, 為れる, 為せる, 為す), except in the Kansai forms.
SURU = [
    ("し", STEM_I, None),
    ("しない", ADJ_I, "negative"),
    ("せず", _t("zu"), "-zu (without)"),
    ("せずに", _t("zu"), "-zu (without)"),
    ("される", V1, "passive"),
    ("せられる", V1, "passive/potential (classical)"),
    ("させる", V1, "causative"),
    ("せさせる", V1, "causative"),
    ("さす", SHORT_SASU, "short causative"),
    ("させられる", V1, "causative-passive"),
    ("せさせられる", V1, "causative-passive"),
    ("できる", V1, "potential"),
    ("すれば", BA, "-ba (if)"),
    ("しよう", _t("vol"), "volitional"),
    ("しろ", IMP, "imperative"),
    ("せよ", IMP, "imperative"),
    ("するな", IMP, "negative imperative"),
    ("して", TE, "-te"),
    ("した", TA, "past"),
    ("したら", _t("tara"), "-tara (if/when)"),
    ("したり", _t("tari"), "-tari"),
    ("しないで", TE, "-naide (without doing)"),
    ("せぬ", _t("nu"), "-nu (classical negative)"),
    ("せん", NEG_N, "-n (negative)"),
    ("せざる", _t("attr"), "-zaru (classical negative)"),
    ("せねば", BA, "-neba (unless; must)"),
    ("せにゃ", BA, "-nya (-neba)"),
    ("せんばかり", _t("n"), "-nbakari (as if about to)"),
    ("せんとする", VS, "-n to suru (about to)"),
    ("するまい", MAI, "-mai (will not; probably not)"),
    ("すまい", MAI, "-mai (will not; probably not)"),
    ("しまい", MAI, "-mai (will not; probably not)"),
    ("しようか", _t("vol"), "volitional (-ka)"),
    ("しよっか", _t("vol"), "volitional (-kka)"),
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
    ("{a}ず", _t("zu"), "-zu (without)"),
    ("{a}ずに", _t("zu"), "-zu (without)"),
    ("{a}られる", V1, "passive/potential"),
    ("{a}れる", V1, "potential (colloquial)"),
    ("{a}させる", V1, "causative"),
    ("{a}さす", SHORT_SASU, "short causative"),
    ("{a}させられる", V1, "causative-passive"),
    ("{u}れば", BA, "-ba (if)"),
    ("{u}りゃ", BA, "-ba (contracted)"),
    ("{a}よう", _t("vol"), "volitional"),
    ("{a}ようか", _t("vol"), "volitional (-ka)"),
    ("{a}よっか", _t("vol"), "volitional (-kka)"),
    ("{a}い", IMP, "imperative"),
    ("{i}て", TE, "-te"),
    ("{i}た", TA, "past"),
    ("{i}たら", _t("tara"), "-tara (if/when)"),
    ("{i}たり", _t("tari"), "-tari"),
    ("{a}ないで", TE, "-naide (without doing)"),
    ("{a}ぬ", _t("nu"), "-nu (classical negative)"),
    ("{a}ん", NEG_N, "-n (negative)"),
    ("{a}ざる", _t("attr"), "-zaru (classical negative)"),
    ("{a}ねば", BA, "-neba (unless; must)"),
    ("{a}にゃ", BA, "-nya (-neba)"),
    ("{a}んばかり", _t("n"), "-nbakari (as if about to)"),
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
    ("ぜず", _t("zu"), "-zu (without)"),
    ("ぜずに", _t("zu"), "-zu (without)"),
    ("ぜぬ", _t("nu"), "-nu (classical negative)"),
    ("ぜん", NEG_N, "-n (negative)"),
    ("ぜんばかり", _t("n"), "-nbakari (as if about to)"),
    ("ぜんとする", VS, "-n to suru (about to)"),
    ("ぜざる", _t("attr"), "-zaru (classical negative)"),
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

# Auxiliaries after the -te form: (suffix after て, type of the whole form, name, contracted forms)
TE_AUXILIARIES = [
    ("いる", V1, "-te iru", [("てる", "でる", "-teru (-te iru)")]),
    ("ある", _t("v5r", "v5r-i"), "-te aru", []),
    ("おる", _t("v5r"), "-te oru", [("とる", "どる", "-toru (-te oru)")]),
    ("ください", IMP, "-te kudasai", []),
    ("おく", _t("v5k"), "-te oku", [("とく", "どく", "-toku (-te oku)")]),
    (
        "しまう",
        _t("v5u"),
        "-te shimau",
        [("ちゃう", "じゃう", "-chau (-te shimau)"), ("ちまう", "じまう", "-chimau (-te shimau)")],
    ),
    ("もらう", _t("v5u"), "-te morau", []),
    ("くれる", V1, "-te kureru", []),
    ("あげる", V1, "-te ageru", []),
    ("みる", V1, "-te miru (try)", []),
    ("いく", _t("v5k-s"), "-te iku", [("てく", "でく", "-teku (-te iku)")]),
    ("くる", VK, "-te kuru", []),
]
# Forms built on other forms: (inflected, base, takes, gives, name)
ON_FORMS = [
    ("ては", "て", _t("teha"), TE, "-te wa"),
    ("では", "で", _t("teha"), TE, "-te wa"),
    ("ちゃ", "て", _t("teha"), TE, "-cha (-te wa)"),
    ("じゃ", "で", _t("teha"), TE, "-ja (-te wa)"),
    ("ても", "て", _t("temo"), TE, "-temo (even if)"),
    ("でも", "で", _t("temo"), TE, "-temo (even if)"),
    ("たって", "た", _t("temo"), TA, "-tatte (even if)"),  # 食べたって, 読んだって
    ("だって", "だ", _t("temo"), TA, "-tatte (even if)"),
    ("ゃあ", "ゃ", BA, BA, None),  # drawn-out contracted conditionals: 行きゃあ, 食べりゃー, 言やあ
    ("ゃー", "ゃ", BA, BA, None),
    ("やあ", "や", BA, BA, None),  # 買や -> 買やあ
    ("やー", "や", BA, BA, None),
    ("うとする", "う", VS, _t("vol"), "-ou to suru (try to)"),  # 食べようとした
    # the -n negatives (食べんかった, 行かんかったら) and Kansai -hen (食べへんかった) have a past
    ("んかった", "ん", TA, NEG_N, "past"),
    ("んかったら", "ん", _t("tara"), NEG_N, "-tara (if/when)"),
    ("んで", "ん", TE, NEG_N, "-te"),
    ("へんかった", "へん", TA, HEN, "past"),
    ("へんかったら", "へん", _t("tara"), HEN, "-tara (if/when)"),
    ("へんかったり", "へん", _t("tari"), HEN, "-tari"),
    ("ひんかった", "ひん", TA, HEN, "past"),
]

# i-adjectives: (ending replacing い, takes, name)
ADJECTIVE_I = [
    ("く", _t("adv"), "adverbial (-ku)"),
    ("くて", TE, "-te"),
    ("かった", TA, "past"),
    ("くない", ADJ_I, "negative"),
    ("さ", _t("n"), "-sa (noun)"),
    ("ければ", BA, "-ba (if)"),
    ("かったら", _t("tara"), "-tara (if/when)"),
    ("かったり", _t("tari"), "-tari"),
    ("くありません", MASU, "polite negative"),
    ("くありませんでした", MASU, "polite past negative"),
    ("くありませんかった", MASU, "polite past negative"),
    ("そう", ADJ_NA, "-sou (looks like)"),
    ("すぎる", V1, "too much"),
    ("かろう", _t("vol"), "volitional"),
    ("くなる", _t("v5r"), "becoming"),
    ("過ぎる", V1, "too much"),
    ("がる", _t("v5r"), "-garu (shows signs of)"),
    ("げ", ADJ_NA, "-ge (seeming)"),
    ("気", ADJ_NA, "-ge (seeming)"),
    ("き", _t("attr"), "-ki (classical attributive)"),
    ("けりゃ", BA, "-ba (contracted)"),
    ("きゃ", BA, "-ba (contracted)"),
    ("くては", _t("teha"), "-te wa"),
    ("くちゃ", _t("teha"), "-cha (-te wa)"),
    ("くたって", _t("temo"), "-kutatte (even if)"),
    ("すぎ", _t("n"), "too much (noun)"),
    ("過ぎ", _t("n"), "too much (noun)"),
    ("いです", MASU, "polite"),
    ("かったです", MASU, "polite past"),
]
# na-adjectives with the copula (also -sou forms, which behave as na-adjectives)
ADJECTIVE_NA = [
    ("だ", _t("da"), "copula"),
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
    ("な", _t("attr"), "attributive (-na)"),
    ("に", _t("adv"), "adverbial (-ni)"),
    ("なら", BA, "-nara (if)"),
    ("だろう", _t("vol"), "presumptive"),
    ("でしょう", _t("vol"), "presumptive"),
    ("だったら", _t("tara"), "-tara (if/when)"),
    ("だったり", _t("tari"), "-tari"),
    ("じゃなかったら", _t("tara"), "-tara (if/when)"),
    ("さ", _t("n"), "-sa (noun)"),
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
    ("たら", _t("tara"), "-tara (Kansai)"),
    ("たり", _t("tari"), "-tari (Kansai)"),
]
U_EUPHONY_ADJECTIVE_ENDINGS = [
    ("", _t("adv"), "-u stem (Kansai, polite)"),
    ("て", TE, "-te (Kansai)"),
    ("ない", ADJ_I, "negative (Kansai)"),
]
# (kana before the final う or い, what it becomes with the fused う)
U_EUPHONY_A = list(zip("かがさざただなばはまらや", "こごそぞとどのぼほもろよ", strict=True))
U_EUPHONY_I = [(i, i + "ゅ") for i in "しきじちにびみりぎ"]  # おいしい -> おいしゅう
U_EUPHONY_VERB_ONLY = [("い", "ゆ"), ("あ", "お")]  # いう -> ゆうた, あう -> おうた


def _rules(rows) -> list[Rule]:
    return [
        Rule(inflected, base, takes, gives, name) for inflected, base, takes, gives, name in rows
    ]


def _godan_family() -> list[Rule]:
    rows = []
    for cls, (u, a, i, e, o, te, ta) in GODAN.items():
        stems = {"u": u, "a": a, "i": i, "e": e, "o": o, "te": te, "ta": ta}
        gives = GODAN_POS.get(cls, _t(cls))
        if cls not in ("v5k-s", "v5u-s"):
            for template, takes, name in GODAN_FORMS:
                if (cls, template) not in GODAN_LEFT_OUT:
                    form_gives = gives - SHORT_SASU if template == "{a}れる" else gives
                    rows.append((template.format(**stems), u, takes, form_gives, name))
        te_gives = _t(cls) if cls in ("v5k", "v5k-s", "v5u", "v5u-s") else gives
        for template, takes, name in GODAN_TE_FORMS:
            rows.append((template.format(**stems), u, takes, te_gives, name))
    return _rules(GODAN_OWN + rows)  # first: くださ|い is the imperative before the silent stem


def _ichidan_family() -> list[Rule]:
    rows = [(ending, "る", takes, V1, name) for ending, takes, name in ICHIDAN]
    rows += [(kana, kana + "る", RAW, V1, "continuative") for kana in ICHIDAN_STEM_ENDINGS]
    return _rules(rows)


def _continuative_family(table) -> list[Rule]:
    return _rules((ending, "", takes, STEM_I, name) for ending, takes, name in table)


def _suru_family() -> list[Rule]:
    rows = [(form, "する", takes, VS, name) for form, takes, name in SURU + SURU_KANSAI]
    rows += [
        ("為" + form[1:], "為る", takes, VS, name)
        for form, takes, name in SURU
        if form[0] in "しすさせ"
    ]
    rows.append(("出来る", "する", V1, VS, "potential"))
    rows.append(("する", "", VS, _t("vs"), None))  # 勉強する -> the noun 勉強 tagged vs in JMdict
    return _rules(rows)


def _kuru_family() -> list[Rule]:
    rows = []
    for kuru, (i, a, u) in KURU_SPELLINGS.items():
        stems = {"i": i, "a": a, "u": u, "e": "け" if a == "こ" else a}
        for template, takes, name in KURU:
            rows.append((template.format(**stems), kuru, takes, VK, name))
        for template in KURU_KANSAI:
            rows.append((template.format(**stems), kuru, HEN, VK, "negative (Kansai -hen)"))
    return _rules(rows)


def _zuru_family() -> list[Rule]:
    rows = [("じる", "ずる", V1, VZ, "-jiru = -zuru"), ("ずる", "じる", VZ, V1, "-zuru = -jiru")]
    rows += [(form, "ずる", takes, VZ, name) for form, takes, name in ZURU]
    return _rules(rows)


def _te_family() -> list[Rule]:
    rows = []
    for aux, aux_type, name, contracted in TE_AUXILIARIES:
        rows += [("て" + aux, "て", aux_type, TE, name), ("で" + aux, "で", aux_type, TE, name)]
        for te_form, de_form, short_name in contracted:
            rows += [
                (te_form, "て", aux_type, TE, short_name),
                (de_form, "で", aux_type, TE, short_name),
            ]
    return _rules(rows + ON_FORMS)


def _adjective_family() -> list[Rule]:
    rows = [(ending, "い", takes, ADJ_I, name) for ending, takes, name in ADJECTIVE_I]
    rows.append(("さそう", "い", ADJ_NA, ADJ_I, "-sou (looks like)"))  # よさそう, なさそう
    rows += [(ending, "", takes, ADJ_NA, name) for ending, takes, name in ADJECTIVE_NA]
    return _rules(rows)


def _slang_e_family() -> list[Rule]:
    ee, name = _t("ee"), "colloquial (-ee)"
    # 凄え, 痛え: the kanji stays
    rows = [(tail, "い", ee, ADJ_I, name) for tail in ("え", "ぇ", "ー")]
    for before, e in SLANG_E_ROWS + SLANG_E_PALATAL:
        for tail in E_TAILS:
            rows.append((e + tail, before + "い", ee, ADJ_I, name))
            if e not in ("え", "うぇ", "いぇ"):
                rows.append(("っ" + e + tail, before + "い", ee, ADJ_I, name))  # emphatic: まっぜえ
    for u, i in SLANG_II_ROWS:
        rows += [(i + tail, u + "い", ee, ADJ_I, "colloquial (-ii)") for tail in I_TAILS]
    return _rules(rows)


def _n_slang_family() -> list[Rule]:
    return _rules((slang, standard, types, types, "n-slang") for slang, standard, types in N_SLANG)


def _kansai_family() -> list[Rule]:
    u_verbs = _t("v5u", "v5u-s")
    rows = []
    for ending, takes, name in U_EUPHONY_VERB_ENDINGS:
        rows.append(("う" + ending, "う", takes, u_verbs, name))  # 買うて: the kanji stays
        for before, fused in U_EUPHONY_A + U_EUPHONY_VERB_ONLY:
            rows.append((fused + "う" + ending, before + "う", takes, u_verbs, name))
    for ending, takes, name in U_EUPHONY_ADJECTIVE_ENDINGS:
        rows.append(("う" + ending, "い", takes, ADJ_I, name))  # 高う, 良うない: the kanji stays
        for before, fused in U_EUPHONY_A + U_EUPHONY_I:
            rows.append((fused + "う" + ending, before + "い", takes, ADJ_I, name))
    return _rules(rows)


FAMILIES: dict[str, list[Rule]] = {
    "continuative stem": _continuative_family(CONTINUATIVE),
    "rare polite chains": _continuative_family(POLITE_CHAINS),
    "godan": _godan_family(),
    "ichidan": _ichidan_family(),
    "する": _suru_family(),
    "くる": _kuru_family(),
    "-ずる": _zuru_family(),
    "-te auxiliaries and forms on forms": _te_family(),
    "adjectives": _adjective_family(),
    "-え slang": _slang_e_family(),
    "n-slang": _n_slang_family(),
    "Kansai-ben and the -u sound change": _kansai_family(),
}
RULES: list[Rule] = list(dict.fromkeys(r for rules in FAMILIES.values() for r in rules))
_BY_SUFFIX: dict[str, list[Rule]] = {}
for _rule in RULES:
    _BY_SUFFIX.setdefault(_rule.inflected, []).append(_rule)
_MAX_SUFFIX = max(len(s) for s in _BY_SUFFIX)
MAX_DEPTH = 7  # 食べさせられたくなかった is five named steps, 食べないどいた six


@lru_cache(maxsize=8192)
def deinflect(word: str) -> tuple[Candidate, ...]:
    """Every dictionary-form guess for `word`, the word itself first (types None, no steps)."""
    start = Candidate(word, None, ())
    found = [start]
    seen: set[tuple[str, frozenset[str] | None]] = {(word, None)}
    frontier = [start]
    for _ in range(MAX_DEPTH):
        next_frontier = []
        for cand in frontier:
            for rule, base in _steps_back(cand):
                if (base, rule.gives) in seen:
                    continue
                seen.add((base, rule.gives))
                new = _undo(cand, rule, base)
                found.append(new)
                if not new.guess:  # the verb of a bare stem is not deinflected further
                    next_frontier.append(new)
        frontier = next_frontier
        if not frontier:
            break
    return tuple(found)


def _steps_back(cand: Candidate):
    """(rule, the text before it) for every rule whose inflected ending `cand` has and whose
    types agree with what `cand` is, longest ending first."""
    text = cand.text
    for k in range(min(len(text), _MAX_SUFFIX), -1, -1):
        rules = _BY_SUFFIX.get(text[len(text) - k :] if k else "")
        if not rules:
            continue
        stem = text[: len(text) - k]
        for rule in rules:
            if cand.types is None:
                if k == 0:
                    continue  # an empty suffix inside a chain only (stem -> る)
            elif not (rule.takes & cand.types):
                continue  # (no step produces RAW: those rules are for the raw text)
            if stem + rule.base:
                yield rule, stem + rule.base


def _undo(cand: Candidate, rule: Rule, base: str) -> Candidate:
    """The candidate one step back from `cand` through `rule`."""
    name = rule.name
    if name == "-te" and cand.types == TE:
        name = None  # "-te iru" already says it; "-te · -te iru" would be noise
    steps = ((name,) if name else ()) + cand.steps
    guess = rule.takes is RAW
    return Candidate(base, rule.gives, steps, guess)


def agrees(candidate: Candidate, entry_pos: set[str] | frozenset[str]) -> bool:
    """Does the entry's part of speech fit the type the deinflection chain ended with?"""
    return candidate.types is None or bool(candidate.types & entry_pos)
