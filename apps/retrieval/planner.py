"""The deterministic query planner (docs/architecture.md, "Retrieval plane"). Pure.

``plan_query`` reads a question with regular expressions and small word tables, no model and
no parser (≈0.1 ms a question), and returns a :class:`~apps.retrieval.types.Plan`:

- **Operator** by cue, in this precedence (our choice; the paper names the operators only):
  count ("how many", "how often", "number of"; but "how many years/weeks …" asks a time) >
  intersection ("both", "in common", "alike"; "share", "same", "together" when two names are
  joined by "and") > temporal, strong cues ("when" opening a clause, "what date/day/year/
  month/time", "how long (ago)", "since when", "how many days …") > list-union ("list",
  "what kinds/types/sorts", "what activities", "which … all", "what else", or a what/which
  question about a plural noun: "What instruments does …", "What are Priya's hobbies?", or a
  what/where/which question in the present perfect: "Where has Melanie camped?") >
  temporal, weak cues ("before", "after", "first", "last time", "earliest", "most recent") >
  single. A list question with a weak temporal cue ("Which books did she read after moving?")
  stays a list and keeps the cue as a temporal constraint.
- **Relation families**: :data:`RELATION_FAMILIES`, canonical relations with their surface
  forms, matched on lemmas from :func:`lemma_candidates` (irregular forms plus suffix
  stripping). Auxiliary "have" ("has Priya been …", "have in common") and the future "going
  to <verb>" are not relation cues.
- **Constraints**: named entities are capitalized spans not at a sentence start (months,
  weekdays and "I" excluded; "of"/"the" may join a span: "Bank of America") plus quoted phrases;
  numbers are the question's digits; keywords and content stems drive lexical matching.
- **Objects**: quoted phrases and the named entities after a relation cue that are not its
  subject ("When did Priya buy the Suica card?" → "Suica"). Conservative on purpose: the
  relation lane keeps only frames that contain a named object (paper A.3).
- **Answer types** and **role hints** from the wh-word and the position of each name.
- **Temporal constraints**: dates via :func:`apps.language.dates.find_dates` (relative
  phrases only when ``now`` is given), before/after relations to a named date, and orders.
- **Future**: the question asks about a plan ("will", "going to", "planning to", "next",
  "upcoming"); scoring then does not penalize planned frames (our choice: the paper's penalty
  is for questions about what happened).
- **Time focus**: ``present`` when the question asks how things are now (present tense, no
  cue of the past or of a change such as "before", "used to", "previously", "moved", no date
  named), else ``history``; search ranks current values first only for ``present``
  (apps.retrieval.currency).
- **The subject spoken of**: :func:`spoken_of` rewrites a question in the first person ("Where
  do I live?", "the user's sister") or by one of the subject's names into the third person of
  the name the subject's own turns speak under (ADR 0095), before it is planned.
- **Budgets** from :data:`OPERATOR_BUDGETS`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from types import MappingProxyType

from apps.graph.keys import anchor_key
from apps.language.calendar import MONTH_AND_WEEKDAY_NAMES, month_alternation, month_number, weekday_alternation
from apps.language.dates import Precision, ResolvedDate, Tense, find_dates
from apps.language.lexicon import ACTIVITY_FAMILIES, RELATION_FAMILIES, RoleGroup, family_forms
from apps.language.words import (
    POSSESSIVE,
    STOPWORDS,
    TOKEN,
    content_stems,
    fold,
    is_content_word,
    lemma_candidates,
    same_words,
    words,
)
from apps.retrieval.types import (
    AnswerType,
    Budgets,
    Constraints,
    DateRange,
    Operator,
    Plan,
    RangeRelation,
    RelationFamily,
    RoleHint,
    TemporalConstraints,
    TemporalOrder,
    TimeFocus,
)

# Row budgets per operator (base rows, cited rows). single (6, 4) and count (8, 12)
# are the design's values; temporal, intersection and list-union are our choice.
OPERATOR_BUDGETS: Mapping[Operator, Budgets] = MappingProxyType(
    {
        "single": Budgets(base_rows=6, cited_rows=4),
        "temporal": Budgets(base_rows=6, cited_rows=6),
        "intersection": Budgets(base_rows=6, cited_rows=8),
        "list-union": Budgets(base_rows=8, cited_rows=10),
        "count": Budgets(base_rows=8, cited_rows=12),
    }
)

_AUXILIARIES: frozenset[str] = frozenset(
    "is are was were do does did has have had will would can could should shall might must am".split()
)
_NOT_ENTITIES: frozenset[str] = MONTH_AND_WEEKDAY_NAMES | frozenset({"i", "i'm", "i've", "i'd", "i'll"})
_SPAN_JOINERS: frozenset[str] = frozenset({"of", "the", "de", "la", "du", "van", "von", "&"})
_DETERMINERS: frozenset[str] = frozenset("a an the my his her their our your its this that these those some".split())
_TIME_UNITS: frozenset[str] = frozenset(
    "second seconds minute minutes hour hours day days week weeks month months year years decade decades".split()
)
# Words that name a time rather than a thing: constraints in T_q, never keywords.
_NOT_KEYWORDS: frozenset[str] = (
    MONTH_AND_WEEKDAY_NAMES
    | _TIME_UNITS
    | frozenset("weekend weekends yesterday today tomorrow tonight morning evening night next past".split())
)

# Past participles that show a "have" is an auxiliary ("has Priya been", "have you made").
_PARTICIPLES: frozenset[str] = frozenset(
    """been done gone made had read met bought built kept left taught found written drawn flown taken seen given
    gotten begun eaten sung swum ridden lost won sold told thought brought heard paid spent become come held led
    grown known chosen fallen worn caught sat stood sent driven hung sewn thrown broken spoken hidden""".split()
)  # fmt: skip

# A verb and particle that no longer mean the verb's family (our choice): "give up" is quitting.
_OTHER_SENSE_PHRASALS = frozenset({("give", "up")})

# The words a subject between an inverted "have" and its participle may take (our choice), the
# words it may open with, and the words that end it before any participle.
_INVERTED_SUBJECT_WORDS = 7
_SUBJECT_OPENINGS = frozenset("i you he she we they his her their my your our the".split())
_RELATIVE_WORDS = frozenset("who whom that which".split())

_QUOTED = re.compile(r"\"([^\"]{1,80})\"|“([^”]{1,80})”|(?:(?<=\s)|^)'([^']{1,80})'(?=[\s?.!,;:]|$)")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])|(?<![\w.])\d+(?=st\b|nd\b|rd\b|th\b)")


# --- the question --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    lower: str
    index: int
    sentence_start: bool


@dataclass(frozen=True, slots=True)
class _Span:
    text: str
    first: int  # token indexes, inclusive
    last: int
    possessive: bool


def _tokens(question: str) -> list[_Token]:
    out: list[_Token] = []
    start = True
    for raw in TOKEN.findall(question):
        if raw in ".?!;":
            start = True
            continue
        out.append(_Token(raw, fold(raw), len(out), start))
        start = False
    return out


def _is_capitalized(token: _Token) -> bool:
    return token.text[0].isupper() and token.lower not in _NOT_ENTITIES


def _entity_spans(tokens: list[_Token]) -> list[_Span]:
    spans: list[_Span] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.sentence_start or not _is_capitalized(token):
            i += 1
            continue
        last = i
        while not POSSESSIVE.search(tokens[last].text):
            nxt = last + 1
            if nxt < len(tokens) and _is_capitalized(tokens[nxt]) and not tokens[nxt].sentence_start:
                last = nxt
                continue
            joined = nxt
            while joined < len(tokens) and tokens[joined].lower in _SPAN_JOINERS:
                joined += 1
            if joined > nxt and joined < len(tokens) and _is_capitalized(tokens[joined]):
                last = joined
                continue
            break
        text = " ".join(POSSESSIVE.sub("", t.text) for t in tokens[i : last + 1])
        spans.append(_Span(text, i, last, bool(POSSESSIVE.search(tokens[last].text))))
        i = last + 1
    return spans


def _quoted(question: str) -> list[str]:
    return [next(group for group in match.groups() if group).strip() for match in _QUOTED.finditer(question)]


def _is_participle(word: str) -> bool:
    return word in _PARTICIPLES or (word.endswith("ed") and len(word) > 4)


def _is_auxiliary_have(tokens: list[_Token], i: int) -> bool:
    """A "have" of the perfect, not of having: a participle within three words ("has Priya
    been"), or after the subject the inverted "have" opens ("What kind of places have Andrew
    and his girlfriend checked out?", ADR 0150; not "Does Ana have kids who played …")."""
    window = list(
        itertools.takewhile(lambda word: word not in _RELATIVE_WORDS, (t.lower for t in tokens[i + 1 : i + 4]))
    )
    if window[:2] == ["in", "common"] or window[:1] == ["to"]:
        return True
    if any(map(_is_participle, window)):
        return True
    after = tokens[i + 1 : i + 1 + _INVERTED_SUBJECT_WORDS]
    if not after or not (_is_capitalized(after[0]) or after[0].lower in _SUBJECT_OPENINGS):
        return False
    for token in after[1:]:
        if token.lower in _RELATIVE_WORDS:
            return False
        if _is_participle(token.lower):
            return True
    return False


def _is_future_going(tokens: list[_Token], i: int) -> bool:
    """ "going to visit" is a future marker; "going to the concert" is a relation cue."""
    if tokens[i].lower != "going" or i + 2 >= len(tokens) or tokens[i + 1].lower != "to":
        return False
    after = tokens[i + 2]
    return after.lower not in _DETERMINERS and not _is_capitalized(after)


def _relations(tokens: list[_Token]) -> tuple[tuple[RelationFamily, ...], set[int]]:
    single, double = family_forms()
    cues: dict[str, list[str]] = {}
    cue_indexes: set[int] = set()
    for i, token in enumerate(tokens):
        lemmas = lemma_candidates(token.lower)
        if "have" in lemmas and _is_auxiliary_have(tokens, i):
            continue
        if "be" in lemmas or "do" in lemmas or _is_future_going(tokens, i):
            continue
        if i + 1 < len(tokens) and any((lemma, tokens[i + 1].lower) in _OTHER_SENSE_PHRASALS for lemma in lemmas):
            continue  # "What did Priya give up?": she quit something, gave no gift (ADR 0156)
        hit = False
        for lemma in lemmas:
            for family in single.get(lemma, ()):
                cues.setdefault(family, []).append(token.lower)
                hit = True
            if i + 1 < len(tokens):
                for family in double.get((lemma, tokens[i + 1].lower), ()):
                    cues.setdefault(family, []).append(f"{token.lower} {tokens[i + 1].lower}")
                    hit = True
        if hit:
            cue_indexes.add(i)
    families = tuple(
        _family(name, found)
        for name, found in sorted(cues.items(), key=lambda item: (_first_position(tokens, item[1]), item[0]))
    )
    return families, cue_indexes


def _family(name: str, cues: Iterable[str]) -> RelationFamily:
    return RelationFamily(name, tuple(sorted(RELATION_FAMILIES[name])), tuple(dict.fromkeys(cues)))


def _activity_relations(tokens: list[_Token]) -> tuple[RelationFamily, ...]:
    """The activity families, cued by the question's activity noun ("activities") or "do"."""
    cue = next((t.lower for t in tokens if t.lower in _ACTIVITY_NOUNS), "do")
    return tuple(_family(name, [cue]) for name in ACTIVITY_FAMILIES)


def _first_position(tokens: list[_Token], cues: list[str]) -> int:
    first_words = {cue.split()[0] for cue in cues}
    return next((t.index for t in tokens if t.lower in first_words), len(tokens))


# Operator cues (on the lowercased question).
_COUNT = re.compile(r"\bhow many\b|\bhow often\b|\bnumber of\b")
# A number that names something ("the phone number of the boiler company") is asked, not counted.
_NAMED_NUMBER = re.compile(
    r"\b(?:phone|telephone|mobile|fax|extension|room|house|flat|apartment|unit|account|policy|order|serial|model"
    r"|ticket|flight|tracking|reference|registration|case|seat|gate|platform|passport|licen[cs]e) number\b"
)
_COUNT_OF_TIME = re.compile(r"\bhow many (?:" + "|".join(sorted(_TIME_UNITS)) + r")\b")
_INTERSECTION = re.compile(r"\bboth\b|\bin common\b|\balike\b")
_INTERSECTION_PAIRED = re.compile(r"\bshare[sd]?\b|\bsharing\b|\bsame\b|\btogether\b|\beach other\b")
_TEMPORAL_STRONG = re.compile(
    r"\bwhat (?:date|day|year|month|time|week|season)\b|\bwhich (?:date|day|year|month|week)\b|\bhow long\b"
    r"|\bsince when\b|\bwhat age\b|\bat what point\b"
)
_WHEN_CLAUSE = re.compile(r"(?:^|[.?!;,]\s*|\b(?:and|or|since|until|about)\s+)when\b")
_TEMPORAL_WEAK = re.compile(
    r"\bbefore\b|\bafter\b|\bfirst\b|\blast time\b|\bearliest\b|\blatest\b|\bmost recent(?:ly)?\b|\brecently\b"
    r"|\bwhen\b"
)
_LIST = re.compile(
    r"\blist\b|\bname (?:all|some|every|the)\b|\bwhat (?:kinds|types|sorts) of\b|\bwhat activities\b"
    r"|\bwhich\b.*\ball\b|\bwhat else\b|\bwhat things\b|\bin what ways\b|\bwhat (?:are|were) (?:some|all)\b"
)


def _plural_noun(word: str) -> bool:
    return (
        len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is", "'s"))
        and word not in STOPWORDS
        and word not in _AUXILIARIES
    ) or word in {"children", "people", "men", "women"}


def _asks_plural(tokens: list[_Token]) -> bool:
    """ "What instruments does …", "Which cities has …", "What are Priya's hobbies?" """
    if not tokens or tokens[0].lower not in {"what", "which"}:
        return False
    rest = [t.lower for t in tokens[1:6]]
    if rest and rest[0] in {"are", "were", "have"}:
        return any(_plural_noun(word) for word in rest[1:4])
    phrase = _wh_phrase(tokens)
    if phrase[1:2] == ["of"] and phrase[0] in {"kind", "type", "sort"}:
        phrase = phrase[2:]  # "What kind of indoor activities has …": the kind is of what follows
    return any(_plural_noun(word) for word in phrase[:3])


def _asks_experiences(tokens: list[_Token]) -> bool:
    """ "Where has Melanie camped?", "What has Andrew done with his dogs?": a what/where/which
    question in the present perfect asks what happened at any time so far, every time it did
    (ADR 0129). Not "What has she been up to" (a state), not "Who has …" or "How has …"."""
    if not tokens or tokens[0].lower not in {"what", "where", "which"}:
        return False
    auxiliary = next((t for t in tokens[1:7] if t.lower in _AUXILIARIES), None)
    return (
        auxiliary is not None
        and auxiliary.lower in _PERFECT_AUXILIARIES
        and _participle_follows(tokens[auxiliary.index + 1 :])
    )


def _wh_phrase(tokens: list[_Token]) -> list[str]:
    """The words between a question's wh-word and its first auxiliary, at most five: the asked
    thing of "What kind of indoor activities has …" """
    phrase = []
    for token in tokens[1:6]:
        if token.lower in _AUXILIARIES:
            break
        phrase.append(token.lower)
    return phrase


def _operator(lowered: str, tokens: list[_Token], spans: list[_Span]) -> Operator:
    if _COUNT.search(_NAMED_NUMBER.sub(" ", lowered)) and not _COUNT_OF_TIME.search(lowered):
        return "count"
    paired = len(spans) >= 2 and any(
        right.first == left.last + 2 and tokens[left.last + 1].lower == "and"
        for left, right in itertools.pairwise(spans)
    )
    if _INTERSECTION.search(lowered) or (paired and _INTERSECTION_PAIRED.search(lowered)):
        return "intersection"
    if _TEMPORAL_STRONG.search(lowered) or _WHEN_CLAUSE.search(lowered) or _COUNT_OF_TIME.search(lowered):
        return "temporal"
    if _LIST.search(lowered) or _asks_plural(tokens) or _asks_experiences(tokens):
        return "list-union"
    if _TEMPORAL_WEAK.search(lowered):
        return "temporal"
    return "single"


# Answer types.
_PERSON_NOUNS: frozenset[str] = frozenset(
    """friend friends person people partner boyfriend girlfriend husband wife sister brother mother mom father dad
    son daughter child kid kids aunt uncle cousin grandmother grandma grandfather grandpa colleague coworker boss
    mentor coach teacher doctor neighbor neighbour roommate""".split()
)  # fmt: skip
_LOCATION_NOUNS: frozenset[str] = frozenset(
    """city cities country countries place places state states town towns location locations restaurant park
    beach island street neighborhood neighbourhood venue school university museum store shop cafe""".split()
)  # fmt: skip
_ACTIVITY_NOUNS: frozenset[str] = frozenset("activity activities hobby hobbies sport sports game games".split())
_DATE_CUE = re.compile(
    r"(?:^|[.?!;,]\s*)when\b|\bwhat (?:date|day|year|month|time|week|season)\b|\bwhich (?:date|day|year|month|week)\b"
    r"|\bhow long ago\b|\bsince when\b|\bhow many (?:days|weeks|months|years) ago\b"
)
_NUMBER_CUE = re.compile(
    r"\bhow (?:many|much|often|old|far)\b|\bhow long\b(?! ago)|\bwhat (?:number|percentage|age|amount)\b"
)
_REASON_CUE = re.compile(
    r"\bwhy\b|\bhow come\b|\bwhat (?:reason|motivated|inspired|caused|led|prompted|made)\b|\bfor what reason\b"
)


def _answer_types(operator: Operator, lowered: str, tokens: list[_Token]) -> tuple[AnswerType, ...]:
    found: list[AnswerType] = []
    if operator == "count":
        found.append("number")
    if _DATE_CUE.search(lowered):
        found.append("date")
    if _NUMBER_CUE.search(lowered) or _NAMED_NUMBER.search(lowered):
        found.append("number")
    if _REASON_CUE.search(lowered):
        found.append("reason")
    first = tokens[0].lower if tokens else ""
    head = [t.lower for t in tokens[1:4]]
    if (
        first in {"who", "whom", "whose"}
        or "with whom" in lowered
        or (first in {"what", "which"} and any(word in _PERSON_NOUNS for word in head))
    ):
        found.append("person")
    if first == "where" or (first in {"what", "which", "in"} and any(word in _LOCATION_NOUNS for word in head)):
        found.append("location")
    if (
        any(word in _ACTIVITY_NOUNS for word in head)
        or (first in {"what", "which"} and any(word in _ACTIVITY_NOUNS for word in _wh_phrase(tokens)))
        or re.search(r"\bwhat (?:did|does|do|will) \w+ do\b", lowered)
    ):
        found.append("activity")
    if first in _AUXILIARIES:
        found.append("yes/no")
    if not found:
        found.append("object")
    return tuple(dict.fromkeys(found))


# Role hints.
_PREPOSITION_GROUPS: Mapping[str, frozenset[RoleGroup]] = MappingProxyType(
    {
        "with": frozenset({"companion"}),
        "to": frozenset({"recipient", "place"}),
        "into": frozenset({"place"}),
        "toward": frozenset({"place"}),
        "for": frozenset({"recipient"}),
        "from": frozenset({"agent", "place"}),
        "at": frozenset({"place"}),
        "in": frozenset({"place"}),
        "near": frozenset({"place"}),
        "by": frozenset({"agent"}),
        "about": frozenset({"theme"}),
    }
)


def _role_hints(tokens: list[_Token], spans: list[_Span], cue_indexes: set[int]) -> tuple[RoleHint, ...]:
    hints: list[RoleHint] = []
    for span in spans:
        key = anchor_key(span.text)
        if not key:
            continue
        previous = tokens[span.first - 1].lower if span.first > 0 else ""
        before = span.first - 1
        while before >= 0 and tokens[before].lower in _DETERMINERS:
            before -= 1
        governing = tokens[before].lower if before >= 0 else ""  # "to the Bank of America" → "to"
        groups: frozenset[RoleGroup] | None = None
        if span.possessive or previous in _AUXILIARIES or span.last + 1 in cue_indexes:
            groups = frozenset({"agent"})  # "did Priya …", "Priya's …", "the concert Priya attended"
        elif governing in _PREPOSITION_GROUPS:
            groups = _PREPOSITION_GROUPS[governing]
        elif before >= 0 and before in cue_indexes:
            groups = frozenset({"theme", "recipient", "place"})  # right after the verb: its object
        elif previous == "and" and hints and hints[-1].key != key:
            groups = hints[-1].groups  # "did Priya and Marcus …": coordinated with the name before
        if groups is not None:
            hints.append(RoleHint(span.text, key, groups))
    return tuple(hints)


def _answer_roles(tokens: list[_Token], lowered: str) -> frozenset[RoleGroup]:
    if not tokens:
        return frozenset()
    first = tokens[0].lower
    second = tokens[1].lower if len(tokens) > 1 else ""
    last = tokens[-1].lower
    if "with whom" in lowered or (first in {"who", "whom"} and last == "with"):
        return frozenset({"companion"})
    if first in {"who", "whom"} and last in {"to", "for"}:
        return frozenset({"recipient"})
    if first == "who" and second not in _AUXILIARIES:
        return frozenset({"agent"})
    if first in {"who", "whom"}:
        return frozenset({"theme", "recipient", "companion"})
    if first == "where":
        return frozenset({"place"})
    if first == "when":
        return frozenset({"time"})
    if first in {"what", "which"} and second in {"did", "does", "do", "has", "have", "will"}:
        return frozenset({"theme"})
    return frozenset()


def _objects(quoted: list[str], spans: list[_Span], hints: tuple[RoleHint, ...], cue_indexes: set[int]) -> list[str]:
    subjects = {hint.key for hint in hints if "agent" in hint.groups}
    first_cue = min(cue_indexes, default=None)
    found = list(quoted)
    if first_cue is not None:
        found += [s.text for s in spans if s.first > first_cue and anchor_key(s.text) not in subjects]
    return list(dict.fromkeys(found))


def _counted(lowered_tokens: list[str]) -> str | None:
    skip = {"different", "other", "separate", "total", "distinct", "more", "of", "the", "her", "his", "their"}
    for i, word in enumerate(lowered_tokens):
        if (word == "many" and i > 0 and lowered_tokens[i - 1] == "how") or (
            word == "of" and i > 0 and lowered_tokens[i - 1] == "number"
        ):
            for candidate in lowered_tokens[i + 1 : i + 4]:
                if candidate not in skip:
                    return candidate
        if word == "often" and i > 0 and lowered_tokens[i - 1] == "how":
            return "times"
    return None


# Temporal constraints.
_ORDER_CUES: tuple[tuple[TemporalOrder, re.Pattern[str]], ...] = (
    ("before", re.compile(r"\bbefore\b|\bprior to\b|\buntil\b")),
    ("after", re.compile(r"\bafter\b|\bsince\b")),
    ("first", re.compile(r"\bfirst\b|\bearliest\b|\binitially\b|\boriginally\b")),
    (
        "last",
        re.compile(
            rf"\blast\b(?!\s+(?:night|weekend|week|month|year|summer|winter|spring|fall|autumn|{weekday_alternation()}"
            rf"|{month_alternation(abbreviations=False)})\b)|\blatest\b|\bmost recent(?:ly)?\b|\brecently\b|\blately\b"
        ),
    ),
    ("order", re.compile(r"\border\b|\bsequence\b|\bchronolog|\bearlier or later\b|\bwhich came first\b")),
)
_FUTURE = re.compile(
    r"\bwill\b|\bgoing to\b|\bplan(?:s|ning|ned)? (?:to|on)\b|\bupcoming\b|\bintend|\bhoping to\b"
    rf"|\bnext (?:week|weekend|month|year|summer|winter|spring|fall|autumn|{weekday_alternation()})\b"
)
_HAS_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_BARE_MONTH = re.compile(rf"\b({month_alternation(abbreviations=False, may=False)}|(?-i:May))\b", re.IGNORECASE)
# A fixed mention date for questions planned without ``now``: only phrases that carry their own
# year are kept, so the value never leaks into a plan.
_NO_NOW = date(2000, 1, 1)


def _period_end(resolved: ResolvedDate) -> date:
    start = resolved.start
    if resolved.precision is Precision.YEAR:
        return date(start.year + 1, 1, 1)
    if resolved.precision is Precision.MONTH:
        return date(start.year + start.month // 12, start.month % 12 + 1, 1)
    if resolved.precision is Precision.WEEK:
        return start + timedelta(days=7)
    return start + timedelta(days=1)


def _range_relation(question: str, phrase: str) -> RangeRelation:
    at = question.find(phrase)
    # The word before the phrase, or the phrase's own first word ("since 2022" is one phrase).
    cues = question[:at].lower().split()[-1:] if at > 0 else []
    cues.append(phrase.lower().split()[0])
    if cues[0] in {"before", "until", "by", "prior"}:
        return "before"
    if cues[0] in {"after", "since"} or cues[-1] == "since":
        return "after"
    return "in"


def _temporal(question: str, lowered: str, now: datetime | None) -> TemporalConstraints:
    orders = tuple(order for order, pattern in _ORDER_CUES if pattern.search(lowered))
    mention = now.date() if now is not None else _NO_NOW
    tense = (
        Tense.FUTURE if _FUTURE.search(lowered) else Tense.PAST
    )  # a question without a future verb asks about the past
    resolved = find_dates(question, mention_time=mention, tense=tense)
    ranges: list[DateRange] = []
    relative: list[str] = []
    covered: list[str] = []
    for item in resolved:
        absolute = bool(_HAS_YEAR.search(item.phrase)) or item.phrase[:4].isdigit()
        if now is None and not absolute:
            relative.append(item.phrase)
            continue
        covered.append(item.phrase)
        precision = "day" if item.precision is Precision.TIME else item.precision.value
        relation = _range_relation(question, item.phrase)
        ranges.append(DateRange(item.phrase, item.start, _period_end(item), precision, relation))
    in_ranges = " ".join(covered)
    months = [
        number
        for match in _BARE_MONTH.finditer(question)
        if match.group(0) not in in_ranges and (number := month_number(match.group(0))) is not None
    ]
    years = [int(match.group(0)) for match in _HAS_YEAR.finditer(question) if match.group(0) not in in_ranges]
    return TemporalConstraints(
        ranges=tuple(ranges),
        orders=orders,
        months=tuple(dict.fromkeys(months)),
        years=tuple(dict.fromkeys(years)),
        relative=tuple(relative),
    )


# Time focus: does the question ask for a value as it is now, or for its history?
_PAST_AUXILIARIES: frozenset[str] = frozenset("did didn't was wasn't were weren't had hadn't used".split())
_PRESENT_AUXILIARIES: frozenset[str] = frozenset(
    """do does don't doesn't is isn't are aren't am has hasn't have haven't 's can can't will won't shall
    should would could""".split()
)  # fmt: skip
_IRREGULAR_PAST: frozenset[str] = frozenset(
    """went came ate drank drove taught bought sold met left began became got gave took saw knew wrote ran swam
    thought brought felt kept lost paid spent told won""".split()
)  # fmt: skip
# "has"/"have" with a participle asks what happened up to now ("What has Melanie painted?",
# "When has she lost her job?"): every past value counts. "has got" is having, "has been" a
# state or a continuing activity, both of the present.
_PERFECT_AUXILIARIES: frozenset[str] = frozenset("has hasn't have haven't".split())
_IRREGULAR_PARTICIPLES: frozenset[str] = _IRREGULAR_PAST | frozenset(
    """gone done made seen taken given written eaten driven known begun become drunk swum run read found
    heard built held sent had tried""".split()
)  # fmt: skip
_PRESENT_PERFECT_STATES: frozenset[str] = frozenset("got gotten been".split())
# Words that ask about what was, or about the change itself (our choice; ADR 0028); "originally
# from" asks where someone comes from, which is not a value of the past.
_HISTORY_CUES = re.compile(
    r"\bbefore\b|\bused to\b|\bprevious(?:ly)?\b|\bformer(?:ly)?\b|\boriginal(?:ly)?\b(?!\s+from\W*$)|\bat first\b|\bearlier\b"
    r"|\bin the past\b|\bback then\b|\bprior\b|\bex-|\bchang(?:e|ed|es|ing)\b|\bswitch(?:ed|es|ing)?\b"
    r"|\bmov(?:e|ed|es|ing)\b|\bhistory\b|\buntil\b|\bsince when\b"
    # "How long has she lived there?" asks since when; "How long is his commute?" a measure now
    r"|\bhow long\b(?!\s+(?:is|are|does|do)\b)"
)


def _time_focus(tokens: list[_Token], lowered: str, temporal: TemporalConstraints) -> TimeFocus:
    """``present`` for a question about how things are now ("Where does Nadia live?", "What is
    her job?"): present tense, no cue of the past or of a change, no date named, no perfect
    ("What has she painted?"); otherwise ``history``. The tense is the first auxiliary's, else
    a past verb form's."""
    if _HISTORY_CUES.search(lowered) or temporal.names_a_date or temporal.relative:
        return "history"
    if any(
        token.lower in _PERFECT_AUXILIARIES and _participle_follows(tokens[position + 1 :])
        for position, token in enumerate(tokens)
    ):
        return "history"  # in a clause of its own too: "What changes has Caroline faced?"
    if _past_relative_clause(tokens):
        return "history"
    for token in tokens:
        if token.lower in _PAST_AUXILIARIES:
            return "history"
        if token.lower in _PRESENT_AUXILIARIES:
            return "present"
    past_verb = any(
        token.lower in _IRREGULAR_PAST or (token.lower.endswith("ed") and len(token.lower) > 4)
        for token in tokens[1:]
        if not _is_capitalized(token)
    )
    return "history" if past_verb else "present"


_RELATIVE_PRONOUNS: frozenset[str] = frozenset("that which who whom".split())
_PAST_IN_A_CLAUSE: frozenset[str] = _IRREGULAR_PAST - {"got", "paid"}


def _past_relative_clause(tokens: list[_Token]) -> bool:
    """A relative clause told in the past ("the classes that Audrey took"): what it describes
    happened, and every occurrence counts. "got" and "paid" are left out: "the shoes that she
    got used for", "the paid days that she gets"."""
    relative = False
    for token in tokens:
        if token.lower in _RELATIVE_PRONOUNS:
            relative = True
        elif relative and token.lower in _PAST_IN_A_CLAUSE:
            return True
    return False


def _participle_follows(tokens: list[_Token]) -> bool:
    """Whether a past participle follows a perfect auxiliary, before another auxiliary: "has
    Melanie painted", "have you lost", not "has Nadia got" or "has she been"."""
    for token in tokens:
        word = token.lower
        if word in _PRESENT_PERFECT_STATES:
            return False
        if _is_capitalized(token) and token.index > 0:
            continue  # a name between the auxiliary and its verb
        if word in _IRREGULAR_PARTICIPLES or (word.endswith("ed") and len(word) > 4):
            return True
        if word in _PAST_AUXILIARIES or word in _PRESENT_AUXILIARIES:
            return False
    return False


# --- the plan ------------------------------------------------------------------------------


# First-person forms, as the subject's name says them (a contraction keeps its verb).
_FIRST_PERSON = tuple(
    (re.compile(pattern, re.IGNORECASE), form)
    for pattern, form in (
        (r"\b(?:am|are)\s+I\b", "is {}"),
        (r"\bdo\s+I\b", "does {}"),
        (r"\bhave\s+I\b", "has {}"),
        (r"\bI['’]m\b", "{} is"),
        (r"\bI['’]ve\b", "{} has"),
        (r"\bI['’]d\b", "{} would"),
        (r"\bI['’]ll\b", "{} will"),
        (r"\bI\b(?![.'’]\w)", "{}"),  # not "i.e."
        (r"\b(?:the\s+)?user['’]s\b", "{}'s"),
        (r"\bthe\s+user\b", "{}"),
        (r"\b(?:my|mine)\b", "{}'s"),
        (r"\b(?:me|myself)\b", "{}"),
    )
)


def as_a_name(name: str) -> str:
    """A name as a question writes it: an id in lower case ("ana", "jean-luc") capitalized."""
    return re.sub(r"(?:^|(?<=[ .'’-]))(\w)", lambda m: m.group(1).upper(), name) if name.islower() else name


def spoken_of(question: str, speaker: str, aliases: Iterable[str] = ()) -> str:
    """``question`` about the subject in the third person of ``speaker``, the name the subject's
    own turns speak under (ADR 0095): "Where do I live?" → "Where does Ana live?", "my sister"
    → "Ana's sister", "the user" → "Ana", and each of ``aliases`` (the subject's other names)
    → "Ana"; "we" is left alone (not only the subject). A question with none of these is
    returned as it is."""
    name = as_a_name(speaker)
    given = {speaker, *(a.strip() for a in aliases if a.strip())}  # as given, and as a name is written
    names = sorted(given | {as_a_name(a) for a in given}, key=len, reverse=True)
    alternation = "|".join(re.escape(n) for n in names)  # the longest first: "Ana Silva" before "Ana"
    question = re.sub(rf"(?<![\w'’])(?:{alternation})(?!\w)", lambda _: name, question)
    for pattern, form in _FIRST_PERSON:
        question = pattern.sub(form.format(name).replace("\\", r"\\"), question)  # a literal replacement
    return question


def plan_query(question: str, *, now: datetime | None = None) -> Plan:
    """The deterministic plan of one question. ``now`` resolves relative dates ("last week")."""
    tokens = _tokens(question)
    lowered = " ".join(question.lower().replace("’", "'").split())
    spans = _entity_spans(tokens)
    quoted = _quoted(question)
    relations, cue_indexes = _relations(tokens)
    operator = _operator(lowered, tokens, spans)
    answer_types = _answer_types(operator, lowered, tokens)
    if not relations and "activity" in answer_types:
        relations = _activity_relations(tokens)
    hints = _role_hints(tokens, spans, cue_indexes)
    entities = list(dict.fromkeys([span.text for span in spans] + quoted))
    entity_tokens = {t.index for span in spans for t in tokens[span.first : span.last + 1]}
    keywords = [
        t.lower
        for t in tokens
        if is_content_word(t.text)
        and t.index not in entity_tokens
        and t.index not in cue_indexes
        and t.lower not in _NOT_KEYWORDS
        and not t.lower[0].isdigit()
    ]
    constraints = Constraints(
        numbers=tuple(dict.fromkeys(number.replace(",", "") for number in _NUMBER.findall(question))),
        keywords=tuple(dict.fromkeys(keywords)),
        content_stems=content_stems(question),
    )
    temporal = _temporal(question, lowered, now)
    return Plan(
        question=question,
        operator=operator,
        relations=relations,
        constraints=constraints,
        answer_types=answer_types,
        temporal=temporal,
        budgets=OPERATOR_BUDGETS[operator],
        entities=tuple(entities),
        objects=tuple(_objects(quoted, spans, hints, cue_indexes)),
        role_hints=hints,
        answer_roles=_answer_roles(tokens, lowered),
        counted=_counted([t.lower for t in tokens]) if operator == "count" else None,
        future=bool(_FUTURE.search(lowered)),
        time_focus=_time_focus(tokens, lowered, temporal),
    )


def asked_words(plan: Plan) -> str:
    """The question's content words, with the other words for each ("gf" for "girlfriend"),
    but the names it asks about, as a full-text "or" query ("" when there are none): the words
    an anchor's rows are matched on beside their similarity (ADR 0114)."""
    named = {fold(word) for entity in plan.entities for word in words(entity)}
    asked = [
        same
        for word in words(plan.question)
        if is_content_word(word) and fold(word) not in named
        for same in same_words(word)
    ]
    return " or ".join(dict.fromkeys(fold(word) for word in asked))
