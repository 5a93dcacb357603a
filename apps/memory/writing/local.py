"""The ``local`` provider: deterministic and offline, rules over spaCy's parse.

Routing and writing follow fixed rules. Episodic drafts are written per message turn (split
only where one turn tells of a done and a planned event), keep the speaker as the actor, the
sentences as the summary and every entity, number and date verbatim in the details, and
resolve the event time against the message's timestamp (:mod:`apps.language.dates`).
Local inference costs no tokens, so nothing is metered.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from apps.language.dates import Precision, ResolvedDate, Tense, find_dates, most_specific
from apps.language.facts import (
    ENDED,
    FactReading,
    accepted_offer,
    clause_facts,
    ended_name,
    introduced_pet,
    is_addressed,
    is_asked,
    is_thing_word,
    lead_in_verbs,
    moved_to_a_time,
    named_relatives,
    of_a_relative,
    owned_by_pronoun,
    owned_statement,
    pays_rent,
    pronoun_subject,
    read_fact,
    relative_name,
    replaced_value,
    speaker_fact,
    speaker_relatives,
    with_activity_taken_up,
    with_ended_referent,
    with_schedule_referent,
)
from apps.language.pipeline import PARSES, entity_words, is_unknown_name
from apps.language.questions import with_asked_attribute
from apps.language.tense import clause_tense
from apps.language.words import SHARED_PICTURE, STOPWORDS
from apps.memory.passages import is_document
from apps.memory.statements import about_prefix
from apps.providers.interfaces import MeteringContext, Purpose
from apps.providers.local_usage import MEMORY_WRITER, record_local
from apps.providers.schemas import (
    MEMORY_TYPES,
    CoreDraft,
    EpisodicDraft,
    InputMessage,
    MemoryType,
    ProceduralDraft,
    RouteDecision,
    SemanticDraft,
    WriterInput,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token


def _parse(text: str) -> Doc:
    """The router and each writer read the same messages: parse each text once."""
    return PARSES.get(text)


def parse_ahead(texts: Iterable[str]) -> None:
    """Parse the texts the router and the writers are about to read in one batched pipeline
    call (``nlp.pipe``), far cheaper than one call per text; a worker completing many writes
    at once calls it with all their messages (ADR 0054)."""
    PARSES.warm(text for text in texts if not is_document(text))


_WORD = re.compile(r"[a-z]+")
_INTERJECTIONS = frozenset(
    {
        "ah",
        "aha",
        "aw",
        "aww",
        "bye",
        "cheers",
        "cool",
        "great",
        "hmm",
        "huh",
        "nice",
        "oh",
        "oops",
        "sure",
        "uh",
        "um",
        "wow",
        "yeah",
        "yep",
        "yes",
        "yup",
        "no",
        "nope",
        "please",
        "sorry",
        "welcome",
        "morning",
        "evening",
        "night",
        "goodbye",
        "hiya",
        "howdy",
        "thx",
        "ty",
        "np",
        "xd",
        "lmao",
        "rofl",
    }
)


def _looks_trivial(text: str) -> bool:
    """The lexical half of ``_is_trivial``, without a parse (nor spaCy's import, which a
    request must not pay): only stop words, greetings, thanks and laughter."""
    words = _WORD.findall(_normalized(text).lower())
    return all(
        word in STOPWORDS or word in _FILLER or word in _INTERJECTIONS or re.fullmatch(r"(?:h[ae])+h?|l+o+l+", word)
        for word in words
    )


def keep_reason(messages: Iterable[InputMessage]) -> str | None:
    """Why a write is worth keeping, decided in its request without parsing (ADR 0054): a
    message that is not small talk, a link or file, or listed steps; None when there is
    nothing (the write is then a 422). The router decides the types later, in the worker;
    whatever it decides, the messages stay stored."""
    for message in messages:
        if _RESOURCE.search(message.content) or is_document(message.content):
            return "a link, file or long document"
        content = _normalized(message.content)
        sequenced = _sequenced_procedure(content)
        if any(len(p.steps) >= 2 for p in [*_listed_procedures(content), *([sequenced] if sequenced else [])]):
            return "step-by-step instructions"
        if message.role != "system" and not _looks_trivial(message.content):
            return "what was said in the conversation"
    return None


# --- lexical rules -------------------------------------------------------------------------

_FIRST_PERSON_FACT = re.compile(
    r"""\b(?:
        my\s+name\s+is | call\s+me\b
      | i\s*(?:'m|\s+am)\s+(?:a|an)\s+(?!bit\b|little\b|lot\b|tad\b|few\b)\w+
      | i\s*(?:'m|\s+am)\s+(?:from|allergic|vegetarian|vegan|married|single|divorced|engaged|retired
                            |\d+\s+years?\s+old|studying|training\s+to\s+be|working\s+as)\b
      | i\s+(?:really\s+|absolutely\s+|just\s+|also\s+)?(?:love|like|enjoy|prefer|hate|dislike|adore)\s+
            (?!it\b|that\b|this\b|you\b|them\b|those\b|these\b)\w+
      | i\s+(?:can't|cannot|don't)\s+(?:stand|eat|drink)\b
      | my\s+(?:favou?rite|hobby|hobbies|passion|job|career|goal|dream)\b
      | i\s+(?:work|worked|volunteer)\s+(?:as|at|for|in)\b
      | i\s+(?:live|grew\s+up|was\s+born|moved)\s+(?:in|to)\b
      | i\s+(?:have|'ve\s+got)\s+(?:a|an|one|two|three|four|five|\d+)\s+
            (?:kids?|children|sons?|daughters?|dogs?|cats?|pets?|brothers?|sisters?|siblings)\b
      | my\s+(?:wife|husband|partner|boyfriend|girlfriend|son|daughter|kids|children|mom|mother|dad|father
               |brother|sister|dog|cat|pet)(?:'s\s+name)?\s+(?:is|are)\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_FUTURE = re.compile(
    r"""(?:\b(?:will|shall|won't|gonna|about\s+to|looking\s+forward\s+to|can't\s+wait\s+(?:to|for)
            |(?:plan|plans|planning|planned|intend|intends|intending|hope|hoping)\s+to
            |going\s+to\s+(?!be\s+honest\b)(?:[a-z]+)
            |(?:am|is|are|'m|'re)\s+(?:[a-z]+\s+)?going\s+(?!to\b)[a-z]+ing)\b
        |'ll\b)""",
    re.IGNORECASE | re.VERBOSE,
)
_RESOURCE = re.compile(r"https?://\S+|\b[\w-]+\.(?:pdf|docx?|xlsx?|csv|pptx?|txt|md|png|jpe?g)\b|```", re.IGNORECASE)
_STEP_LINE = re.compile(r"^\s*(?:step\s*\d+\s*[.):-]?|\d+[.)]|[-*\u2022])\s+(?P<step>\S.*)$", re.IGNORECASE)
_SEQUENCE_MARKER = re.compile(
    r"(?:^|(?<=[.;:,!?])\s*|\band\s+)\b(?:first(?:ly)?|then|next|after\s+that|afterwards|finally|lastly)\b,?\s*",
    re.IGNORECASE,
)
_HOW_TO = re.compile(r"\bhow\s+(?:to|i|we|you)\s+(?P<goal>[^.?!:\n]+)", re.IGNORECASE)
_TO_GOAL = re.compile(r"^\s*(?:in\s+order\s+)?to\s+(?P<goal>[^,.:\n]+)", re.IGNORECASE)
_PROCEDURE_CUE = re.compile(r"\b(?:how\s+to|steps?|instructions|recipe|here's\s+how|guide)\b", re.IGNORECASE)
_DOMAINS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (domain, re.compile(rf"\b(?:{words})\b", re.IGNORECASE))
    for domain, words in (
        (
            "cooking",
            r"recipe|bake|baking|oven|cook|cooking|boil|fry|dough|flour|sauce|simmer|stir|brew|coffee|tea|steep",
        ),
        ("software", r"install|deploy|code|git|pip|python|server|database|terminal|command|compile|api|script"),
        ("gardening", r"plants?|soil|garden|seeds?|pot|repot|watering|prune|compost|cactus"),
        ("fitness", r"workout|exercise|stretch|reps?|squats?|run|running|warm[- ]up|muscles?"),
        ("travel", r"flight|passport|visa|airport|hotel|luggage|itinerary|train|booking"),
        ("finance", r"budget|invest|savings?|tax(?:es)?|loan|bank|payment"),
        ("crafts", r"paint|painting|canvas|brush|knit|sew|glue|pottery|clay"),
    )
)
_ENTITY_GROUPS = {
    "PERSON": "People",
    "GPE": "Places",
    "LOC": "Places",
    "FAC": "Places",
    "ORG": "Organizations",
    "NORP": "Groups",
    "WORK_OF_ART": "Titles",
    "PRODUCT": "Products",
    "EVENT": "Events",
    "LANGUAGE": "Languages",
    "DATE": "Dates",
    "TIME": "Times",
    "MONEY": "Amounts",
    "CARDINAL": "Numbers",
    "ORDINAL": "Numbers",
    "QUANTITY": "Quantities",
    "PERCENT": "Percentages",
}
# names of what is no person (not an organization: the tagger calls names it does not know so)
_THINGS = frozenset({"PRODUCT", "FAC", "WORK_OF_ART"})
_DESCRIBED_LABELS = frozenset(
    {"PERSON", "GPE", "LOC", "FAC", "ORG", "NORP", "WORK_OF_ART", "PRODUCT", "EVENT", "LANGUAGE"}
)
_STATIVE_LEMMAS = frozenset({"be", "have", "seem", "think", "know", "feel", "want", "like", "love", "mean", "hope"})
_FILLER = frozenset(
    {"haha", "hahaha", "lol", "omg", "wow", "yay", "hey", "hi", "hello", "thanks", "thank", "ok", "okay"}
)


# --- analysis of one message ---------------------------------------------------------------


@dataclass(frozen=True)
class _Sentence:
    span: Span
    text: str
    status: Literal["planned", "done"]
    dates: list[ResolvedDate]
    is_event: bool
    is_question: bool
    is_heading: bool = False  # a title line of a message of several lines: it states nothing
    is_picture: bool = False  # a picture shared ("[shared an image: …]"): an event, never the only one told

    @property
    def states(self) -> bool:
        """It may state a fact: neither a question nor a title."""
        return not self.is_question and not self.is_heading

    @property
    def event_time(self) -> ResolvedDate | None:
        return most_specific(self.dates)


@dataclass
class _Group:
    sentences: list[_Sentence] = field(default_factory=list)

    @property
    def events(self) -> list[_Sentence]:
        return [sentence for sentence in self.sentences if sentence.is_event]

    @property
    def event_time(self) -> ResolvedDate | None:
        return most_specific([resolved for sentence in self.events for resolved in sentence.dates])

    def admits(self, sentence: _Sentence) -> bool:
        """A sentence joins the current group unless it tells of another event."""
        if not sentence.is_event or not self.events:
            return True
        if sentence.status != self.events[0].status:
            return False
        mine, theirs = self.event_time, sentence.event_time
        return mine is None or theirs is None or mine.iso == theirs.iso


def _normalized(text: str) -> str:
    """Curly apostrophes as straight ones, one character for one, so offsets still match."""
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _actor(message: InputMessage) -> str:
    return message.name or message.role


def _is_document(message: InputMessage) -> bool:
    """Documents are kept whole and in passages by the write path; the writers do not parse them."""
    return is_document(message.content)


def _is_trivial(tokens: Iterable[Token]) -> bool:
    """Greetings, thanks and laughter: nothing but stop words, interjections and punctuation."""
    return not any(
        not (token.is_stop or token.is_punct or token.is_space or token.pos_ == "INTJ") and token.lower_ not in _FILLER
        for token in tokens
    )


def _is_conversational(message: InputMessage) -> bool:
    """What the conversation writers read: not system prompts, small talk or whole documents."""
    return message.role != "system" and not _is_document(message) and not _is_trivial(_parse(message.content))


def _is_event(span: Span, dates: list[ResolvedDate], future: bool) -> bool:
    if dates or future:
        return True
    return any(token.tag_ in ("VBD", "VBN") and token.lemma_ not in _STATIVE_LEMMAS for token in span)


def _tense_at(span: Span, offset: int) -> Tense:
    """The tense of the clause at character ``offset`` of ``span``'s text."""
    at = span.start_char + offset
    token = next((t for t in span if t.idx <= at < t.idx + len(t.text)), span.root)
    return clause_tense(token)


def _lines(sentence: Span) -> Iterator[Span]:
    """The parser's sentence cut at its line breaks: lines it ran together for want of a full
    stop (a log's records, a table's rows, a list's items) are sentences of their own, so no
    fact or episode runs a whole pasted log together."""
    start = sentence.start
    for token in sentence:
        if token.is_space and "\n" in token.text:
            if token.i > start:
                yield sentence.doc[start : token.i]
            start = token.i + 1
    if start < sentence.end:
        yield sentence.doc[start : sentence.end]


@functools.lru_cache(maxsize=256)
def _sentences(message: InputMessage) -> tuple[_Sentence, ...]:
    if _is_document(message):
        return ()
    mention = message.timestamp.date()
    sentences: list[_Sentence] = []
    for span in (line for sent in _parse(message.content).sents for line in _lines(sent)):
        text = _collapse(span.text)
        if not text:
            continue
        normalized = _normalized(span.text)
        # Each date looks the way its own clause's tense says: "we moved in April and will
        # paint in June" is a past April and a coming June.
        dates = find_dates(normalized, mention_time=mention, tense=functools.partial(_tense_at, span))
        # "Next month we fly to Paris": planned without a future verb; "I was looking forward to
        # Saturday" said on the Monday after is told of a day gone by (ADR 0148).
        gone_by = bool(dates) and all(r.precision is Precision.DAY and r.start < mention for r in dates)
        future = (bool(_FUTURE.search(normalized)) and not gone_by) or any(r.start > mention for r in dates)
        is_question = is_asked(span)
        sentences.append(
            _Sentence(
                span=span,
                text=text,
                status="planned" if future else "done",
                dates=dates,
                is_event=not is_question and _is_event(span, dates, future),
                is_question=is_question,
                is_heading="\n" in message.content.strip() and _is_heading(text),
                is_picture=SHARED_PICTURE.fullmatch(text) is not None,
            )
        )
    return tuple(sentences)


def _is_heading(text: str) -> bool:
    """A line in capitals without a full stop ("POTTERY STUDIO - MEMBER HANDBOOK"): in a message
    of several lines, the title of what follows."""
    letters = [c for c in text if c.isalpha()]
    return len(letters) > 1 and all(c.isupper() for c in letters) and not text.rstrip().endswith((".", "!", "?"))


def _groups(sentences: Iterable[_Sentence]) -> list[_Group]:
    groups: list[_Group] = []
    for sentence in sentences:
        if not groups or not groups[-1].admits(sentence):
            groups.append(_Group())
        groups[-1].sentences.append(sentence)
    return groups


def _inventory(spans: list[Span]) -> list[str]:
    """Every entity, number and date of the spans, verbatim, as 'Kind: a; b' lines."""
    grouped: dict[str, list[str]] = {}
    for span in spans:
        for entity in span.ents:
            kind = _ENTITY_GROUPS.get(entity.label_)
            if kind is None:
                continue
            value = entity_words(entity)
            values = grouped.setdefault(kind, [])
            if value not in values:
                values.append(value)
    return [f"{kind}: {'; '.join(values)}" for kind, values in grouped.items()]


def _provenance(message: InputMessage) -> str:
    return f"Said by {_actor(message)} on {message.timestamp.date().isoformat()} (message {message.message_id})."


def _event_type(group: _Group) -> str:
    for sentence in group.events:
        root = sentence.span.root
        if root.pos_ not in ("VERB", "AUX"):
            continue
        if root.lemma_ in ("be", "have"):
            complement = next((child for child in root.children if child.dep_ in ("attr", "dobj")), None)
            if complement is not None:
                return complement.lemma_.lower()
            continue
        label = [root.lemma_.lower(), *(child.lower_ for child in root.children if child.dep_ == "prt")]
        target = _event_target(root)
        return " ".join([*label, target] if target else label)
    return "conversation"


def _event_target(root: Token) -> str | None:
    for child in root.children:
        if child.dep_ == "dobj":
            return child.lower_
        if child.dep_ in ("prep", "dative"):
            objects = [grandchild for grandchild in child.children if grandchild.dep_ == "pobj"]
            if objects:
                return f"{child.lower_} {objects[0].lower_}"
    return None


def _episodic_drafts(message: InputMessage) -> Iterator[EpisodicDraft]:
    if not _is_conversational(message):
        return
    actor = _actor(message)
    for group in _groups(_sentences(message)):
        spans = [sentence.span for sentence in group.sentences]
        if all(_is_trivial(span) for span in spans):
            continue
        # What happened; a group whose only events are pictures shared ("The new place is so
        # green. [shared an image: a park]") is told whole: the picture is not all it says (ADR 0145)
        told = group.events if any(not event.is_picture for event in group.events) else group.sentences
        event_time = group.event_time
        date_lines = [
            f"{resolved.phrase} = {resolved.iso}" for sentence in group.sentences for resolved in sentence.dates
        ]
        details = [
            " ".join(sentence.text for sentence in group.sentences),
            _provenance(message),
            *([f"Resolved dates: {'; '.join(date_lines)}"] if date_lines else []),
            *_inventory(spans),
        ]
        yield EpisodicDraft(
            actor=actor,
            event_type=_event_type(group),
            summary=f"{actor}: {' '.join(sentence.text for sentence in told)}",
            details="\n".join(details),
            event_time=event_time.iso if event_time else None,
            status=group.events[0].status if group.events else "done",
            source_message_ids=[message.message_id],
        )


def _first_person_facts(message: InputMessage, before: str) -> list[tuple[_Sentence, Span]]:
    """The speaker's statements about themselves, each with the words its fact is read from: a
    first-person pattern, a sentence that states one of the speaker's attributes ("We moved to
    Lyon", "the call moved to Mondays", "We moved it to Saturdays" after the message ``before``
    asked about the call), or one that names the value it replaces ("980 a month instead of
    1,100")."""
    if message.role not in ("user", "assistant"):
        return []
    found: list[tuple[_Sentence, Span]] = []
    said = before
    question = _last_question(before)
    previous: _Sentence | None = None
    for sentence in _sentences(message):
        referent = (
            with_schedule_referent(sentence.span, said)
            or with_ended_referent(sentence.span, said, question if said == before else None)
            or accepted_offer(sentence.span)
            or (with_asked_attribute(sentence.span, question) if not found and said == before else None)
        )
        pet = None if referent else introduced_pet(sentence.span, previous.span if previous else None)
        if pet is not None:
            if speaker_fact(sentence.span) is not None and not sentence.is_question:
                # "i work at corvid as an analyst, living in manchester w/ my cat": the pet is a
                # fact beside the sentence's own, not in its place
                found.append((sentence, sentence.span))
            referent = pet.statement
            if pet.named_before and previous is not None:  # "And meet Pickle! A … cat": both, as said
                sentence = replace(sentence, text=f"{previous.text} {sentence.text}")
        elif previous is not None and not referent and owned_by_pronoun(sentence.span):
            # "priya from work has been amazing. pretty sure she's my best friend now": the name is before
            sentence = replace(sentence, text=f"{previous.text} {sentence.text}")
        span = next(iter(_parse(referent).sents)) if referent else sentence.span
        previous = sentence
        said = f"{said} {sentence.text}"
        if sentence.states and (
            _FIRST_PERSON_FACT.search(_normalized(sentence.text))
            or speaker_fact(span) is not None
            or owned_statement(span)  # "My best friend is Maria now"
            # "980 a month instead of 1,100": a new value, unless it is someone else's ("She's an
            # instructor now, teaching instead of working the ER")
            or (replaced_value(sentence.text) is not None and not _about_someone_else(sentence.span))
            or ended_name(span) is not None  # "We lost Moose", "The Caravan is gone"
            or pays_rent(span)  # "got a one bed in bedminster, 1,050 a month"
        ):
            found.append((sentence, span))
    return found


def _last_question(text: str) -> Span | None:
    """The last sentence of the message before, when it asks something: what a reply's first
    fragment may answer ("When is your birthday again?" → "14 September, same as always.")."""
    last = list(_parse(text).sents)[-1:] if text.strip() else []
    if not last or not last[0].text.rstrip().endswith("?"):
        return None
    asked, _, rest = last[0].text.partition(",")
    # "When is your birthday again, so I can plan ahead?": what is asked comes before the comma
    return next(iter(_parse(f"{asked.strip()}?").sents)) if rest else last[0]


def _about_someone_else(span: Span) -> bool:
    """The sentence's subject is a third person: "he", "she", "they" or a name."""
    subject = next((t for t in span.root.children if t.dep_ in ("nsubj", "nsubjpass")), None)
    return subject is not None and (subject.lower_ in ("he", "she", "they") or subject.pos_ == "PROPN")


def _described_entities(sentence: _Sentence) -> list[Span]:
    """Named entities the sentence says something about: its subject, or one given an apposition;
    not someone it speaks to ("Thanks, Gina - really appreciate it", "You got this, Jon!"), nor
    the title of a pasted text."""
    if not sentence.states:
        return []
    described = []
    mains = _main_verbs(sentence.span)
    for entity in sentence.span.ents:
        if entity.label_ not in _DESCRIBED_LABELS or is_addressed(entity) or moved_to_a_time(entity.root):
            continue
        root = entity.root
        is_subject = root.dep_ in ("nsubj", "nsubjpass") and root.head in mains
        has_apposition = any(child.dep_ == "appos" for child in root.children)
        names_subject = root.dep_ == "appos" and root.head.dep_ in ("nsubj", "nsubjpass")  # "my brother Omar"
        if is_subject or has_apposition or names_subject:
            described.append(entity)
    subject = next((t for verb in mains for t in verb.children if t.dep_ in ("nsubj", "nsubjpass")), None)
    if (
        subject is not None
        and (
            subject.pos_ == "PROPN"
            # an unknown name only when it states a family's fact ("Efua moved to Calgary"),
            # so that "Update: Work is crazy" is no fact of someone called Work
            or (_untagged_name(subject, sentence.span) and read_fact(sentence.span, about=subject).from_family)
        )
        and subject.ent_type_ not in _DESCRIBED_LABELS
        and not any(child.dep_ == "poss" for child in subject.children)
        and not moved_to_a_time(subject)  # "salsa's moved to thursdays": an event (ADR 0131)
    ):
        # a name the tagger took for a date or for nothing ("Joon is leaving the hospital")
        name = sentence.span.doc[subject.left_edge.i : subject.i + 1]
        if not is_addressed(name):  # "Hey Gina, hope you're well"
            described.append(name)
    if subject is not None:  # a name the tagger does not know, given to the subject ("My friend Layla")
        untagged = (c for c in subject.children if c.dep_ == "appos" and c.pos_ == "PROPN" and not c.ent_type_)
        described += [sentence.span.doc[token.i : token.i + 1] for token in untagged]
    return described


def _main_verbs(span: Span) -> list[Token]:
    """The sentence's root, and the verb after a lead-in ("Big news: Tiago moved to Berlin",
    which the parser hangs off "news")."""
    return [span.root, *lead_in_verbs(span)]


def _untagged_name(token: Token, span: Span) -> bool:
    """A capitalized bare word the tagger took for a common noun or an adjective: a name it
    does not know. Inside a sentence, a capital says so ("Family news: Efua packed up and moved
    to Calgary"); at its start, only a word that is no English word ("Ravi works at Tesco now",
    "Ingrid lives in Glasgow"; not "Rent went up")."""
    if token.pos_ not in ("NOUN", "ADJ") or not token.is_title or list(token.children):
        return False
    return (token.i > span.start and token.pos_ == "NOUN") or is_unknown_name(token)


def _change_lines(reading: FactReading) -> list[str]:
    """A change stated as one keeps the old value it names beside the new statement."""
    if not reading.changed:
        return []
    return [f"Changed from: {reading.previous}" if reading.previous else "Stated as a change."]


def _in_turn(messages: Iterable[InputMessage]) -> Iterator[tuple[InputMessage, str]]:
    """Each message with the text of the one before it: what "it" may stand for ("We moved it
    to Saturdays" answers "Does your Sunday call still work?")."""
    before = ""
    for message in messages:
        yield message, before
        before = message.content


def _semantic_drafts(message: InputMessage, before: str = "") -> Iterator[SemanticDraft]:
    actor, provenance = _actor(message), _provenance(message)
    spans = [sentence.span for sentence in _sentences(message)]
    # each sentence's one before it in the message: a class's activity may be named there ("started salsa!!")
    prior_of = {later.start: earlier for earlier, later in itertools.pairwise(spans)}
    for sentence, span in _first_person_facts(message, before):
        prior = prior_of.get(sentence.span.start)
        # A sentence of facts of several keys ("we're in Lyon now and the rent is 1,100 euros")
        # is one row per fact, each stating its own clause, so each is superseded on its own.
        # A statement read from other words (a referent: the pet introduced, "I have a cat named
        # Pickle"; the offer accepted; the call asked about) is that one fact.
        own = span.doc is sentence.span.doc
        facts = [(fact.reading, fact.text) for fact in clause_facts(sentence.span)] if own else []
        facts = facts or [(read_fact(span), sentence.text)]
        if own and pays_rent(span) and all(reading.attribute != "rent" for reading, _ in facts):
            # "we rent a little terrace w/ my bf callum, 850 a month": the rent beside the
            # sentence's fact, or in place of a reading of no family's ("rent terrace")
            rent = (FactReading(attribute="rent", from_family=True), sentence.text)
            facts = [*(fact for fact in facts if fact[0].from_family), rent]
        for reading, text in facts:
            if own and not reading.from_family and of_a_relative(span):
                continue  # "My brother is a teacher": his fact (below), no key of the speaker's
            ended = None if reading.from_family else ended_name(span)
            yield SemanticDraft(
                name=actor,
                attribute=f"{ENDED}{ended}" if ended else with_activity_taken_up(reading.attribute, prior),
                summary=f"{actor}: {text}",
                details="\n".join([sentence.text, *_change_lines(reading), provenance, *_inventory([sentence.span])]),
                source=actor,
                source_message_ids=[message.message_id],
            )
    person: str | None = None  # the one person the previous sentence named
    for sentence in _sentences(message):
        about = [(entity_words(entity), entity.root) for entity in _described_entities(sentence)]
        pronoun = pronoun_subject(sentence.span)
        if not about and person is not None and pronoun is not None and not sentence.is_question:
            # "Tiago did it. He moved to Berlin": a fact of Tiago's when it is one of a family's
            reading = read_fact(sentence.span, about=pronoun)
            about = [(person, pronoun)] if reading.from_family else []
        if not sentence.is_question:
            # "My mum moved in with Kofi in Accra": a fact of (Kwame's mother, home city)
            for token in speaker_relatives(sentence.span):
                name = relative_name(actor, token)
                if name is not None and read_fact(sentence.span, about=token).from_family:
                    about.append((name, token))
        for name, token in about:
            # "My sister moved to Leeds and works at the hospital": one row per fact, as the speaker's
            clauses = [(fact.reading, fact.text) for fact in clause_facts(sentence.span, about=token)]
            for reading, text in clauses or [(read_fact(sentence.span, about=token), sentence.text)]:
                if reading.attribute == "job" and (token.ent_type_ in _THINGS or is_thing_word(token.text)):
                    continue  # "the ThinkPad is retired": a thing holds no job
                if sentence.is_event and not reading.from_family:
                    # What happened to someone or something that states none of a family's facts
                    # ("Ines called me", a log's "deploy #1044 to eu-west succeeded") is an event:
                    # its episodic row holds it, and a statement keyed by its verb would mark the
                    # last such event of the name as replacing every earlier one.
                    continue
                # What the speaker said of a person reads as the speaker's words ("Nadia, about
                # Tiago: He moved to Berlin"), not as the person's own; a place or a thing keeps
                # its name in front ("Lyon: Lyon is two hours from Geneva").
                said_of_person = token.ent_type_ in ("PERSON", "") and name != actor
                yield SemanticDraft(
                    name=name,
                    attribute=reading.attribute,
                    summary=f"{about_prefix(actor, name)}{text}" if said_of_person else text,
                    details="\n".join(
                        [sentence.text, *_change_lines(reading), provenance, *_inventory([sentence.span])]
                    ),
                    source=actor,
                    source_message_ids=[message.message_id],
                )
        for name, attribute in [] if sentence.is_question else named_relatives(sentence.span, actor):
            yield SemanticDraft(  # "my mum, Abena": (Kwame's mother, name)
                name=name,
                attribute=attribute,
                summary=f"{about_prefix(actor, name)}{sentence.text}",
                details="\n".join([sentence.text, provenance, *_inventory([sentence.span])]),
                source=actor,
                source_message_ids=[message.message_id],
            )
        named = {name for name, _ in about} or {
            entity_words(entity) for entity in sentence.span.ents if entity.label_ == "PERSON"
        }
        person = named.pop() if len(named) == 1 else None


@dataclass(frozen=True)
class _Procedure:
    intro: str
    steps: list[str]


def _clean_step(text: str) -> str:
    return _collapse(re.sub(r"(?:,|;|\band)\s*$", "", text.strip()).strip())


def _listed_procedures(content: str) -> Iterator[_Procedure]:
    """Runs of two or more numbered or bulleted lines, each with the line that introduces it."""
    intro, steps = "", []
    for line in content.splitlines():
        match = _STEP_LINE.match(line)
        if match:
            step = _clean_step(match["step"])
            if step:
                steps.append(step)
        elif line.strip():
            if len(steps) >= 2:
                yield _Procedure(intro=intro, steps=steps)
            intro, steps = line.strip(), []
    if len(steps) >= 2:
        yield _Procedure(intro=intro, steps=steps)


def _sequenced_procedure(content: str) -> _Procedure | None:
    markers = list(_SEQUENCE_MARKER.finditer(content))
    if len(markers) < 2 or not re.match(r"first", markers[0].group(0).strip(" ,.;"), re.IGNORECASE):
        return None
    bounds = [*(marker.start() for marker in markers[1:]), len(content)]
    steps = [_clean_step(content[marker.end() : end]) for marker, end in zip(markers, bounds, strict=True)]
    return _Procedure(intro=content[: markers[0].start()].strip(), steps=[step for step in steps if step])


def _is_instructional(procedure: _Procedure, content: str) -> bool:
    """A list or a first/then sequence is a procedure when it is introduced as one or is imperative."""
    if len(procedure.steps) < 2:
        return False
    if _PROCEDURE_CUE.search(content) or _TO_GOAL.match(procedure.intro):
        return True
    # The opening words decide the mood; a long document's step is not parsed whole.
    imperative = sum(1 for step in procedure.steps if _parse(step[:120])[0].tag_ == "VB")
    return imperative * 2 > len(procedure.steps)


def _title(procedure: _Procedure, content: str) -> str:
    how_to = _HOW_TO.search(procedure.intro) or _HOW_TO.search(content)
    if how_to:
        return f"How to {_collapse(how_to['goal']).rstrip(' ,;')}"
    to_goal = _TO_GOAL.match(procedure.intro)
    if to_goal:
        return f"How to {_collapse(to_goal['goal'])}"
    return _collapse(procedure.intro.rstrip(": ")) or procedure.steps[0]


def _domain(content: str) -> str:
    scores = [(len(pattern.findall(content)), domain) for domain, pattern in _DOMAINS]
    count, domain = max(scores)
    return domain if count else "general"


def _procedures(message: InputMessage) -> list[_Procedure]:
    content = _normalized(message.content)
    candidates = list(_listed_procedures(content))
    sequenced = _sequenced_procedure(content)
    if not candidates and sequenced is not None:
        candidates.append(sequenced)
    return [procedure for procedure in candidates if _is_instructional(procedure, content)]


def _procedural_drafts(message: InputMessage) -> Iterator[ProceduralDraft]:
    content = _normalized(message.content)
    for procedure in _procedures(message):
        title = _title(procedure, content)
        yield ProceduralDraft(
            title=title,
            summary=f"{title}, in {len(procedure.steps)} steps, as told by {_actor(message)}.",
            steps=procedure.steps,
            domain=_domain(content),
            source_message_ids=[message.message_id],
        )


def _already_stored(text: str, related_memories: list[str]) -> bool:
    needle = _collapse(text).casefold()
    return any(needle in _collapse(memory).casefold() for memory in related_memories)


# --- the provider --------------------------------------------------------------------------


def _read(memory_input: WriterInput, metering: MeteringContext, purpose: Purpose) -> None:
    """Meter one pass over the messages (ADR 0049)."""
    record_local(
        metering, purpose=purpose, model=LocalMemoryLLM.model, texts=[m.content for m in memory_input.messages]
    )


class LocalMemoryLLM:
    """Each call meters the tokens of the messages it reads (ADR 0049)."""

    model = MEMORY_WRITER

    def route(self, memory_input: WriterInput, *, metering: MeteringContext) -> RouteDecision:
        _read(memory_input, metering, Purpose.ROUTE)
        chosen: dict[MemoryType, str] = {}
        for message, before in _in_turn(memory_input.messages):
            if _RESOURCE.search(message.content) or _is_document(message):
                chosen.setdefault("resource", "a link, file or long document")
            if _procedures(message):
                chosen.setdefault("procedural", "step-by-step instructions")
            if not _is_conversational(message):
                continue
            sentences = _sentences(message)
            if _first_person_facts(message, before):
                chosen.setdefault("core", "first-person facts or preferences")
                chosen.setdefault("semantic", "facts about a person")
            # Every substantive turn is an episode of the conversation: routing it nowhere would lose it.
            if any(sentence.is_event for sentence in sentences):
                chosen["episodic"] = "events with a date, a plan or an action"
            else:
                chosen.setdefault("episodic", "what was said in the conversation")
            if any(_described_entities(sentence) for sentence in sentences):
                chosen.setdefault("semantic", "statements about named entities")
        memory_types = [memory_type for memory_type in MEMORY_TYPES if memory_type in chosen]
        reasons = dict.fromkeys(chosen[memory_type] for memory_type in memory_types)
        return RouteDecision(memory_types=memory_types, reason="; ".join(reasons) or "nothing worth remembering")

    def write_core(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[CoreDraft]:
        _read(memory_input, metering, Purpose.WRITE_CORE)
        lines: dict[Literal["persona", "human"], list[str]] = {}
        sources: dict[Literal["persona", "human"], list[str]] = {}
        for message, before in _in_turn(memory_input.messages):
            label: Literal["persona", "human"] = "persona" if message.role == "assistant" else "human"
            for sentence, _ in _first_person_facts(message, before):
                line = f"{_actor(message)}: {sentence.text}"
                if _already_stored(sentence.text, memory_input.related_memories) or line in lines.get(label, []):
                    continue
                lines.setdefault(label, []).append(line)
                if message.message_id not in sources.setdefault(label, []):
                    sources[label].append(message.message_id)
        return [
            CoreDraft(label=label, text="\n".join(block), source_message_ids=sources[label])
            for label, block in lines.items()
        ]

    def write_episodic(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[EpisodicDraft]:
        _read(memory_input, metering, Purpose.WRITE_EPISODIC)
        return [draft for message in memory_input.messages for draft in _episodic_drafts(message)]

    def write_semantic(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[SemanticDraft]:
        _read(memory_input, metering, Purpose.WRITE_SEMANTIC)
        drafts: dict[tuple[str, str, str], SemanticDraft] = {}
        for message, before in _in_turn(memory_input.messages):
            for draft in _semantic_drafts(message, before):
                # one sentence may state two facts of the speaker's ("… w/ my cat": a job and a pet)
                drafts.setdefault((draft.name.casefold(), draft.attribute, draft.summary), draft)
        return list(drafts.values())

    def write_procedural(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[ProceduralDraft]:
        _read(memory_input, metering, Purpose.WRITE_PROCEDURAL)
        return [draft for message in memory_input.messages for draft in _procedural_drafts(message)]
