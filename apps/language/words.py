"""Words of English text: tokens, stems, lemma candidates, stop words and singulars. Pure.

Two normalizations, each with one job and one copy:

- :func:`stem` is the crude, consistent stem lexical matching compares on both sides
  (question and evidence, frames and source): "painted", "painting", "paints" → "paint".
- :func:`singularize` is the conservative singular of anchor keys (docs/architecture.md,
  anchor keys): only plural endings of tokens of four letters or more, so "apps" → "app" but
  "training" stays "training" while "trains" → "train".

Both are hand-written rather than a library stemmer (snowball, spaCy lemmas): keys and
lexical terms are stored and compared across records, and a different normalization would
change which names and words meet (ADR 0021).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from types import MappingProxyType

# Words that carry no topic of their own in a question or a memory.
STOPWORDS: frozenset[str] = frozenset(
    """a an the and or but nor of to in on at for with from by about as into onto than then so if
    is are was were be been being am do does did doing done has have had having will would can could
    should shall may might must what when where who whom whose which why how that this these those there
    here it its he she they them his her hers their theirs him i me my mine we us our ours you your yours
    any some all each every many much often long ever also just not no yes s t one ones kind kinds type
    types sort sorts thing things time times way ways lot lots get got else both common ago before after since
    until during first last latest earliest recently lately ever planning plan plans planned""".split()
)  # fmt: skip
_IRREGULAR_LEMMAS: Mapping[str, str] = MappingProxyType(
    {
        "went": "go", "gone": "go", "goes": "go", "bought": "buy", "made": "make", "wrote": "write",
        "written": "write", "drew": "draw", "drawn": "draw", "built": "build", "met": "meet", "flew": "fly",
        "flown": "fly", "flies": "fly", "took": "take", "taken": "take", "saw": "see", "seen": "see", "gave": "give",
        "given": "give", "got": "get", "gotten": "get", "taught": "teach", "ran": "run", "began": "begin",
        "begun": "begin", "did": "do", "done": "do", "does": "do", "has": "have", "had": "have", "was": "be",
        "were": "be", "is": "be", "are": "be", "been": "be", "am": "be", "ate": "eat", "eaten": "eat",
        "sang": "sing", "sung": "sing", "swam": "swim", "swum": "swim", "rode": "ride", "ridden": "ride",
        "left": "leave", "felt": "feel", "kept": "keep", "lost": "lose", "won": "win", "sold": "sell",
        "told": "tell", "thought": "think", "brought": "bring", "found": "find", "heard": "hear", "paid": "pay",
        "spent": "spend", "became": "become", "came": "come", "held": "hold", "led": "lead", "learnt": "learn",
        "children": "child", "wives": "wife", "women": "woman", "men": "man", "people": "person", "grew": "grow",
        "grown": "grow", "knew": "know", "known": "know", "chose": "choose", "chosen": "choose", "fell": "fall",
        "fallen": "fall", "wore": "wear", "worn": "wear", "caught": "catch", "sat": "sit", "stood": "stand",
        "sent": "send", "drove": "drive", "driven": "drive", "hung": "hang", "sewn": "sew", "threw": "throw",
        "thrown": "throw", "dug": "dig", "hid": "hide", "hidden": "hide", "broke": "break", "broken": "break",
        "spoke": "speak", "spoken": "speak", "cities": "city", "hobbies": "hobby", "parties": "party",
    }
)  # fmt: skip

# Chat's short forms and the word each stands for, which the fact reader reads them as ("my bf
# callum" states a boyfriend). Those of them that only stand in a sentence's frame (CHAT_NORMS:
# "w/", "u") the pipeline's tokenizer also keeps as one token whose norm is the word: the model
# reads norms, so "came home w/ a kitten" parses as "with a kitten" does, while the text (and
# every offset into it) stays as written. A noun's short form keeps its own norm: the parser
# has learnt short nouns as they are, and reparsing "dan's gf teaches it" only moves errors.
CHAT_NORMS: Mapping[str, str] = MappingProxyType(
    {
        "w/": "with", "w/o": "without", "b/c": "because", "cuz": "because", "coz": "because",
        "u": "you", "ur": "your", "pls": "please", "plz": "please", "abt": "about",
    }
)  # fmt: skip
CHAT_WORDS: Mapping[str, str] = MappingProxyType(
    {**CHAT_NORMS, "bf": "boyfriend", "gf": "girlfriend", "bday": "birthday", "tmrw": "tomorrow", "tmr": "tomorrow"}
)


# A word (letters and digits, with inner apostrophes and hyphens) or a sentence mark. A mark is
# one character that cannot start a word, so the words of TOKEN are exactly those of WORD.
_WORD = r"[A-Za-z0-9]+(?:['’][A-Za-z]+)*(?:-[A-Za-z0-9]+)*"
WORD = re.compile(_WORD)
TOKEN = re.compile(_WORD + r"|[.?!;]")
POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
# A picture shared in a message, written as a bracketed caption: "[shared an image: a photo of
# a tent on a hill]", "[photo: …]"; ``media`` is what was shared, ``caption`` what it shows.
SHARED_PICTURE = re.compile(
    r"\[\s*(?:(?:shared|sent|posted|attached|uploaded|showed)\s+)?(?:(?:an?|the|this)\s+)?"
    r"(?P<media>image|photo|photograph|picture|pic|screenshot|video|drawing|selfie)s?\b\s*(?:of\b|:)?\s*"
    r"(?P<caption>[^\]]*)\]",
    re.IGNORECASE,
)


# --- lexical matching ----------------------------------------------------------------------


def fold(word: str) -> str:
    """Lowercase, straight apostrophes, no possessive ``'s``."""
    return POSSESSIVE.sub("", word.lower().replace("’", "'"))


