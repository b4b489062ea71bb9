"""Japanese deinflection: our own condition-tagged suffix rules (written for Hayai, not copied).

A rule says: a word whose *inflected* form ends in `inflected` and has one of the grammatical
types in `takes` may come from a word ending in `base` whose type is one of `gives`. The raw text
may have any type; each later step must agree with the type the previous step produced, and the
final type must agree with the dictionary entry's part of speech (checked by the caller).

Types are JMdict POS codes (v1, v5k, vs-i, adj-i, adj-na, …) for words, plus a few tags for forms
that only exist inside a chain: `stem-i` (the continuative stem before ます/たい/ながら/そう),
`te` (the -te form before いる/ある/おく/しまう/…), and one tag per terminal form (`ta`, `ba`,
`zu`, …) so that such a form is only ever reached from the raw text or from a rule producing it.
Steps named None are silent (a stem going back to its dictionary form).
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
    steps: tuple[
        str, ...
    ]  # named steps from the base outwards, e.g. ("passive/potential", "negative", "past")


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
    "v5r": _t("v5r", "v5r-i"),
    "v5aru": _t("v5aru", "v4"),  # JMdict tags ござる as the archaic yodan "v4"
}

# (inflected, base, takes, name) for forms built on the continuative stem, which every verb shares
STEM_I_FORMS = [
    ("ます", _t("masu"), "polite"),
    ("ません", _t("masu"), "polite negative"),
    ("ました", _t("masu"), "polite past"),
    ("ませんでした", _t("masu"), "polite past negative"),
    ("ましょう", _t("masu"), "polite volitional"),
    ("ましょ", _t("masu"), "polite volitional"),
    ("ましょうか", _t("masu"), "polite volitional (-ka)"),
    ("ましょっか", _t("masu"), "polite volitional (-ka)"),
    ("まして", _t("masu"), "polite -te"),
    ("ませ", _t("masu"), "polite imperative"),
    ("ましたら", _t("masu"), "polite -tara"),
    ("ましたり", _t("masu"), "polite -tari"),
    ("たい", ADJ_I, "-tai (want to)"),
    ("たがる", _t("v5r"), "-tagaru (wants to)"),
    ("ながら", _t("nagara"), "-nagara (while)"),
    ("そう", ADJ_NA, "-sou (looks like)"),
    ("すぎる", V1, "too much"),
    ("過ぎる", V1, "too much"),
    ("すぎ", _t("n"), "too much (noun)"),
    ("過ぎ", _t("n"), "too much (noun)"),
    ("なさい", _t("imp"), "-nasai (polite imperative)"),
    ("やがる", _t("v5r"), "-yagaru (contempt)"),
]

# Auxiliaries after the -te form: (suffix after て, type of the whole form, name, contracted forms)
TE_AUXILIARIES = [
    ("いる", V1, "-te iru", [("てる", "でる", "-teru (-te iru)")]),
    ("ある", _t("v5r", "v5r-i"), "-te aru", []),
    ("おる", _t("v5r"), "-te oru", [("とる", "どる", "-toru (-te oru)")]),
    ("ください", _t("imp"), "-te kudasai", []),
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


def _build_rules() -> list[Rule]:
    rules: list[Rule] = []

    def add(
        inflected: str, base: str, takes: frozenset[str], gives: frozenset[str], name: str | None
    ) -> None:
        rules.append(Rule(inflected, base, takes, gives, name))

    # --- the continuative stem and what is built on it (shared by every verb class)
    for ending, takes, name in STEM_I_FORMS:
        add(ending, "", takes, STEM_I, name)

    # --- godan verbs, row by row
    for cls, (u, a, i, e, o, te, ta) in GODAN.items():
        rest = GODAN_POS.get(cls, _t(cls))
        if cls not in ("v5k-s", "v5u-s"):  # these two share every form but -te/-ta with v5k / v5u
            add(a + "ない", u, ADJ_I, rest, "negative")
            add(a + "ず", u, _t("zu"), rest, "-zu (without)")
            add(a + "ずに", u, _t("zu"), rest, "-zu (without)")
            add(a + "れる", u, V1, rest, "passive")
            add(a + "せる", u, V1, rest, "causative")
            add(a + "す", u, _t("v5s"), rest, "causative")  # short causative 書かす
            if cls != "v5s":
                add(a + "される", u, V1, rest, "causative-passive")  # 書かされる (short form)
            # before the stem: くださ|い is the imperative, not a silent stem
            add(e if cls != "v5aru" else "い", u, _t("imp"), rest, "imperative")
            add(i, u, STEM_I, rest, None)
            add(e + "る", u, V1, rest, "potential")
            add(e + "ば", u, _t("ba"), rest, "-ba (if)")
            add(o + "う", u, _t("vol"), rest, "volitional")
            add(u + "な", u, _t("imp"), rest, "negative imperative")
            # literary and colloquial negatives, conjecture, contracted conditionals
            add(a + "ないで", u, TE, rest, "-naide (without doing)")  # 書かないで(おく)
            add(a + "ぬ", u, _t("nu"), rest, "-nu (classical negative)")
            add(a + "ん", u, NEG_N, rest, "-n (negative)")
            add(a + "ざる", u, _t("attr"), rest, "-zaru (classical negative)")
            add(a + "ねば", u, _t("ba"), rest, "-neba (unless; must)")
            add(a + "にゃ", u, _t("ba"), rest, "-nya (-neba)")
            add(a + "んばかり", u, _t("n"), rest, "-nbakari (as if about to)")
            add(a + "んとする", u, VS, rest, "-n to suru (about to)")
            add(u + "まい", u, _t("mai"), rest, "-mai (will not; probably not)")
            add(o + "うか", u, _t("vol"), rest, "volitional (-ka)")
            add(o + "っか", u, _t("vol"), rest, "volitional (-kka)")
            add(a + "へん", u, HEN, rest, "negative (Kansai -hen)")
            add(e + "へん", u, HEN, rest, "negative (Kansai -hen)")
            if cls not in ("v5u", "v5aru"):  # 書けば -> 書きゃ, 取れば -> 取りゃ
                add(i + "ゃ", u, _t("ba"), rest, "-ba (contracted)")
            if cls == "v5aru":
                add("りゃ", u, _t("ba"), rest, "-ba (contracted)")
        te_pos = _t(cls) if cls in ("v5k", "v5k-s", "v5u", "v5u-s") else rest
        add(te, u, TE, te_pos, "-te")
        add(ta, u, _t("ta"), te_pos, "past")
        add(ta + "ら", u, _t("tara"), te_pos, "-tara (if/when)")
        add(ta + "り", u, _t("tari"), te_pos, "-tari")
    add("うて", "う", TE, _t("v5u"), "-te (Kansai)")  # 買うて, 言うた
    add("うた", "う", _t("ta"), _t("v5u"), "past (Kansai)")
    add("うたら", "う", _t("tara"), _t("v5u"), "-tara (Kansai)")
    add("うたり", "う", _t("tari"), _t("v5u"), "-tari (Kansai)")

    # --- ichidan verbs: the stem is the dictionary form minus る
    add("", "る", STEM_I, V1, None)
    add("ない", "る", ADJ_I, V1, "negative")
    add("ず", "る", _t("zu"), V1, "-zu (without)")
    add("ずに", "る", _t("zu"), V1, "-zu (without)")
    add("られる", "る", V1, V1, "passive/potential")
    add("れる", "る", V1, V1, "potential (colloquial)")  # ら-less: 食べれる
    add("させる", "る", V1, V1, "causative")
    add("さす", "る", _t("v5s"), V1, "causative")
    add("れば", "る", _t("ba"), V1, "-ba (if)")
    add("よう", "る", _t("vol"), V1, "volitional")
    add("ろ", "る", _t("imp"), V1, "imperative")
    add("よ", "る", _t("imp"), V1, "imperative")
    add("るな", "る", _t("imp"), V1, "negative imperative")
    add("て", "る", TE, V1, "-te")
    add("た", "る", _t("ta"), V1, "past")
    add("たら", "る", _t("tara"), V1, "-tara (if/when)")
    add("たり", "る", _t("tari"), V1, "-tari")
    add("ないで", "る", TE, V1, "-naide (without doing)")
    add("ぬ", "る", _t("nu"), V1, "-nu (classical negative)")
    add("ん", "る", NEG_N, V1, "-n (negative)")
    add("ざる", "る", _t("attr"), V1, "-zaru (classical negative)")
    add("ねば", "る", _t("ba"), V1, "-neba (unless; must)")
    add("にゃ", "る", _t("ba"), V1, "-nya (-neba)")
    add("んばかり", "る", _t("n"), V1, "-nbakari (as if about to)")
    add("んとする", "る", VS, V1, "-n to suru (about to)")
    add("まい", "る", _t("mai"), V1, "-mai (will not; probably not)")
    add("るまい", "る", _t("mai"), V1, "-mai (will not; probably not)")
    add("ようか", "る", _t("vol"), V1, "volitional (-ka)")
    add("よっか", "る", _t("vol"), V1, "volitional (-kka)")
    add("りゃ", "る", _t("ba"), V1, "-ba (contracted)")
    add("へん", "る", HEN, V1, "negative (Kansai -hen)")
    add("ひん", "る", HEN, V1, "negative (Kansai -hin)")

    # --- する and its compounds (勉強する, 愛する)
    for surface, name, takes in [
        ("し", None, STEM_I),
        ("しない", "negative", ADJ_I),
        ("せず", "-zu (without)", _t("zu")),
        ("せずに", "-zu (without)", _t("zu")),
        ("される", "passive", V1),
        ("させる", "causative", V1),
        ("させられる", "causative-passive", V1),
        ("できる", "potential", V1),
        ("すれば", "-ba (if)", _t("ba")),
        ("しよう", "volitional", _t("vol")),
        ("しろ", "imperative", _t("imp")),
        ("せよ", "imperative", _t("imp")),
        ("するな", "negative imperative", _t("imp")),
        ("して", "-te", TE),
        ("した", "past", _t("ta")),
        ("したら", "-tara (if/when)", _t("tara")),
        ("したり", "-tari", _t("tari")),
        ("しないで", "-naide (without doing)", TE),
        ("せぬ", "-nu (classical negative)", _t("nu")),
        ("せん", "-n (negative)", NEG_N),
        ("せざる", "-zaru (classical negative)", _t("attr")),
        ("せねば", "-neba (unless; must)", _t("ba")),
        ("せにゃ", "-nya (-neba)", _t("ba")),
        ("するまい", "-mai (will not; probably not)", _t("mai")),
        ("すまい", "-mai (will not; probably not)", _t("mai")),
        ("しまい", "-mai (will not; probably not)", _t("mai")),
        ("しようか", "volitional (-ka)", _t("vol")),
        ("しよっか", "volitional (-kka)", _t("vol")),
        ("すりゃ", "-ba (contracted)", _t("ba")),
        ("せえへん", "negative (Kansai -hen)", HEN),
        ("せーへん", "negative (Kansai -hen)", HEN),
        ("しいひん", "negative (Kansai -hin)", HEN),
        ("しーひん", "negative (Kansai -hin)", HEN),
        ("せんとする", "-n to suru (about to)", VS),
    ]:
        add(surface, "する", takes, VS, name)
        if surface[0] in "しすさせ" and not surface.startswith(("しい", "しー", "せえ", "せー")):
            # する written in kanji: 為ます, 為ない, 為た, 為れば (never 為れる: that is no form)
            add("為" + surface[1:], "為る", takes, VS, name)
    add("する", "", VS, _t("vs"), None)  # 勉強する -> the noun 勉強 tagged vs in JMdict

    # --- -ずる verbs (論ずる) share the ichidan forms of their -じる twin (論じる) and keep a few of
    # their own; either spelling finds whichever the dictionary lists
    add("じる", "ずる", V1, VZ, "-jiru = -zuru")
    add("ずる", "じる", VZ, V1, "-zuru = -jiru")
    for surface, name, takes in [
        ("ずれば", "-ba (if)", _t("ba")),
        ("ぜず", "-zu (without)", _t("zu")),
        ("ぜずに", "-zu (without)", _t("zu")),
        ("ぜぬ", "-nu (classical negative)", _t("nu")),
        ("ぜよ", "imperative", _t("imp")),
        ("ぜられる", "passive", V1),
        ("ぜさせる", "causative", V1),
        ("ぜざる", "-zaru (classical negative)", _t("attr")),
    ]:
        add(surface, "ずる", takes, VZ, name)

    # --- 来る, in kana and with the kanji (the kanji stays, only the reading changes)
    for kuru, stems in (
        ("くる", {"i": "き", "a": "こ", "e": "くれ", "k": "こ"}),
        ("来る", {"i": "来", "a": "来", "e": "来れ", "k": "来"}),
        ("來る", {"i": "來", "a": "來", "e": "來れ", "k": "來"}),  # the old form of the kanji
    ):
        add(stems["i"], kuru, STEM_I, VK, None)
        add(stems["a"] + "ない", kuru, ADJ_I, VK, "negative")
        add(stems["a"] + "ず", kuru, _t("zu"), VK, "-zu (without)")
        add(stems["a"] + "られる", kuru, V1, VK, "passive/potential")
        add(stems["a"] + "れる", kuru, V1, VK, "potential (colloquial)")
        add(stems["a"] + "させる", kuru, V1, VK, "causative")
        add(stems["e"] + "ば", kuru, _t("ba"), VK, "-ba (if)")
        add(stems["k"] + "よう", kuru, _t("vol"), VK, "volitional")
        add(stems["k"] + "い", kuru, _t("imp"), VK, "imperative")
        add(stems["i"] + "て", kuru, TE, VK, "-te")
        add(stems["i"] + "た", kuru, _t("ta"), VK, "past")
        add(stems["i"] + "たら", kuru, _t("tara"), VK, "-tara (if/when)")
        add(stems["i"] + "たり", kuru, _t("tari"), VK, "-tari")
        add(stems["a"] + "ずに", kuru, _t("zu"), VK, "-zu (without)")
        add(stems["a"] + "ないで", kuru, TE, VK, "-naide (without doing)")
        add(stems["a"] + "ぬ", kuru, _t("nu"), VK, "-nu (classical negative)")
        add(stems["a"] + "ん", kuru, NEG_N, VK, "-n (negative)")
        add(stems["a"] + "ざる", kuru, _t("attr"), VK, "-zaru (classical negative)")
        add(stems["a"] + "ねば", kuru, _t("ba"), VK, "-neba (unless; must)")
        add(stems["a"] + "させられる", kuru, V1, VK, "causative-passive")
        add(kuru + "まい", kuru, _t("mai"), VK, "-mai (will not; probably not)")
        add(stems["a"] + "まい", kuru, _t("mai"), VK, "-mai (will not; probably not)")
        add(stems["k"] + "ようか", kuru, _t("vol"), VK, "volitional (-ka)")
        add(stems["k"] + "よっか", kuru, _t("vol"), VK, "volitional (-kka)")
        add(stems["e"][:-1] + "りゃ", kuru, _t("ba"), VK, "-ba (contracted)")
    # Kansai negatives of 来る: こおへん, けえへん, きいひん
    for kuru, (a, i) in (("くる", ("こ", "き")), ("来る", ("来", "来")), ("來る", ("來", "來"))):
        for surface in (a + "おへん", a + "ーへん", a + "へん", i + "いひん", i + "ーひん"):
            add(surface, kuru, HEN, VK, "negative (Kansai -hen)")
        add(("け" if a == "こ" else a) + "えへん", kuru, HEN, VK, "negative (Kansai -hen)")

    # --- -te auxiliaries: 食べている -> 食べて (then the -te rules above)
    for aux, aux_type, name, contracted in TE_AUXILIARIES:
        add("て" + aux, "て", aux_type, TE, name)
        add("で" + aux, "で", aux_type, TE, name)
        for te_form, de_form, short_name in contracted:
            add(te_form, "て", aux_type, TE, short_name)
            add(de_form, "で", aux_type, TE, short_name)

    # --- -ては and its contraction (食べちゃ); -ないで is a -te form of each verb class above
    add("ては", "て", _t("teha"), TE, "-te wa")
    add("では", "で", _t("teha"), TE, "-te wa")
    add("ちゃ", "て", _t("teha"), TE, "-cha (-te wa)")
    add("じゃ", "で", _t("teha"), TE, "-ja (-te wa)")
    add("ても", "て", _t("temo"), TE, "-temo (even if)")
    add("でも", "で", _t("temo"), TE, "-temo (even if)")
    # -たって (even if) on every past: 食べたって, 読んだって
    add("たって", "た", _t("temo"), _t("ta"), "-tatte (even if)")
    add("だって", "だ", _t("temo"), _t("ta"), "-tatte (even if)")
    # drawn-out contracted conditionals: 行きゃあ, 食べりゃー
    add("ゃあ", "ゃ", _t("ba"), _t("ba"), None)
    add("ゃー", "ゃ", _t("ba"), _t("ba"), None)
    # volitional + とする (try to): 食べようとした
    add("うとする", "う", VS, _t("vol"), "-ou to suru (try to)")

    # --- Kansai negatives (食べへん) have a past, -tara and -tari of their own
    for inflected, takes, name in [
        ("へんかった", _t("ta"), "past"),
        ("へんかったら", _t("tara"), "-tara (if/when)"),
        ("へんかったり", _t("tari"), "-tari"),
        ("ひんかった", _t("ta"), "past"),
    ]:
        add(inflected, inflected[:2], takes, HEN, name)
    # -ん negatives: 食べんかった, 行かんかったら
    for inflected, takes, name in [
        ("んかった", _t("ta"), "past"),
        ("んかったら", _t("tara"), "-tara (if/when)"),
        ("んで", TE, "-te"),
    ]:
        add(inflected, "ん", takes, NEG_N, name)

    # --- i-adjectives
    for inflected, takes, name in [
        ("く", _t("adv"), "adverbial (-ku)"),
        ("くて", TE, "-te"),
        ("かった", _t("ta"), "past"),
        ("くない", ADJ_I, "negative"),
        ("さ", _t("n"), "-sa (noun)"),
        ("ければ", _t("ba"), "-ba (if)"),
        ("かったら", _t("tara"), "-tara (if/when)"),
        ("かったり", _t("tari"), "-tari"),
        ("くありません", _t("masu"), "polite negative"),
        ("そう", ADJ_NA, "-sou (looks like)"),
        ("すぎる", V1, "too much"),
        ("かろう", _t("vol"), "volitional"),
        ("くなる", _t("v5r"), "becoming"),
        ("過ぎる", V1, "too much"),
        ("がる", _t("v5r"), "-garu (shows signs of)"),
        ("げ", ADJ_NA, "-ge (seeming)"),
        ("気", ADJ_NA, "-ge (seeming)"),
        ("き", _t("attr"), "-ki (classical attributive)"),
        ("けりゃ", _t("ba"), "-ba (contracted)"),
        ("きゃ", _t("ba"), "-ba (contracted)"),
        ("くては", _t("teha"), "-te wa"),
        ("くちゃ", _t("teha"), "-cha (-te wa)"),
        ("くたって", _t("temo"), "-kutatte (even if)"),
        ("すぎ", _t("n"), "too much (noun)"),
        ("過ぎ", _t("n"), "too much (noun)"),
        ("いです", _t("masu"), "polite"),
        ("かったです", _t("masu"), "polite past"),
        ("う", _t("adv"), "-u stem (Kansai, polite)"),  # 高う, 高うて, 高うございます
        ("うて", TE, "-te (Kansai)"),
        ("え", _t("ee"), "colloquial (-ee)"),  # 凄え, 痛え
        ("ぇ", _t("ee"), "colloquial (-ee)"),
        ("ー", _t("ee"), "colloquial (-ee)"),
    ]:
        add(inflected, "い", takes, ADJ_I, name)
    add("さそう", "い", ADJ_NA, ADJ_I, "-sou (looks like)")  # よさそう, なさそう
    # the vowel changes of colloquial speech: すごい -> すげえ, ない -> ねえ, わるい -> わりい
    for a_row, e_row in zip("かがさざただなばまらわ", "けげせぜてでねべめれえ", strict=True):
        o_row = (
            "こごそぞとどのぼもろ"[("かがさざただなばまら").index(a_row)] if a_row != "わ" else ""
        )
        for before in (a_row, o_row):
            if not before:
                continue
            for tail in ("え", "ぇ", "ー"):
                add(e_row + tail, before + "い", _t("ee"), ADJ_I, "colloquial (-ee)")
    for u_row, i_row in zip("くぐすつぬぶむる", "きぎしちにびみり", strict=True):
        for tail in ("い", "ぃ", "ー"):
            add(i_row + tail, u_row + "い", _t("ee"), ADJ_I, "colloquial (-ii)")
    add("えー", "よい", _t("ee"), ADJ_I, "colloquial (-ee)")  # つよい -> つえー
    add("ええ", "よい", _t("ee"), ADJ_I, "colloquial (-ee)")
    # the -u stems of Kansai and polite speech with their sound changes: たこう(て), おいしゅう
    for a_row, o_long in zip(
        "かがさたなばまら",
        ("こう", "ごう", "そう", "とう", "のう", "ぼう", "もう", "ろう"),
        strict=True,
    ):
        for tail, takes, name in (
            ("", _t("adv"), "-u stem (Kansai, polite)"),
            ("て", TE, "-te (Kansai)"),
        ):
            add(o_long + tail, a_row + "い", takes, ADJ_I, name)
    for i_row in "しきじ":
        for tail, takes, name in (
            ("", _t("adv"), "-u stem (Kansai, polite)"),
            ("て", TE, "-te (Kansai)"),
        ):
            add(i_row + "ゅう" + tail, i_row + "い", takes, ADJ_I, name)

    # --- na-adjectives with the copula (also -sou forms, which behave as na-adjectives)
    for inflected, takes, name in [
        ("だ", _t("da"), "copula"),
        ("だった", _t("ta"), "past"),
        ("で", TE, "-te"),
        ("じゃない", ADJ_I, "negative"),
        ("ではない", ADJ_I, "negative"),
        ("です", _t("masu"), "polite"),
        ("でした", _t("masu"), "polite past"),
        ("じゃありません", _t("masu"), "polite negative"),
        ("ではありません", _t("masu"), "polite negative"),
        ("じゃありませんでした", _t("masu"), "polite past negative"),
        ("ではありませんでした", _t("masu"), "polite past negative"),
        ("な", _t("attr"), "attributive (-na)"),
        ("に", _t("adv"), "adverbial (-ni)"),
        ("なら", _t("ba"), "-nara (if)"),
        ("だろう", _t("vol"), "presumptive"),
        ("でしょう", _t("vol"), "presumptive"),
        ("だったら", _t("tara"), "-tara (if/when)"),
        ("だったり", _t("tari"), "-tari"),
        ("じゃなかったら", _t("tara"), "-tara (if/when)"),
        ("さ", _t("n"), "-sa (noun)"),
        ("そう", ADJ_NA, "-sou (looks like)"),
        ("すぎる", V1, "too much"),
        ("過ぎる", V1, "too much"),
    ]:
        add(inflected, "", takes, ADJ_NA, name)
    return rules


RULES: list[Rule] = _build_rules()
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
    seen = {(word, None)}
    frontier = [start]
    for _ in range(MAX_DEPTH):
        next_frontier = []
        for cand in frontier:
            text = cand.text
            for k in range(min(len(text), _MAX_SUFFIX), -1, -1):
                rules = _BY_SUFFIX.get(text[len(text) - k :] if k else "")
                if not rules:
                    continue
                stem = text[: len(text) - k]
                for rule in rules:
                    if cand.types is not None and not (rule.takes & cand.types):
                        continue
                    base = stem + rule.base
                    if not base or (k == 0 and cand.types is None):
                        continue  # an empty suffix only applies inside a chain (stem -> る)
                    key = (base, rule.gives)
                    if key in seen:
                        continue
                    seen.add(key)
                    name = rule.name
                    if name == "-te" and cand.types == TE:
                        name = None  # "-te iru" already says it; "-te · -te iru" would be noise
                    steps = ((name,) if name else ()) + cand.steps
                    new = Candidate(base, rule.gives, steps)
                    found.append(new)
                    next_frontier.append(new)
        frontier = next_frontier
        if not frontier:
            break
    return tuple(found)


def agrees(candidate: Candidate, entry_pos: set[str] | frozenset[str]) -> bool:
    """Does the entry's part of speech fit the type the deinflection chain ended with?"""
    return candidate.types is None or bool(candidate.types & entry_pos)
