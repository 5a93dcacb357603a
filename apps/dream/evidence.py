"""The evidence a careful reader weighs before saying two anchors are one entity (ADR 0059).
Pure: no framework imports.

A decision sees two anchors of one type, each with its name, the other names it was mentioned
under, a few short texts that mention it and the frames it is an arm of, plus the other names
of the type that resemble either (``namesakes``). Rules, precision first — a wrong merge is
worse than a missed one:

- **Vetoes** (checked before any reason to merge): different types; different numbers, dates or
  codes (an initial of a person's name is not a code); a frame with both as distinct arms (two
  participants of one event are two entities); a stated attribute with different values (home
  city, birthplace, origin, age, job).
- **People**: equal names (after a greeting or honorific the extractor kept, "Hey Mel"); a
  first name and a surname that agree, the first name written out, as an initial or as a short
  form ("J. Smith" / "John Smith", "Mel" / "Melanie"); a lone first name or surname against a
  full name when no namesake of the type fits as well ("Maria" is not merged into "Maria Lopez"
  when "Maria Chen" exists). Same first name and different surnames are different people.
- **Roles** ("my cousin", "Caroline's mom"): one with the person the texts bind to the role
  ("my cousin Ines", "Ines, my cousin", "Ines is my cousin"); never when they bind it to two
  different names, or to none.
- **Other types**: one name's key tokens contain the other's around the same head word, with no
  relation, role or contrast token in the difference ("steel bottle" ⊂ "stainless steel bottle").

The better-attested name represents a merge, a proper name over a role, then the longer name.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from apps.graph.keys import distinguishing_tokens, key_tokens
from apps.language.words import singularize

# Tokens that make a longer name a different thing than the name it contains: relations,
# roles and parts ("Caroline's mom"; "bottle cap" is caught by the head rule), and contrasts.
CONFLICT_TOKENS: frozenset[str] = frozenset(
    """
    ex former old new mini junior jr senior sr fake toy replica not non anti mom mum mother dad father
    sister brother son daughter wife husband partner friend boyfriend girlfriend kid child baby cousin aunt
    uncle niece nephew grandma grandpa grandmother grandfather parent family boss coworker colleague team
    club group class store shop company office school house home neighbor neighbour dog cat pet
    """.split()
)
# Nouns that name a person by their relation to someone: a role anchor stands for whoever the
# text binds to it.
ROLE_NOUNS: frozenset[str] = frozenset(
    """
    mom mum mother dad father sister brother son daughter wife husband partner friend boyfriend girlfriend
    cousin aunt uncle niece nephew grandma grandpa grandmother grandfather grandson granddaughter stepmom
    stepdad stepson stepdaughter fiance fiancee spouse boss manager coworker colleague neighbor neighbour
    roommate flatmate teacher mentor coach doctor therapist landlord landlady tutor assistant bestie
    """.split()
)
# Words an extractor sometimes keeps in front of a name ("Hey Mel", "Dr. Chen").
GREETINGS: frozenset[str] = frozenset(
    """hey hi hello hiya bye goodbye thanks thank congrats congratulations woohoo wow yay dear oh welcome
    yeah yep yes ok okay aw aww sure cool great awesome nice""".split()
)
HONORIFICS: frozenset[str] = frozenset("mr mrs ms mx miss dr prof sir madam".split())
# Legal forms after an organization's name ("Acme Corp Ltd" is "Acme Corp").
LEGAL_FORMS: frozenset[str] = frozenset("ltd limited inc incorporated llc plc gmbh ag sa bv co".split())
# Common English short forms that are not prefixes of the full name.
SHORT_FORMS: dict[str, frozenset[str]] = {
    "bob": frozenset({"robert"}),
    "rob": frozenset({"robert"}),
    "bobby": frozenset({"robert"}),
    "bill": frozenset({"william"}),
    "will": frozenset({"william"}),
    "liz": frozenset({"elizabeth"}),
    "beth": frozenset({"elizabeth", "bethany"}),
    "betty": frozenset({"elizabeth"}),
    "kate": frozenset({"katherine", "catherine", "kathryn"}),
    "katie": frozenset({"katherine", "catherine", "kathryn"}),
    "cathy": frozenset({"catherine"}),
    "mike": frozenset({"michael"}),
    "jim": frozenset({"james"}),
    "jimmy": frozenset({"james"}),
    "dick": frozenset({"richard"}),
    "rick": frozenset({"richard", "eric"}),
    "peggy": frozenset({"margaret"}),
    "maggie": frozenset({"margaret"}),
    "meg": frozenset({"margaret", "megan"}),
    "tony": frozenset({"anthony"}),
    "jack": frozenset({"john"}),
    "johnny": frozenset({"john"}),
    "ted": frozenset({"edward", "theodore"}),
    "ned": frozenset({"edward"}),
    "sandy": frozenset({"alexandra", "sandra"}),
    "sasha": frozenset({"alexandra", "alexander"}),
    "chuck": frozenset({"charles"}),
    "charlie": frozenset({"charles", "charlotte"}),
    "hank": frozenset({"henry"}),
    "harry": frozenset({"henry", "harold"}),
    "larry": frozenset({"lawrence"}),
    "peg": frozenset({"margaret"}),
    "sue": frozenset({"susan", "suzanne"}),
    "jenny": frozenset({"jennifer"}),
    "becky": frozenset({"rebecca"}),
    "nick": frozenset({"nicholas"}),
    "pat": frozenset({"patricia", "patrick"}),
}
MIN_PREFIX = 3  # a short form written as a prefix has at least 3 letters …
PREFIX_LETTERS = MIN_PREFIX
MIN_PREFIX_GAP = 2  # … and the full name at least 2 more ("Dan" / "Danny", not "Ann" / "Anna")

_POSSESSOR = r"(?:(?i:my|his|her|our|their|your)|[A-Z][\w'\u2019-]*?['\u2019]s)"
_NAME = r"([A-Z][a-z\u00c0-\u024f'\u2019-]+(?:\s+[A-Z][a-z\u00c0-\u024f'\u2019-]+)?)"
_ATTRIBUTE_PATTERNS: tuple[tuple[str, str], ...] = (
    ("lives in", r"(?:lives|is living|resides|is based|stays|now lives)\s+in"),
    ("born in", r"(?:was born|is born)\s+in"),
    ("is from", r"(?:is|comes|came)\s+(?:originally\s+)?from"),
    ("works as", r"works\s+as\s+(?:a|an)"),
)
_PLACE = r"([A-Z][\w\u00c0-\u024f-]+(?:\s+[A-Z][\w\u00c0-\u024f-]+)?)"
_JOB = r"([a-z]+(?:\s+[a-z]+)?)"
_AGE = r"(?:,\s*|\s+(?:is|was|turned|turns)\s+)(\d{1,3})(?:\s+years?\s+old|\s*,|\s*\.|\s*$)"


@dataclass(frozen=True)
class Side:
    """One anchor as a decision sees it."""

    name: str
    aliases: tuple[str, ...] = ()
    mention_count: int = 0
    mentions: tuple[str, ...] = ()  # short texts that mention it
    frames: frozenset[str] = frozenset()  # ids of the frames it is an arm of

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys([self.name, *self.aliases]))


@dataclass(frozen=True)
class Decision:
    same: bool
    reason: str
    representative: str | None = None


@dataclass(frozen=True)
class PersonName:
    """A name split for comparison: lower-case tokens without greetings, honorifics or a possessive."""

    tokens: tuple[str, ...]
    proper: bool  # written as a proper name (capitalized tokens or initials)

    @property
    def first(self) -> str:
        return self.tokens[0]

    @property
    def last(self) -> str:
        return self.tokens[-1]


_SPLIT = re.compile(r"[^\w'\u2019.-]+")


@functools.lru_cache(maxsize=65536)
def person_name(name: str) -> PersonName:
    raw = [t.strip(".,-'\u2019") for t in _SPLIT.split(name.strip()) if t.strip(".,-'\u2019")]
    raw = [re.sub(r"['\u2019]s$", "", t) for t in raw]
    raw = [part for t in raw for part in t.split(".") if part]  # "J.R." → "J", "R"
    while len(raw) > 1 and raw[0].lower() in GREETINGS | HONORIFICS:
        raw = raw[1:]
    proper = bool(raw) and all(t[:1].isupper() for t in raw)
    return PersonName(tokens=tuple(t.lower() for t in raw), proper=proper)


def given_names_agree(a: str, b: str) -> bool:
    """The same given name: written out, as an initial, or as a short form of the other."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    if len(short) == 1:
        return long.startswith(short)
    if long in SHORT_FORMS.get(short, frozenset()):
        return True
    return len(short) >= MIN_PREFIX and len(long) - len(short) >= MIN_PREFIX_GAP and long.startswith(short)