@functools.lru_cache(maxsize=16384)
def lemma_candidates(word: str) -> tuple[str, ...]:
    """The possible lemmas of one word: irregular forms, then the word and its suffix-stripped forms.

    Deliberately generous (``"making"`` → ``making, mak, make``): a candidate counts only if a
    table knows it, so a wrong candidate is harmless.
    """
    folded = fold(word)
    irregular = _IRREGULAR_LEMMAS.get(folded)
    if irregular is not None:
        return (irregular,)
    found = [folded]
    if len(folded) > 3:
        if folded.endswith("ies"):
            found.append(folded[:-3] + "y")
        if folded.endswith("es"):
            found += [folded[:-2], folded[:-1]]
        elif folded.endswith("s") and not folded.endswith(("ss", "us", "is")):
            found.append(folded[:-1])
        if folded.endswith("ied"):
            found.append(folded[:-3] + "y")
        if folded.endswith("ed"):
            found += [folded[:-2], folded[:-1]]
            if len(folded) > 4 and folded[-3] == folded[-4]:
                found.append(folded[:-3])  # planned → plan
        if folded.endswith("ing") and len(folded) > 4:
            found += [folded[:-3], folded[:-3] + "e"]
            if len(folded) > 5 and folded[-4] == folded[-5]:
                found.append(folded[:-4])  # swimming → swim
    return tuple(dict.fromkeys(found))


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude, consistent stem for lexical matching: "painted", "painting", "paints" → "paint".

    Used on both sides of every comparison (question and evidence), so only consistency
    matters: "make", "making" and "made" all become "mak".
    """
    folded = fold(word)
    folded = _IRREGULAR_LEMMAS.get(folded, folded)
    if not folded.isalpha():
        return folded
    out = folded
    if len(out) > 5 and out.endswith("ing"):
        out = _undouble(out[:-3])
    elif len(out) > 4 and out.endswith("ied"):
        out = out[:-3] + "y"
    elif len(out) > 4 and out.endswith("ed"):
        out = _undouble(out[:-2])
    elif len(out) > 4 and out.endswith("ies"):
        out = out[:-3] + "y"
    elif len(out) > 4 and out.endswith("es") and out[:-2].endswith(("s", "x", "ch", "sh", "z")):
        out = out[:-2]
    elif len(out) > 3 and out.endswith("s") and not out.endswith(("ss", "us", "is")):
        out = out[:-1]
    if len(out) >= 4 and out.endswith("e"):
        out = out[:-1]
    return out


def _undouble(stem_: str) -> str:
    if len(stem_) >= 4 and stem_[-1] == stem_[-2] and stem_[-1] not in "lsz":
        return stem_[:-1]
    return stem_


def words(text: str) -> list[str]:
    """The words of a text (letters and digits, with inner apostrophes and hyphens)."""
    return WORD.findall(text)


# "i'm", "we've", "don't", "can't": a stopword and its contracted auxiliary or negation.
_CONTRACTED_STOPWORD = re.compile(
    r"^(?:(?:i|you|we|they|he|she|it|that|there|who|what)'(?:m|re|ve|ll|d)"
    r"|(?:do|does|did|is|are|was|were|have|has|had|can|could|would|should|must|wo|ca|sha|ai)n't)$"
)


@functools.lru_cache(maxsize=65536)
def is_content_word(word: str) -> bool:
    folded = fold(word)
    return len(folded) > 1 and folded not in STOPWORDS and folded != "'" and not _CONTRACTED_STOPWORD.match(folded)


def _standing_for(table: tuple[tuple[str, str], ...]) -> Mapping[str, str]:
    """Each word of a table's second column → the word of its first it stands for."""
    return MappingProxyType({word: canonical for canonical, same in table for word in same.split()})


