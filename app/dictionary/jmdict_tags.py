"""JMdict part-of-speech and usage tags.

jamdict-data stores the expanded entity descriptions ("Godan verb with 'ku' ending"); we show and
match on the short JMdict entity codes ("v5k"), which is what learners know from Jisho and Yomitan.
The codes are JMdict's own entity names (data, not code of another project).
"""

from __future__ import annotations

POS_CODES: dict[str, str] = {
    "noun (common) (futsuumeishi)": "n",
    "noun or participle which takes the aux. verb suru": "vs",
    "expressions (phrases, clauses, etc.)": "exp",
    "nouns which may take the genitive case particle 'no'": "adj-no",
    "adjectival nouns or quasi-adjectives (keiyodoshi)": "adj-na",
    "transitive verb": "vt",
    "intransitive verb": "vi",
    "Ichidan verb": "v1",
    "Ichidan verb - kureru special class": "v1-s",
    "Ichidan verb - zuru verb (alternative form of -jiru verbs)": "vz",
    "adverb (fukushi)": "adv",
    "adverb taking the 'to' particle": "adv-to",
    "Godan verb with 'u' ending": "v5u",
    "Godan verb with 'u' ending (special class)": "v5u-s",
    "Godan verb with 'ku' ending": "v5k",
    "Godan verb - Iku/Yuku special class": "v5k-s",
    "Godan verb with 'gu' ending": "v5g",
    "Godan verb with 'su' ending": "v5s",
    "Godan verb with 'tsu' ending": "v5t",
    "Godan verb with 'nu' ending": "v5n",
    "Godan verb with 'bu' ending": "v5b",
    "Godan verb with 'mu' ending": "v5m",
    "Godan verb with 'ru' ending": "v5r",
    "Godan verb with 'ru' ending (irregular verb)": "v5r-i",
    "Godan verb - -aru special class": "v5aru",
    "adjective (keiyoushi)": "adj-i",
    "adjective (keiyoushi) - yoi/ii class": "adj-ix",
    "'taru' adjective": "adj-t",
    "noun or verb acting prenominally": "adj-f",
    "pre-noun adjectival (rentaishi)": "adj-pn",
    "noun, used as a suffix": "n-suf",
    "noun, used as a prefix": "n-pref",
    "interjection (kandoushi)": "int",
    "suffix": "suf",
    "prefix": "pref",
    "pronoun": "pn",
    "counter": "ctr",
    "particle": "prt",
    "conjunction": "conj",
    "auxiliary verb": "aux-v",
    "auxiliary": "aux",
    "auxiliary adjective": "aux-adj",
    "numeric": "num",
    "copula": "cop",
    "suru verb - special class": "vs-s",
    "suru verb - included": "vs-i",
    "su verb - precursor to the modern suru": "vs-c",
    "Kuru verb - special class": "vk",
    "irregular ru verb, plain form ends with -ri": "vs-c",
    "irregular nu verb": "vn",
    "'ku' adjective (archaic)": "adj-ku",
    "'shiku' adjective (archaic)": "adj-shiku",
    "archaic/formal form of na-adjective": "adj-nari",
    "unclassified": "unc",
    "verb unspecified": "v-unspec",
}

MISC_CODES: dict[str, str] = {
    "word usually written using kana alone": "uk",
    "abbreviation": "abbr",
    "archaism": "arch",
    "yojijukugo": "yoji",
    "obscure term": "obsc",
    "onomatopoeic or mimetic word": "on-mim",
    "colloquialism": "col",
    "slang": "sl",
    "idiomatic expression": "id",
    "proverb": "proverb",
    "honorific or respectful (sonkeigo) language": "hon",
    "obsolete term": "obs",
    "derogatory": "derog",
    "polite (teineigo) language": "pol",
    "humble (kenjougo) language": "hum",
    "sensitive": "sens",
    "historical term": "hist",
    "jocular, humorous term": "joc",
    "vulgar expression or word": "vulg",
    "familiar language": "fam",
    "children's language": "chn",
    "Internet slang": "net-sl",
    "dated term": "dated",
    "literary or formal term": "form",
    "female term or language": "fem",
    "male term or language": "male",
    "poetical term": "poet",
    "manga slang": "m-sl",
    "rare": "rare",
}


def pos_code(description: str) -> str:
    """Short code for a POS description; archaic yodan/nidan classes get a generic code."""
    code = POS_CODES.get(description)
    if code:
        return code
    if description.startswith("Yodan verb"):
        return "v4"
    if description.startswith("Nidan verb"):
        return "v2"
    return description


def misc_code(description: str) -> str:
    return MISC_CODES.get(description, description)