def _role_of(name: str) -> tuple[str | None, str] | None:
    """(possessor, role noun) of a role name ("my cousin", "Caroline's mom", "mom"), else None."""
    match = re.fullmatch(r"\s*(?:(my|his|her|our|their|your)\s+|([\w-]+)['\u2019]s\s+)?([A-Za-z]+)\s*", name)
    if match is None:
        return None
    role = singularize(match.group(3).lower())
    if role not in ROLE_NOUNS:
        return None
    possessor = match.group(2).lower() if match.group(2) else None
    return possessor, role


def bound_names(texts: Iterable[str], role: str, possessor: str | None = None) -> set[str]:
    """The names the texts bind to a role: "my cousin Ines", "Ines, my cousin", "Ines is my cousin"."""
    roles = rf"{role}s?"
    found: set[str] = set()
    patterns = (
        rf"\b({_POSSESSOR})\s+{roles}\s*,?\s+{_NAME}",
        rf"{_NAME}\s*,\s*({_POSSESSOR})\s+{roles}\b",
        rf"{_NAME}\s+(?:is|was)\s+({_POSSESSOR})\s+{roles}\b",
    )
    for text in texts:
        for number, pattern in enumerate(patterns):
            for match in re.finditer(pattern, text):
                owner, bound = (match.group(1), match.group(2)) if number == 0 else (match.group(2), match.group(1))
                if possessor is not None and owner.lower() not in {possessor + "'s", possessor + "\u2019s"}:
                    continue
                tokens = person_name(bound).tokens
                if tokens and tokens[0] not in GREETINGS and _role_of(tokens[0]) is None:
                    found.add(" ".join(tokens))
    return found