# Words for the same relative or role, each with the word that stands for them: a row about
# "my mum" is about the asked "mother".
SAME_WORD: Mapping[str, str] = _standing_for(
    (
        ("mother", "mum mom mama mommy mummy"),
        ("father", "dad papa daddy"),
        ("grandmother", "grandma granny nana"),
        ("grandfather", "grandpa granddad grandad"),
        ("manager", "boss supervisor"),
    )
)
# Chat's short forms and spelling variants of a word, each with the word: "my gf" is about the
# asked "girlfriend", "my fave" about a "favorite". Matched as whole words, before stemming
# ("fam" is "family", "fame" is not). For lexical matching only; a relation word of the fact
# reader is SAME_WORD's.
CHAT_WORD: Mapping[str, str] = _standing_for(
    (
        ("girlfriend", "gf"),
        ("boyfriend", "bf"),
        ("husband", "hubby"),
        ("family", "fam"),
        ("brother", "bro"),
        ("sister", "sis"),
        ("friend", "bff bestie"),
        ("kid", "kiddo kiddos"),
        ("favorite", "fave fav favourite"),
        ("competition", "comp"),
        ("birthday", "bday"),
        ("university", "uni"),
        ("apartment", "apt"),
        ("vacation", "vacay"),
        ("puppy", "pup"),
        ("picture", "pic pics"),
        ("conversation", "convo"),
        ("video", "vid"),
    )
)
_SAME: Mapping[str, str] = MappingProxyType({stem(word): stem(canonical) for word, canonical in SAME_WORD.items()})


def same_stem(term: str) -> str:
    """The stem that stands for a stem's word and its other words ("mum" → that of "mother")."""
    return _SAME.get(term, term)


def lexical_term(word: str) -> str:
    """The term a word is matched on: the stem of the word it stands for ("gf", "girlfriend")."""
    return same_stem(stem(CHAT_WORD.get(fold(word), word)))


_SAME_WORDS: tuple[str, ...] = tuple(
    dict.fromkeys(word for pair in (*SAME_WORD.items(), *CHAT_WORD.items()) for word in pair)
)


@functools.lru_cache(maxsize=4096)
def same_words(word: str) -> tuple[str, ...]:
    """A word and the other words that stand for the same thing ("girlfriend": "gf")."""
    target = lexical_term(word)
    return (word, *(other for other in _SAME_WORDS if other != fold(word) and lexical_term(other) == target))


