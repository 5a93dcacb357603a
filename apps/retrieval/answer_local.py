"""The ``local`` answerer: extractive, deterministic and offline (docs/architecture.md, "Retrieval plane").

It writes nothing of its own: it picks the evidence row that best supports an answer and
answers with the relevant span of it, citing the rows it used. It never asks for another
search. Stored text is only ever quoted, so an instruction inside it is inert.

- **Support.** A row's terms are the content stems of its text and of the graph facts that
  cite it. The question's plan (:func:`apps.retrieval.planner.plan_query`) names its content
  stems, named entities and keywords. A row supports an answer when it holds every keyword
  that is not merely the kind of answer asked for ("places", "name", …), and it is about the
  question: it holds a content stem that is neither a name nor such a kind, or a fact citing it
  has a relation the question asks about, or (for a question of names only) it holds every
  name. An intersection question only takes rows that name every side. Rows rank by lexical
  coverage of the question's stems, plus a bonus for such a fact, then by retrieval rank; for
  a question about a time, a row with a date wins a tie. Two tiers come before the score: for a
  question about the present, rows marked current before replaced ones (the current value
  wins); statements of the fact before echoes of it (an assistant's row, or a question); and
  rows that state a value of the fact key the question asks for (read as the local writer
  reads a fact: "What diet does she follow?" — "I've gone fully vegan"), which support an
  answer even without the question's words; for a question about an earlier value ("before
  Lyon", "used to"), replaced rows before current ones.
- **Span.** The expected answer type decides. A duration question ("how long …", not "how
  long ago"): the first length of time a supporting row names ("for three years", "since
  2019"), never a date. A question about a time: the most specific date phrase of the best
  row, resolved against the time it was mentioned, else the row's event time; but a question
  about the present whose best row states a recurring time ("When does her book club meet?" —
  "the last Sunday of the month") gets the sentence. A count question that asks nothing else
  ("where and how many …" asks a place too, and gets the sentence): the number
  (cardinal, ordinal, "twice") in front of the counted noun in the best row that has one, else
  in front of another word the question is about, else the number of distinct supporting rows
  that name the counted thing or that a fact of the relation it cues cites ("pets": adopting,
  not "have"). Otherwise the best row's sentence with the highest overlap; a list or
  intersection question adds the best sentence of the next supporting rows that score more
  than half as well (three rows at most). Questions are skipped for a statement when the row
  has one. A question naming a numbered part ("under clause 17") reads the rows naming it
  first (a document's passage first of all), and only that part's sentences of them. A line
  ends a sentence when no line after it has a full stop first (a log's records); a passage
  opens with no speaker, whatever precedes its first colon.
- **Nothing supports an answer:** :data:`~apps.providers.interfaces.UNKNOWN_ANSWER`.

Local inference costs no tokens, so nothing is metered.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from apps.language.calendar import month_alternation
from apps.language.dates import Precision, ResolvedDate, Tense, find_dates, most_specific
from apps.language.lexicon import predicate_families
from apps.language.pipeline import spacy_pipeline
from apps.language.questions import AskedKey, asked_key, asks_prior, is_asked_fact, states_key
from apps.language.references import names_part, numbered_references, referenced_part
from apps.language.words import content_stems, same_stem, stem
from apps.providers.interfaces import (
    UNKNOWN_ANSWER,
    AnswerDraft,
    AnswerRequest,
    EvidenceFact,
    EvidenceRow,
    MeteringContext,
    Purpose,
)
from apps.providers.local_usage import ANSWERER, record_local
from apps.retrieval.fusion import OTHER_SPEAKER_WEIGHT, speaker_weights
from apps.retrieval.planner import plan_query
from apps.retrieval.types import Plan

if TYPE_CHECKING:
    from spacy.tokens import Doc

RELATION_BONUS = 0.5  # a fact of an asked relation cites the row: worth half the question's stems
MAX_LIST_ROWS = 3  # rows a list or intersection answer quotes
MIN_LIST_SHARE = 0.5  # ... each scoring more than this share of the best row's score
UNRELATED_RANKS = 3  # retrieval's first rows are read even when they share no word with the question

# Keywords that only say what kind of answer is wanted: a row need not contain them.
_ANSWER_NOUNS = frozenset(
    stem(word)
    for word in """place city country town location destination name thing kind type sort activity event item
    person people time date day week month year number amount way reason""".split()
)
_CARDINALS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "dozen": 12,
}  # fmt: skip
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12,
}  # fmt: skip
_TIMES_WORDS = {"once": 1, "twice": 2, "thrice": 3}
_TIMES = stem("times")  # what "how often" counts
_SPELLED = {value: word for word, value in _CARDINALS.items() if word != "dozen"}
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)*(?:-[A-Za-z0-9]+)*|[^\sA-Za-z0-9]")
_DIGITS = re.compile(r"^\d+$")
_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th)$", re.IGNORECASE)
_BETWEEN_NUMBER_AND_NOUN = 2  # adjectives allowed between a number and its noun ("two young kids")
_NOT_BETWEEN = frozenset({"and", "or", "but", "of", "with", "to", "in", "on", "at", "for", "from", "than"})
# A sentence ends at its full stop, or at the end of its line: a log's records, a list's items
# and a document's headings are sentences of their own.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
_STOPS = (".", "!", "?")
# A full stop that ends a title or an initial, not a sentence: "Dr. Marchand", "J. Smith".
_ABBREVIATION = re.compile(r"(?:\b(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Mt|Jr|Sr|No|vs|etc|approx)|\b[A-Z])\.$")
_HOW_LONG = re.compile(r"\bhow long\b(?!\s+ago\b)", re.IGNORECASE)
_OTHER_QUESTION = re.compile(
    r"\b(?:where|what|who|which|when|why)\b[^?]*\band how (?:many|much)\b|\bhow (?:many|much)\b[^?]*\band (?:where|what|who|which|when|why)\b",
    re.IGNORECASE,
)
_QUANTITY = (
    r"(?:\d+(?:[.,]\d+)?|an?|(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ])?(?:one|two|three|four"
    r"|five|six|seven|eight|nine)|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
    r"|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|(?:a|one) hundred|a few|a couple of|several|half an?)"
)
_DURATION = re.compile(
    rf"\b(?:(?:for|about|almost|nearly|over|around|just|only)\s+)?{_QUANTITY}(?:[- ]and[- ]a[- ]half)?[- ]"
    r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?)(?:\s+and\s+a\s+half)?\b"
    rf"|\bsince\s+(?:{month_alternation(abbreviations=False)}\s+)?(?:\d{{4}}|{month_alternation(abbreviations=False)}|last\s+\w+)\b",
    re.IGNORECASE,
)
_RECURRING = re.compile(
    r"\bevery\b|\beach\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days\b|\bof (?:the|each|every) month\b"
    r"|\b(?:daily|weekly|monthly|fortnightly)\b|\b\d{1,2}(?::\d{2})\s*(?:am|pm)?\b|\bo'clock\b",
    re.IGNORECASE,
)
# Speakers whose rows only echo what the user said (an assistant's "So you're vegan now?").
_ECHO_SPEAKERS = frozenset({"assistant", "system", "tool"})
_SPEAKER = re.compile(r"^([^:\n]{1,60}):\s")


@dataclass(frozen=True)
class _Support:
    row: EvidenceRow
    rank: int  # position in retrieval order
    score: float
    families: frozenset[str]  # the relation families of the facts that cite it
    stems: frozenset[str]
    key: AskedKey | None = None  # the asked fact key the row states a value of
    around: tuple[tuple[str, str], ...] = ()  # (row id, source sentences) of every row shown


class LocalAnswerLLM:
    """Each call meters the tokens of the question and the rows it reads (ADR 0049)."""

    model = ANSWERER

    def answer(self, request: AnswerRequest, *, metering: MeteringContext) -> AnswerDraft:
        record_local(
            metering,
            purpose=Purpose.ANSWER,
            model=self.model,
            texts=[request.question, *(row.text for row in request.rows)],
        )
        plan = plan_query(request.question)
        supported = _supporting_rows(plan, request.rows, request.facts)
        if references := numbered_references(request.question):
            # "What happened to deploy #1057?": the rows that name the part first, the document's
            # own passage before what a writer made of it (ADR 0098).
            supported.sort(key=lambda support: _naming_rank(support.row, references))
        if not supported:
            return AnswerDraft(answer=UNKNOWN_ANSWER, cited_row_ids=())
        if _asks_duration(plan):
            timed = next(
                ((s, d) for s in supported if (d := _duration(_best_sentence(s.row.text, plan, s))) is not None),
                next(((s, d) for s in supported if (d := _duration(s.row.text)) is not None), None),
            )
            if timed is not None:
                return AnswerDraft(answer=timed[1], cited_row_ids=(timed[0].row.row_id,))
        elif _asks_count_only(plan):
            return _count_answer(plan, supported)
        elif _asks_time(plan) and not _standing_time(plan, supported[0].row):
            dated = _dated_answer(supported[0].row)
            if dated is not None:
                return AnswerDraft(answer=dated, cited_row_ids=(supported[0].row.row_id,))
        if plan.operator in {"list-union", "intersection"}:
            floor = supported[0].score * MIN_LIST_SHARE
            used = [supported[0], *(s for s in supported[1:] if s.score > floor)][:MAX_LIST_ROWS]
        else:
            used = supported[:1]
        quoted = [_quoted_sentence(support.row.text, plan, support) for support in used]
        cited = [support.row.row_id for support in used] + [also for _, also in quoted if also is not None]
        return AnswerDraft(answer=" ".join(text for text, _ in quoted), cited_row_ids=tuple(dict.fromkeys(cited)))


def _naming_rank(row: EvidenceRow, references: Sequence[str]) -> int:
    """0: a passage naming a referenced part; 1: another row naming it; 2: a row not naming it."""
    if not names_part(row.text, references):
        return 2
    return 0 if row.passage else 1


def _asks_time(plan: Plan) -> bool:
    """ "When …", "what day …", "how long ago …": a time is asked. A question that only orders
    events ("Where did she live before she moved to Lyon?") asks for what its wh-word asks."""
    return "date" in plan.answer_types


def _standing_time(plan: Plan, row: EvidenceRow) -> bool:
    """A question about the present whose row states a recurring time ("When does her book
    club meet?" — "on the last Sunday of the month"; "What time does she wake up?" — "at 7:30"):
    the sentence states the answer, and no calendar date is it."""
    return plan.time_focus == "present" and not plan.future and _RECURRING.search(row.text) is not None


# "Which gym …", "What car …", "What is the name of …": the answer is a name, not a sentence's gist.
_NAME_ASKED = re.compile(
    r"^\s*(?:(?:which|what)\s+(?!(?:do|does|did|is|was|are|were|has|have|had|will|would|can|could|kind|type|sort"
    r"|time|day|date|year|month|week|night|morning|evening|afternoon|hour|season|happened|about)\b)[a-z]+\b|(?:what|which)(?:'s|\s+is|\s+was)\s+(?:the\s+)?name\b)",
    re.IGNORECASE,
)


# "What is her favourite film?", "Which band is his favourite?": a title or a name.
_FAVOURITE = re.compile(r"\bfavou?rite\b", re.IGNORECASE)


def _wanted_value(plan: Plan) -> str | None:
    """The kind of value that answers the question when a sentence must hold one: "number"
    ("How much rent …"), "person" ("Who …", "What is his mother's name?"), "place" ("Where …"),
    "name" ("Which gym …", "What is the name of …"), else None (a yes/no, an activity, a
    reason, a date or a gist)."""
    types = set(plan.answer_types)
    if types & {"yes/no", "activity", "reason", "date"} or plan.operator == "count":
        return None
    if "number" in types:
        return "number"
    words = {word.casefold().strip("?'") for word in plan.question.split()}
    if "person" in types or ("name" in words and words & _PERSON_WORDS):
        return "person"  # "Who is her manager?", "What is his mother's name?"
    if "location" in types:
        return "place"
    if _NAME_ASKED.search(plan.question) or "name" in words or _FAVOURITE.search(plan.question):
        return "name"
    return None


_PERSON_WORDS = frozenset(
    """friend partner boyfriend girlfriend husband wife fiance fiancee sister brother mother mum mom father dad son
    daughter child aunt uncle cousin niece nephew grandmother grandma grandfather grandpa colleague coworker boss
    manager mentor coach teacher tutor doctor dentist neighbour neighbor roommate landlord
    pet dog cat puppy kitten rabbit bunny hamster parrot horse""".split()
)  # a pet's name is a name like a person's, not a place
# What a name of each kind may be: a person, an organization or a thing named by a proper noun;
# a place; any name but a time.
_KIND_ENTITIES = {
    "person": frozenset({"PERSON", "ORG", "NORP"}),
    "place": frozenset({"GPE", "LOC", "FAC", "ORG"}),
    "name": frozenset({"PERSON", "GPE", "LOC", "FAC", "ORG", "PRODUCT", "NORP", "WORK_OF_ART", "EVENT"}),
}


def _holds_value(sentence: str, kind: str | None, plan: Plan) -> bool:
    """Whether the sentence names a value of ``kind``: a number, or a name other than the
    question's own names and the speaker's."""
    if kind is None:
        return True
    if kind == "number":
        return any(token.like_num or token.pos_ == "NUM" for token in _parsed(sentence))
    asked = {word.casefold() for name in plan.entities for word in name.split()}
    speaker = _SPEAKER.match(sentence)
    body = sentence[speaker.end() :] if speaker else sentence
    entities = _KIND_ENTITIES[kind]
    return any(
        token.text.casefold() not in asked
        and (token.ent_type_ in entities or (token.pos_ == "PROPN" and not token.ent_type_ and token.i > 0))
        for token in _parsed(body)
    )


def _asks_duration(plan: Plan) -> bool:
    """ "How long …" (not "how long ago"): a length of time, not a date."""
    return _HOW_LONG.search(plan.question) is not None


def _asks_count_only(plan: Plan) -> bool:
    """A count question that asks nothing else: "Where and how many …" asks a place too."""
    return plan.operator == "count" and _OTHER_QUESTION.search(plan.question) is None


def _name_stems(plan: Plan) -> frozenset[str]:
    return frozenset(s for entity in plan.entities for s in content_stems(entity))


def _asked_stems(plan: Plan) -> frozenset[str]:
    """The question's content stems, one for the words of the same relative or role ("boss" is
    asked as "manager", which every row's stems hold beside their own words)."""
    return frozenset(same_stem(s) for s in plan.constraints.content_stems)


def _topical_stems(plan: Plan) -> frozenset[str]:
    """What the question is about: its content stems but names and the kind of answer it wants."""
    return _asked_stems(plan) - _name_stems(plan) - _ANSWER_NOUNS


def _fact_stems(fact: EvidenceFact) -> frozenset[str]:
    text = " ".join([fact.predicate.replace("_", " "), *(name for _, name in fact.arguments)])
    return content_stems(" ".join([text, *(value for _, value in fact.literals)]))


# A row that states a value as a former one ("I used to eat a francesinha every Friday").
_FORMER = re.compile(r"\b(?:used to|formerly|back then|back when|no longer)\b", re.IGNORECASE)


def _kin(stems: frozenset[str]) -> frozenset[str]:
    return stems | {same_stem(s) for s in stems}


def _supporting_rows(plan: Plan, rows: Sequence[EvidenceRow], facts: Sequence[EvidenceFact]) -> list[_Support]:
    wanted = _asked_stems(plan)
    names = _name_stems(plan)
    topical = _topical_stems(plan)
    keywords = frozenset(same_stem(stem(word)) for word in plan.constraints.keywords) - _ANSWER_NOUNS - names
    families = {family.name for family in plan.relations}
    citing: dict[str, list[EvidenceFact]] = {}
    for fact in facts:
        for row_id in fact.citations:
            citing.setdefault(row_id, []).append(fact)
    asks_time = _asks_time(plan)
    prior = asks_prior(plan.question)  # "before Lyon", "used to": the earlier value wins
    key = _asked(plan.question) if plan.time_focus == "present" or prior else AskedKey(groups=(), names=())
    value = _wanted_value(plan)
    around = tuple((row.row_id, row.told) for row in rows if row.told)
    # When the question names people who speak here (or whom facts are about), their own
    # statements come before what others said of them ("Wren: Happy belated birthday!" is not
    # Kwame's birthday). A document's passage is no one's statement and is never another voice.
    voices = speaker_weights(rows, plan)
    found: list[tuple[tuple[bool, bool, bool, bool, bool, bool, float, bool, int], _Support]] = []
    for rank, row in enumerate(rows):
        row_facts = citing.get(row.row_id, [])
        cited_by = _kin(frozenset().union(*(_fact_stems(fact) for fact in row_facts)))
        stems = _kin(content_stems(row.text) | content_stems(row.told)) | cited_by
        row_families = frozenset().union(*(predicate_families(fact.predicate) for fact in row_facts))
        related = bool(row_families & families) or any(stem(fact.predicate) in wanted for fact in row_facts)
        keyed = _states_asked_key(row, key)
        first_with_value = rank < UNRELATED_RANKS and _holds_asked_value(row, plan, value, asks_time)
        missing_keyword = bool(keywords) and not keywords & stems and not keyed
        if missing_keyword and not first_with_value:
            continue
        if topical:
            about = bool(stems & topical) or related
        else:
            about = bool(names) and names <= stems
        if plan.operator == "intersection" and names:
            about = about and names <= stems  # both sides, or it is only one side's evidence
        # Retrieval's first rows stay in when they name what is asked, after every row about
        # the question: "When is his birthday?" is answered by "I turned forty-two on 27 November".
        unrelated = missing_keyword or (not about and not keyed)
        if unrelated and not first_with_value:
            continue
        coverage = _window_coverage(row.text, wanted, cited_by) if wanted else 0.0
        score = coverage + (RELATION_BONUS if related else 0.0)
        support = _Support(
            row=row,
            rank=rank,
            score=score,
            families=row_families,
            stems=stems,
            key=key if keyed else None,
            around=around,
        )
        has_date = asks_time and _dated_answer(row) is not None
        former = prior and _FORMER.search(row.text) is not None  # "used to": a former value by its words
        replaced = (plan.time_focus == "present" and not prior and not row.current) or (
            prior and row.current and not former
        )
        best = _best_sentence(row.text, plan, support)  # what an answer from this row would quote
        valued = value is None or _holds_value(best, value, plan)
        # "What did she use to eat?": a row that says "used to" says what is asked
        worded = not (former and _FORMER.search(plan.question))
        echo = _is_echo(row, best) or (not row.passage and voices[row.row_id] == OTHER_SPEAKER_WEIGHT)
        # Rows that state the asked key are in retrieval's order, which placed the key's current
        # (or, for "before …", earlier) values first; the others by how much of the question they cover.
        cover = 0.0 if keyed else -score
        found.append(((replaced, echo, unrelated, worded, not keyed, not valued, cover, not has_date, rank), support))
    return [support for _, support in sorted(found, key=lambda item: item[0])]


def _holds_asked_value(row: EvidenceRow, plan: Plan, value: str | None, asks_time: bool) -> bool:
    """The row names what the question asks although it shares no word with it: a date for a
    time question, or, for "where", a place in a stored fact about the person asked about
    ("Efua is an emergency nurse in Toronto" for "Where did Efua live before Calgary?"). Not
    any name or place of any row: "What is Priya's favourite opera?" must stay unanswered by
    "We went to the Louvre"."""
    if asks_time:
        return bool(_row_dates(row))
    about_asked = row.memory_type == "semantic" and bool(_name_stems(plan) & content_stems(row.speaker))
    return value == "place" and about_asked and _holds_value(row.text, value, plan)


def _window_coverage(text: str, wanted: frozenset[str], beside: frozenset[str]) -> float:
    """The share of the question's stems that two consecutive sentences of the text cover at
    best, with ``beside`` (what the facts citing the row name): an answer is quoted from one
    sentence and its neighbour, so a passage scores by its best place, not by its length."""
    sentences = _sentences(text) or [text]
    stems = [_kin(content_stems(sentence)) for sentence in sentences]
    windows = [a | b for a, b in itertools.pairwise(stems)] or stems
    return max(len((window | beside) & wanted) for window in windows) / len(wanted)


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> Doc:
    return spacy_pipeline()(text)


def _asked(question: str) -> AskedKey:
    return asked_key(_parsed(question)[:])


def _states_asked_key(row: EvidenceRow, key: AskedKey) -> bool:
    """The row states a value of the fact key the question asks for ("What diet does she
    follow?" — "I've gone fully vegan"): a semantic row by the key its writer stored, any row
    read the way the local writer reads a fact."""
    if not key.attributes:
        return False
    if row.attribute and is_asked_fact(row.speaker, row.attribute, key):
        return True
    speaker = _SPEAKER.match(row.text)
    body = row.text[speaker.end() :] if speaker else row.text
    return states_key(list(_parsed(body).sents), speaker=row.speaker, key=key)


def _is_echo(row: EvidenceRow, best: str) -> bool:
    """Not a statement of the fact: an assistant's (or tool's) row, or a question."""
    return row.speaker.casefold() in _ECHO_SPEAKERS or best.endswith("?")


def _duration(text: str) -> str | None:
    """The first length of time the text names ("for three years", "since 2019")."""
    found = _DURATION.search(text)
    return found.group(0) if found is not None else None


# --- temporal ----------------------------------------------------------------------------


def _format_date(resolved: ResolvedDate) -> str:
    day = resolved.start
    if resolved.precision is Precision.YEAR:
        return str(day.year)
    if resolved.precision is Precision.MONTH:
        return f"{day:%B} {day.year}"
    if resolved.precision is Precision.WEEK:
        return f"the week of {day.day} {day:%B} {day.year}"
    return f"{day.day} {day:%B} {day.year}"


def _row_dates(row: EvidenceRow) -> list[ResolvedDate]:
    moment = row.mention_time or row.event_time
    if moment is None:  # without a time it was said, only dates that carry their own year resolve
        dated = find_dates(row.text, mention_time=date(2000, 1, 1), tense=Tense.PAST)
        return [d for d in dated if re.search(r"\d{4}", d.phrase)]
    return find_dates(row.text, mention_time=moment, tense=Tense.PAST)  # evidence mostly tells what happened


def _dated_answer(row: EvidenceRow) -> str | None:
    """The most specific date the row's text names, resolved; else the row's event time."""
    resolved = most_specific(_row_dates(row))
    if resolved is not None:
        return _format_date(resolved)
    if row.event_time is not None:
        return _format_date(ResolvedDate(phrase="", start=row.event_time.date(), precision=Precision.DAY))
    return None


# --- count -------------------------------------------------------------------------------


def _number_of(token: str) -> int | None:
    lowered = token.lower()
    if _DIGITS.match(lowered):
        return int(lowered)
    ordinal = _ORDINAL_DIGITS.match(lowered)
    if ordinal is not None:
        return int(ordinal.group(1))
    return _CARDINALS.get(lowered, _ORDINALS.get(lowered))


def _counted_number(text: str, wanted: str) -> int | None:
    """The number right before a noun (by stem): "two kids", "3 new dresses", "third half
    marathon", "twice" for "times"."""
    tokens = _TOKEN.findall(text)
    for index, token in enumerate(tokens):
        if wanted == _TIMES and token.lower() in _TIMES_WORDS:
            return _TIMES_WORDS[token.lower()]
        value = _number_of(token)
        if value is None:
            continue
        for follower in tokens[index + 1 : index + 2 + _BETWEEN_NUMBER_AND_NOUN]:
            if stem(follower) == wanted:
                return value
            if not follower[0].isalpha() or follower.lower() in _NOT_BETWEEN or _number_of(follower) is not None:
                break
    return None


def _spelled(value: int) -> str:
    """Up to twenty in words ("two"), larger counts in digits."""
    return _SPELLED.get(value, str(value))


def _count_answer(plan: Plan, supported: list[_Support]) -> AnswerDraft:
    counted = plan.counted
    # The counted noun first ("two kids"), then any word the question is about ("my third half
    # marathon" for "How often did she run a half marathon?").
    nouns = [stem(counted)] if counted is not None else []
    nouns += sorted(_topical_stems(plan) - set(nouns))
    for noun in nouns:
        for support in supported:
            value = _counted_number(support.row.text, noun)
            if value is not None:
                # Spelled out: the answer check tests digits against the evidence, and a count
                # read off an ordinal ("my third marathon") is in no row as digits.
                return AnswerDraft(answer=_spelled(value), cited_row_ids=(support.row.row_id,))
    wanted = stem(counted) if counted is not None else _TIMES
    if wanted == _TIMES:  # "how often": occurrences of any asked relation
        families = {family.name for family in plan.relations}
    else:  # "how many pets": facts of the relation the counted noun itself cues, not of "have"
        families = {family.name for family in plan.relations if any(stem(cue) == wanted for cue in family.cues)}
    members = [s for s in supported if wanted in s.stems or s.families & families]
    if not members:
        return AnswerDraft(answer=UNKNOWN_ANSWER, cited_row_ids=())
    distinct = list(dict.fromkeys(s.row.row_id for s in members))
    return AnswerDraft(answer=_spelled(len(distinct)), cited_row_ids=tuple(distinct))


# --- sentences ---------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    """The sentences of a text, a title or an initial not ending one ("my GP is Dr. Marchand").
    A line without a full stop runs on into a sentence that has one ("ARTICLE 7 - SECURITY
    DEPOSIT" heads what it says), and a line ending with a colon into the lines it introduces
    ("Shopping list:", "- eggs", "- milk"); other lines without one are sentences of their own
    (a log's records)."""
    sentences: list[str] = []
    listing = False  # a line ending with a colon introduces the lines after it, to a full stop
    for piece in (p.strip() for p in _SENTENCE_END.split(text)):
        if not piece:
            continue
        runs_on = sentences and not sentences[-1].endswith(_STOPS) and piece.endswith(_STOPS)
        if sentences and (_ABBREVIATION.search(sentences[-1]) or runs_on or listing):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
        listing = sentences[-1].endswith(":") or (listing and not piece.endswith(_STOPS))
    return sentences


def _best_sentence(text: str, plan: Plan, support: _Support | None = None) -> str:
    return _quoted_sentence(text, plan, support)[0]


def _quoted_sentence(text: str, plan: Plan, support: _Support | None = None) -> tuple[str, str | None]:
    """The sentence that covers most of the question's stems (the first of equals), among those
    that state the asked fact key when the row states it, keeping the speaker ("Priya: …") that
    opens the row so "I" stays resolvable; and the id of another row it quotes a neighbouring
    sentence from, if any (that row is cited too)."""
    # A document's passage is no one's statement: "Step 7 of the backup:" opens no speaker.
    speaker = None if support is not None and support.row.passage else _SPEAKER.match(text)
    body = text[speaker.end() :] if speaker else text
    while speaker and body.startswith(speaker.group(0)):  # "Priya: Priya: …" (a named semantic row)
        body = body[speaker.end() :]
    sentences = _sentences(body) or [body.strip()]
    statements = [sentence for sentence in sentences if not sentence.endswith("?")]
    sentences = statements or sentences  # a question restates what is asked; a statement answers it
    # "How many days under clause 17?": the sentences of clause 17, not of the clause beside it
    # that shares more of the question's words (ADR 0098).
    sentences = referenced_part(sentences, numbered_references(plan.question))
    if support is not None and support.key is not None:
        key = support.key
        stating = [s for s in sentences if states_key(list(_parsed(s).sents), speaker=support.row.speaker, key=key)]
        sentences = stating or sentences
    wanted = _asked_stems(plan)
    value = _wanted_value(plan)
    overlaps = [
        (_holds_value(sentence, value, plan), len(_kin(content_stems(sentence)) & wanted)) for sentence in sentences
    ]
    best = sentences[overlaps.index(max(overlaps))]

    def answers(sentence: str) -> bool:
        """It names a value of the asked kind, or, when no kind is asked, says more than the
        question ("I'm allergic." says nothing "What is he allergic to?" does not)."""
        if value is not None:
            return _holds_value(sentence, value, plan)
        return bool(_kin(content_stems(sentence)) - wanted)

    also = None
    if not answers(best):
        best, also = _with_neighbour(best, answers, support, body, both=value is None)
    return (f"{speaker.group(1)}: {best}" if speaker else best), also


def _with_neighbour(
    best: str, answers: Callable[[str], bool], support: _Support | None, body: str, *, both: bool
) -> tuple[str, str | None]:
    """A statement that does not answer, with the sentence next to it where it was said that
    does: the next one ("We leased a car! A little Renault Zoe, electric"), else the one before
    ("We rewatched Amélie. It's still my favourite film"); with ``both``, each that does ("No
    shellfish of any kind. I'm allergic. Shrimp sent me to emergency once."). Where it was
    said: the row's own source sentences, else those of another row shown that holds the
    statement."""
    own = support.row.row_id if support is not None else None
    tolds = [(own, support.row.told or body), *support.around] if support is not None else [(own, body)]
    for row_id, told in tolds:
        said = _sentences(told)
        if best not in said:
            continue
        at = said.index(best)
        quoted = row_id if row_id != own else None
        after = said[at + 1] if at + 1 < len(said) and answers(said[at + 1]) else None
        before = said[at - 1] if at > 0 and answers(said[at - 1]) else None
        if both and (before or after):
            return " ".join(s for s in (before, best, after) if s), quoted
        if after:
            return f"{best} {after}", quoted
        if before:
            return f"{before} {best}", quoted
    return best, None