def stated_attributes(side: Side) -> dict[str, set[str]]:
    """Attribute → values the anchor's texts state of it, with one of its names as the subject."""
    found: dict[str, set[str]] = {}
    for name in side.names:
        subject = rf"\b{re.escape(name)}\b(?:,?\s+who)?\s+"
        for text in side.mentions:
            for attribute, verb in _ATTRIBUTE_PATTERNS:
                value = _JOB if attribute == "works as" else _PLACE
                for match in re.finditer(subject + verb + r"\s+" + value, text):
                    found.setdefault(attribute, set()).add(match.group(1).lower())
            for match in re.finditer(rf"\b{re.escape(name)}\b{_AGE}", text):
                found.setdefault("age", set()).add(match.group(1))
    return found


def contradiction(first: Side, second: Side) -> str | None:
    """The attribute both state with different values, if any."""
    mine, theirs = stated_attributes(first), stated_attributes(second)
    for attribute in sorted(set(mine) & set(theirs)):
        if not mine[attribute] & theirs[attribute]:
            return attribute
    return None


def codes_agree(anchor_type: str, first: str, second: str) -> bool:
    """Numbers, dates and codes agree; for people an initial matching the other name is not a code."""
    if anchor_type != "person":
        return distinguishing_tokens(first) == distinguishing_tokens(second)
    codes = [{t for t in distinguishing_tokens(n) if len(t) > 1} for n in (first, second)]
    return codes[0] == codes[1]


def _contained(short: list[str], long: list[str]) -> bool:
    if short[-1] != long[-1] or not set(short) <= set(long):
        return False
    return not (set(long) - set(short)) & CONFLICT_TOKENS