def content_stems(text: str) -> frozenset[str]:
    """The stems of a text's content words: what lexical coverage and paraphrase checks compare."""
    return frozenset(stem(word) for word in words(text) if is_content_word(word))


# --- singulars (anchor keys) ----------------------------------------------------------------

# Only tokens of at least this many characters are singularized ("bus", "gas", "yes" never are).
MIN_SINGULARIZE_LENGTH = 4

# Words that end like plurals but are not (or whose plural is not regular); checked first.
_NOT_PLURAL: frozenset[str] = frozenset(
    {
        # mass nouns and fields of study
        "news", "series", "species", "means", "physics", "economics", "politics", "mathematics", "athletics",
        "gymnastics", "aerobics", "robotics", "genetics", "ethics", "linguistics", "electronics", "logistics",
        "acoustics", "optics", "aesthetics", "diabetes", "measles", "mumps", "rabies", "herpes", "clothes",
        "thanks", "always", "perhaps", "sometimes", "towards", "afterwards", "besides", "nowadays", "whereas",
        "headquarters", "lens", "chaos", "cosmos", "ethos", "pathos", "logos", "kudos", "pants", "jeans",
        # words ending in -as, -es or -os whose singular is themselves
        "alias", "atlas", "bias", "canvas", "christmas", "pancreas", "texas", "kansas", "arkansas", "vegas",
        "bahamas", "midas", "judas", "thomas", "nicholas", "douglas", "lucas", "jonas", "elias", "tobias",
        "andreas", "matthias", "silas", "james", "charles", "jones", "agnes", "hughes", "rhodes", "andes",
        "hermes", "mercedes", "achilles", "socrates", "hercules", "angeles", "wales", "athens", "brussels",
        "netherlands", "philippines", "maldives", "seychelles", "barbados", "honduras", "carlos", "marcos",
        "santos", "lagos", "mars", "paris", "illinois", "tennis", "yes", "this", "thus",
    }
)  # fmt: skip

# Irregular plurals and plurals whose singular a suffix rule would get wrong.
_IRREGULAR: dict[str, str] = {
    "children": "child", "women": "woman", "teeth": "tooth", "geese": "goose", "mice": "mouse",
    "feet": "foot", "knives": "knife", "wives": "wife", "lives": "life", "wolves": "wolf",
    "shelves": "shelf", "halves": "half", "thieves": "thief", "scarves": "scarf", "loaves": "loaf",
    "calves": "calf", "elves": "elf", "selves": "self", "potatoes": "potato", "tomatoes": "tomato",
    "heroes": "hero", "echoes": "echo", "vetoes": "veto", "volcanoes": "volcano", "mosquitoes": "mosquito",
    "torpedoes": "torpedo", "dominoes": "domino", "analyses": "analysis", "crises": "crisis",
    "theses": "thesis", "diagnoses": "diagnosis", "hypotheses": "hypothesis", "oases": "oasis",
    "parentheses": "parenthesis", "synopses": "synopsis", "emphases": "emphasis", "gases": "gas",
    "canvases": "canvas", "aliases": "alias", "atlases": "atlas", "biases": "bias", "quizzes": "quiz",
    "excuses": "excuse", "abuses": "abuse", "fuses": "fuse", "muses": "muse", "refuses": "refuse",
    "recluses": "recluse", "misuses": "misuse", "uses": "use",
}  # fmt: skip

# Nouns ending in -ie (their plural -ies must not become -y: "movies" → "movie", not "movy").
_IE_NOUNS: frozenset[str] = frozenset(
    {
        "movie", "cookie", "zombie", "calorie", "rookie", "selfie", "hippie", "brownie", "smoothie", "goalie",
        "auntie", "genie", "prairie", "sweetie", "veggie", "foodie", "indie", "hoodie", "birdie", "lingerie",
        "newbie", "techie", "roomie", "bestie", "cutie", "pixie", "freebie", "barbie", "magpie", "necktie",
        "collie", "sortie", "yuppie", "junkie", "aussie", "boogie", "eerie", "walkie", "talkie", "bootie",
    }
)  # fmt: skip

# Nouns ending in -che (their plural -ches must keep the e: "headaches" → "headache").
_CHE_ENDINGS: tuple[str, ...] = (
    "ache", "cache", "niche", "quiche", "avalanche", "moustache", "mustache", "psyche", "creche", "cliche",
    "pastiche", "douche", "tranche", "attache", "microfiche",
)  # fmt: skip

_VOWELS = frozenset("aeiou")


def _singular_ies(token: str) -> str:
    stem = token[:-3]
    if len(stem) <= 1 or stem + "ie" in _IE_NOUNS:  # "pies", "ties"; "movies"
        return token[:-1]
    return stem + "y"  # "cities", "puppies", "hobbies"


def _singular_es(token: str) -> str | None:
    """The singular of a token ending in -es when the -es is a plural ending, else None."""
    if token.endswith(("sses", "xes", "shes", "zzes")):  # classes, boxes, dishes, buzzes
        return token[:-2]
    if token.endswith("ches"):
        stem = token[:-2]
        return stem + "e" if (stem + "e").endswith(_CHE_ENDINGS) else stem  # headaches / watches
    if token.endswith("uses") and len(token) >= 5 and token[-5] not in _VOWELS:
        return token[:-2]  # bonuses, viruses, campuses, buses (not houses, causes)
    return None


def singularize(token: str) -> str:
    """The conservative singular of one lowercase token; tokens under four letters are kept."""
    if len(token) < MIN_SINGULARIZE_LENGTH or not token.isalpha() or token in _NOT_PLURAL:
        return token
    irregular = _IRREGULAR.get(token)
    if irregular is not None:
        return irregular
    if not token.endswith("s") or token.endswith(("ss", "us", "is")):  # glass, campus, analysis
        return token
    if token.endswith("ies"):
        return _singular_ies(token)
    if token.endswith("es"):
        singular = _singular_es(token)
        if singular is not None:
            return singular
    return token[:-1]  # apps, gallons, trains, houses, photos


# Tokens as budgets count them: words and punctuation marks.
_BUDGET_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Words and punctuation marks: ``"Hello, world!"`` is 4 tokens."""
    return len(_BUDGET_TOKEN.findall(text))


def truncate_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of ``text`` that counts at most ``budget`` tokens."""
    end = 0
    for count, token in enumerate(_BUDGET_TOKEN.finditer(text), start=1):
        if count > budget:
            break
        end = token.end()
    return text[:end]


HEADING_CHARS = 100  # a line this short that ends no sentence heads what follows it


def is_heading_line(text: str) -> bool:
    """One short line that ends no sentence: "## Restoring a replica", "4. Expenses",
    "ARTICLE 7 - SECURITY DEPOSIT"."""
    line = text.strip()
    return 0 < len(line) <= HEADING_CHARS and "\n" not in line and not line.endswith((".", "!", "?", ";", ","))


# Endings of an inflected English word, each with what replaces it in the word it is made from.
INFLECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ies", ("y",)),
    ("es", ("", "e")),
    ("s", ("",)),
    ("ed", ("", "e")),
    ("ing", ("", "e")),
)
GERUND = INFLECTIONS[-1:]


def uninflected(
    word: str, endings: tuple[tuple[str, tuple[str, ...]], ...] = INFLECTIONS, *, shortest: int = 3
) -> set[str]:
    """What ``word`` may be an inflection of by one of ``endings`` ("varies" → vary, "hiking" →
    hike, "swimming" → swim), each at least ``shortest`` letters before its replacement; empty
    when it ends in none of them."""
    forms: set[str] = set()
    for ending, replacements in endings:
        stem = word.removesuffix(ending)
        if stem == word or len(stem) < shortest:
            continue
        forms |= {stem + replacement for replacement in replacements}
        if stem[-1] == stem[-2]:
            forms.add(stem[:-1])  # "swimming", "running"
    return forms