def _proper(names: Sequence[str], tokens: list[str]) -> bool:
    """A one-token name is contained only when written as a proper name ("Pride", not "home")."""
    return any(key_tokens(n) == tokens and n.strip()[:1].isupper() for n in names)


def _person_match(a: PersonName, b: PersonName, namesakes: Sequence[PersonName]) -> Decision | None:
    """Name evidence for two people; None when names alone neither join nor separate them."""
    if not (a.tokens and b.tokens):
        return None
    if a.tokens == b.tokens:
        return Decision(True, "same name")
    if not (a.proper and b.proper):
        return None
    if len(a.tokens) > 1 and len(b.tokens) > 1:
        if a.last != b.last:
            return Decision(False, "different surnames")
        if not given_names_agree(a.first, b.first):
            return Decision(False, "different given names")
        middles = [t for t in (a.tokens[1:-1], b.tokens[1:-1]) if t]
        if len(middles) == 2 and not all(given_names_agree(x, y) for x, y in zip(middles[0], middles[1], strict=False)):
            return Decision(False, "different middle names")
        return Decision(True, "given name and surname agree")
    lone, full = (a, b) if len(a.tokens) == 1 else (b, a)
    token = lone.first

    def fits(other: PersonName) -> bool:
        if len(other.tokens) == 1:
            return given_names_agree(token, other.first) and token != other.first
        return given_names_agree(token, other.first) or token == other.last

    if len(full.tokens) == 1:
        if not given_names_agree(lone.first, full.first):
            return Decision(False, "different names")
        short = min((lone.first, full.first), key=len)
        own = (lone.tokens, full.tokens)
        rivals = [n for n in namesakes if n.tokens not in own and len(n.tokens) == 1 and fits_short(short, n)]
        if rivals:
            return Decision(False, "short form fits another name too")
        return Decision(True, "short form of the name")
    if not fits(full):
        return Decision(False, "different names")
    rivals = [n for n in namesakes if n.tokens != full.tokens and len(n.tokens) > 1 and fits(n)]
    if rivals:
        return Decision(False, "lone name fits another full name too")
    return Decision(True, "lone name part of the full name")


def fits_short(short: str, other: PersonName) -> bool:
    return other.first != short and given_names_agree(short, other.first)


def _role_match(role_side: Side, person_side: Side, role: tuple[str | None, str]) -> Decision:
    possessor, noun = role
    texts = [*role_side.mentions, *person_side.mentions]
    bound = bound_names(texts, noun, possessor)
    person = person_name(person_side.name)
    if not bound or not person.proper:
        return Decision(False, "role bound to no name")
    candidates = {" ".join(person_name(n).tokens) for n in person_side.names}
    if len(bound) > 1:
        return Decision(False, "role bound to several names")
    (only,) = bound
    if only in candidates:
        return Decision(True, "role bound to the name by the text", person_side.name)
    return Decision(False, "role bound to another name")


def _representative(first: Side, second: Side) -> str:
    def rank(side: Side) -> tuple[bool, int, int, int, bool]:
        # A name without a greeting or honorific in front, then the better attested, then the fuller.
        clean = len(person_name(side.name).tokens) == len(key_tokens(side.name))
        return (
            clean,
            side.mention_count,
            len(key_tokens(side.name)),
            len(side.name),
            side.name == min(first.name, second.name),
        )

    chosen = max((first, second), key=rank)
    return chosen.name


@dataclass(frozen=True)
class Question:
    anchor_type: str
    first: Side
    second: Side
    namesakes: tuple[str, ...] = field(default=())
    second_type: str | None = None  # when the pair's types differ (a labelled pair may)


def decide(question: Question) -> Decision:
    """Same entity or not, with the reason and the representative of a merge."""
    first, second = question.first, question.second
    if question.second_type is not None and question.second_type != question.anchor_type:
        return Decision(False, "different types")
    if not codes_agree(question.anchor_type, first.name, second.name):
        return Decision(False, "different numbers, dates or codes")
    roles = (_role_of(first.name), _role_of(second.name))
    if question.anchor_type == "person" and (roles[0] is None) != (roles[1] is None):
        role_side, person_side = (first, second) if roles[0] is not None else (second, first)
        role = roles[0] or roles[1]
        assert role is not None
        decision = _role_match(role_side, person_side, role)
        if decision.same and (attribute := contradiction(first, second)):
            return Decision(False, f"different stated {attribute}")
        return decision
    if first.frames & second.frames:
        return Decision(False, "distinct participants of one frame")
    if attribute := contradiction(first, second):
        return Decision(False, f"different stated {attribute}")
    decision = _name_match(question)
    if decision.same:
        return Decision(True, decision.reason, _representative(first, second))
    return decision


def _thing_tokens(anchor_type: str, name: str) -> list[str]:
    tokens = key_tokens(name)
    while anchor_type == "organization" and len(tokens) > 1 and tokens[-1] in LEGAL_FORMS:
        tokens = tokens[:-1]
    return tokens


def _name_match(question: Question) -> Decision:
    first, second = question.first, question.second
    if question.anchor_type == "person":
        if any(role is not None for role in (_role_of(first.name), _role_of(second.name))):
            same_role = _role_of(first.name) == _role_of(second.name)
            return Decision(same_role, "same role of the same person" if same_role else "different roles")
        namesakes = [person_name(n) for n in question.namesakes]
        primary = _person_match(person_name(first.name), person_name(second.name), namesakes)
        if primary is not None and not primary.same:
            return primary
        verdicts = [
            verdict
            for a in first.names
            for b in second.names
            if (verdict := _person_match(person_name(a), person_name(b), namesakes)) is not None
        ]
        refusals = [v for v in verdicts if not v.same]
        if refusals:
            return refusals[0]
        if verdicts:
            return verdicts[0]
        return Decision(False, "names do not denote one person")
    forms_a = [t for n in first.names if (t := _thing_tokens(question.anchor_type, n))]
    forms_b = [t for n in second.names if (t := _thing_tokens(question.anchor_type, n))]
    for a in forms_a:
        for b in forms_b:
            if set(a) == set(b):
                return Decision(True, "same key")
            short, long = sorted((a, b), key=len)
            if _contained(short, long) and (len(short) > 1 or _proper([first.name, second.name], short)):
                return Decision(True, "one name contains the other")
    return Decision(False, "names do not denote one thing")


def name_tokens(name: str) -> set[str]:
    """The tokens a resembling name may share with ``name``: its person-name and key tokens."""
    return {*person_name(name).tokens, *key_tokens(name)}


def names_resemble(a: str, b: str) -> bool:
    """Worth a decision by name alone: a shared token, a short form or initial of a token, or
    one name's key tokens inside the other's (candidate generation's name lane)."""
    first, second = person_name(a), person_name(b)
    if not (first.tokens and second.tokens) or first.tokens == second.tokens:
        return bool(first.tokens) and first.tokens == second.tokens and a != b
    if set(first.tokens) & set(second.tokens):
        return True
    if any(given_names_agree(x, y) for x in first.tokens for y in second.tokens if len(x) > 1 or len(y) > 1):
        return True
    keys_a, keys_b = set(key_tokens(a)), set(key_tokens(b))
    return bool(keys_a and keys_b) and (keys_a <= keys_b or keys_b <= keys_a)


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
MENTION_TEXTS = 6  # sentences naming an anchor that its decision sees
MENTION_CHARS = 300


def naming_sentences(texts: Iterable[str], names: Sequence[str], *, limit: int = MENTION_TEXTS) -> list[str]:
    """The first ``limit`` distinct sentences of ``texts`` that name one of ``names`` (as words,
    any case), each cut to ``MENTION_CHARS``."""
    names = [n for n in dict.fromkeys(names) if n.strip()]
    if not names:
        return []
    pattern = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in names), re.IGNORECASE)
    found: list[str] = []
    for text in texts:
        for sentence in _SENTENCE.split(text):
            sentence = sentence.strip()[:MENTION_CHARS]
            if sentence and pattern.search(sentence) and sentence not in found:
                found.append(sentence)
                if len(found) == limit:
                    return found
    return found
