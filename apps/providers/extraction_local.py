"""The ``local`` graph extractor: deterministic n-ary frames from spaCy's dependency parse.

Frames (paper §2.3, eq. 5) come from clause heads:

- a verb is a frame whose predicate is its lemma (with its particle: ``pick_up``); its
  subject is the ``agent`` (a passive subject the ``theme``, a passive ``by`` the agent), its
  direct object the ``theme``, its indirect object the ``recipient``, and each prepositional
  object takes the role of its preposition (:data:`_PREPOSITION_ROLES`): from → origin,
  to/into → destination, with → companion for persons else instrument, for → recipient for
  persons else purpose, in/at/on → location for places (occasion for events), about →
  topic; other prepositions are roles of their own name. Places, origins, destinations,
  topics, authors and (for people) companions and recipients attached to an object join its
  frame ("a studio in Denver", "a run with Melanie"). A verb without a subject shares
  the subject of the verb it depends on ("flew to Paris and visited the Louvre", "want to
  visit"); "a puppy named Max" adds Max as the ``name`` of the frame's argument;
- "X is (a) Y" is ``be(theme: X, attribute: Y)``, and "X's N is Y" / "my N is Y" is
  ``have(possessor: X, theme: N, name: Y)``; so is a possessed noun with a name beside it
  ("my sister Amelie", "my dog Max", "Caroline's painting "Embracing Identity"").

Named entities (PERSON, ORG, GPE, LOC, FAC, PRODUCT, EVENT, WORK_OF_ART, NORP, LANGUAGE,
LAW), short quoted phrases and noun chunks are the anchors; dates, times, money, counts,
quantities, percentages and ordinals are literals on the frame of the nearest clause head
above them, never anchors. "I", "me", "my" (and "we", "us", "our": the speaker is one of
them) resolve to the speaker of the line ("Caroline: ...") or else the record's actor.
Questions and negated clauses assert nothing and make no frame. A frame is kept only with at
least two distinct admissible anchors.

The frame's event time is the most specific date among its date literals, resolved against
the mention time (:mod:`apps.providers.dates`), else the record's event time. A frame is
``planned`` under will/shall/going to/plan to/want to or a date after the mention time,
``done`` in the past tense, else it takes the record's status.

Repair (only additions) looks again at the sentences that hold a missing item: possessives
without a name ("my 2 kids" → ``have(possessor: Nadia, theme: kids)`` with the count), a
quoted phrase as the ``title`` of its clause, a clause left with one anchor completed by the
speaker as ``source`` when it holds a missing value, and a shared image as
``share(agent: speaker, depicts: ...)`` over its caption's noun phrases.

Same-entity decisions are conservative: an entity takes a candidate's name only when their
keys κ are equal or its key is that of one of the candidate's aliases, and never when the two
names differ in a number, a date or a code.

Parses are cached per text, and ``extract_frames_many`` parses a batch in one pass; local
inference costs no tokens, so nothing is metered.
"""

from __future__ import annotations

import bisect
import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from apps.graph.admission import rejection_reason
from apps.graph.coverage import MAX_REPAIR_ITEMS
from apps.graph.frames import EntityType, ExtractedEntity, ExtractedFrame, Extraction, FrameStatus
from apps.graph.identity import frame_signature, normalize_label
from apps.graph.keys import anchor_key, may_denote_same
from apps.providers.dates import Tense, find_dates, most_specific
from apps.providers.dream_schemas import DreamQuestion, DreamVerdict, local_verdict
from apps.providers.extraction_schemas import (
    ExtractionInput,
    SameEntityDecision,
    SameEntityQuestion,
    consistent_extraction,
)
from apps.providers.interfaces import MeteringContext
from apps.providers.local_provider import (  # one loaded pipeline per process
    _FUTURE_AUX,
    _LANGUAGE,
    _PLAN_LEMMAS,
    SPACY_MODEL,
    clause_tense,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_ANCHOR_LABELS: dict[str, EntityType] = {
    "PERSON": "person",
    "NORP": "organization",
    "ORG": "organization",
    "GPE": "location",
    "LOC": "location",
    "FAC": "location",
    "PRODUCT": "object",
    "EVENT": "event",
    "WORK_OF_ART": "content",
    "LANGUAGE": "concept",
    "LAW": "content",
}
_LITERAL_LABELS: dict[str, str] = {
    "DATE": "date",
    "TIME": "time",
    "MONEY": "price",
    "CARDINAL": "count",
    "QUANTITY": "quantity",
    "PERCENT": "percent",
    "ORDINAL": "ordinal",
}
_DURATION = re.compile(
    r"^(?:about|around|almost|nearly|over|under|just|only|for|the\s+(?:past|last))?\s*"
    r"(?:\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+few|few|several"
    r"|a\s+couple\s+of|couple\s+of)\s+(?:minute|hour|day|week|month|year|decade)s?(?P<old>\s+old)?$",
    re.IGNORECASE,
)
_SPEAKER_PREFIX = re.compile(r"^[ \t]*(?P<speaker>[A-Z][\w'\-]*(?:[ ][A-Z][\w'\-]*){0,2}):[ \t]+(?=\S)")
_VISUAL = re.compile(
    r"\[\s*(?:(?:shared|sent|posted|attached|uploaded|showed)\s+)?(?:(?:an?|the|this)\s+)?"
    r"(?P<media>image|photo|photograph|picture|pic|screenshot|video|drawing|selfie)s?\b\s*(?:of\b|:)?\s*"
    r"(?P<caption>[^\]]*)\]",
    re.IGNORECASE,
)
# Lines the local writer adds to a record's details: provenance and resolved dates. They state
# nothing about the world (the row's provenance columns hold the same).
_METADATA_LINE = re.compile(r"^\s*(?:Said by .+ \(message [^)]*\)\.?|Resolved dates:.*)\s*$")
_QUOTED = re.compile(r"\"(?P<straight>[^\"\n]{1,80})\"|\u201c(?P<curly>[^\u201d\n]{1,80})\u201d")

# Interjections, fillers and the pieces of "gonna"/"wanna" that the tagger takes for nouns.
_FILLER = frozenset(
    """
    hey hi hello wow haha hahaha lol omg yay thanks thank ok okay good great cool awesome gon wan na ta gotta
    kinda sorta yeah yes no oh um uh hmm aww wanna gonna
    """.split()
)
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"})
_RELATIVE = frozenset({"that", "which", "who", "whom"})
_NAMING_LEMMAS = frozenset({"name", "call", "title"})
_EVALUATIVE = frozenset(
    """
    great good amazing awesome nice wonderful lovely fantastic incredible terrible awful bad cool fun special real
    whole entire same other own favorite favourite best new huge tough hard crazy perfect super beautiful
    little big such certain various several many few much more most some any every each
    """.split()
)

# Head nouns that say what kind of thing a noun phrase is (type of an anchor without NER).
_PERSON_NOUNS = frozenset(
    """
    friend family kid child son daughter sister brother sibling mom mother dad father parent wife husband
    partner boyfriend girlfriend grandma grandmother grandpa grandfather grandparent aunt uncle cousin niece
    nephew colleague coworker boss teacher student classmate neighbor neighbour roommate baby fiance fiancee
    mentor coach doctor nurse therapist counselor people guy girl boy man woman lady spouse buddy pal artist
    """.split()
)
_PLACE_NOUNS = frozenset(
    """
    park museum studio school beach cafe restaurant gym office library church hospital city town country home
    house store shop mall center centre lake mountain garden farm zoo airport hotel campus university college
    bar theater theatre stadium river forest island village street road kitchen room apartment shelter clinic
    hall camp trail coast ocean sea pool market bakery gallery venue neighborhood neighbourhood state province
    region place building station cabin resort spa arena temple mosque
    """.split()
)
_EVENT_NOUNS = frozenset(
    """
    party parade concert wedding festival conference trip race marathon game match ceremony meeting workshop
    show tournament competition vacation holiday birthday graduation funeral rally protest fair exhibition
    exhibit session interview picnic barbecue hike run walk tour camping retreat celebration reunion
    """.split()
)
_ORGANIZATION_NOUNS = frozenset("group team company organization organisation band charity foundation agency".split())
_CONTENT_NOUNS = frozenset(
    """
    book novel movie film song album painting poem article blog podcast story video photo picture drawing
    sculpture artwork post letter essay documentary series episode play musical
    """.split()
)
_METHOD_NOUNS = frozenset("technique method recipe approach strategy routine practice exercise therapy".split())
_NOUN_TYPES: tuple[tuple[frozenset[str], EntityType], ...] = (
    (_PERSON_NOUNS, "person"),
    (_PLACE_NOUNS, "location"),
    (_EVENT_NOUNS, "event"),
    (_ORGANIZATION_NOUNS, "organization"),
    (_CONTENT_NOUNS, "content"),
    (_METHOD_NOUNS, "method"),
)
_ABSTRACT_SUFFIXES = ("ness", "ity", "ism", "tion", "sion", "ment", "ance", "ence", "ship", "hood", "ing", "dom")

_PREPOSITION_ROLES: dict[str, str] = {
    "from": "origin",
    "to": "destination",
    "into": "destination",
    "onto": "destination",
    "toward": "destination",
    "towards": "destination",
    "about": "topic",
    "regarding": "topic",
    "concerning": "topic",
    "during": "occasion",
    "through": "path",
    "via": "path",
    "like": "comparison",
}
_PLACE_PREPOSITIONS = frozenset({"in", "at", "on", "near", "inside", "outside", "around", "by", "across", "within"})
# Prepositions under a noun argument that still qualify the whole frame ("a studio in Denver",
# "a trip to Paris"); "with" and "for" only for people ("a run with Melanie", "a gift for Mia").
_NOUN_PREPOSITIONS = frozenset({"in", "at", "from", "to", "about", "by", "near", "with", "for"})
_PERSON_ONLY_NOUN_PREPOSITIONS = frozenset({"with", "for"})
_CLAUSE_LINKS = frozenset({"xcomp", "conj", "advcl"})
# How the parser attaches a name to the common noun beside it ("my sister Amelie"); "dobj" and
# "npadvmod" are its frequent misparses of a quoted title after a noun.
_APPOSITION_DEPS = frozenset({"appos", "npadvmod", "dobj", "nmod"})
# Dependencies under which the parser sometimes attaches a title that reads like a clause.
_TITLE_DEPS = frozenset({"xcomp", "ccomp", "advcl", "acomp", "oprd", "dep"})
# What a caption calls the picture itself is not something it depicts.
_MEDIA_KEYS = frozenset({"image", "photo", "photograph", "picture", "pic", "screenshot", "video", "drawing", "selfie"})
# Children of a noun that are not part of its name: "my", "the", "'s", "2", "in Denver", ...
_NOT_A_NAME_DEPS = frozenset(
    {"poss", "det", "predet", "case", "prep", "relcl", "acl", "appos", "conj", "cc", "punct", "nummod"}
)
_MAX_DEPICTED = 6
_MAX_QUOTE_TOKENS = 10


class _Parses:
    """Parses by text, the most recent kept; a batch is parsed in one ``nlp.pipe`` call.

    Extraction, the audit's repair and a retry of the same record all read one parse, and a
    batch of records costs about half the CPU of parsing them one by one.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._docs: OrderedDict[str, Doc] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> Doc:
        with self._lock:
            doc = self._docs.get(text)
            if doc is not None:
                self._docs.move_to_end(text)
                return doc
        doc = _LANGUAGE.get()(text)
        self._keep(text, doc)
        return doc

    def warm(self, texts: Sequence[str]) -> None:
        with self._lock:
            todo = [text for text in dict.fromkeys(texts) if text not in self._docs]
        for text, doc in zip(todo, _LANGUAGE.get().pipe(todo, batch_size=_PIPE_BATCH), strict=True):
            self._keep(text, doc)

    def _keep(self, text: str, doc: Doc) -> None:
        with self._lock:
            self._docs[text] = doc
            self._docs.move_to_end(text)
            while len(self._docs) > self._size:
                self._docs.popitem(last=False)


_PIPE_BATCH = 32
_PARSES = _Parses(size=512)


@dataclass(frozen=True)
class _Mention:
    name: str
    type: EntityType
    key: str


@dataclass
class _Candidate:
    """A clause head with its arguments and literals, before the two-anchor rule."""

    head: Token
    predicate: str
    arms: list[tuple[str, _Mention]]
    planned: bool
    past: bool
    literals: list[Span] = field(default_factory=list)
    clause: bool = True  # False for a possessed noun: literals attach to clauses only

    def keys(self) -> set[str]:
        return {mention.key for _, mention in self.arms}


@dataclass(frozen=True)
class _Line:
    start: int
    speaker: str | None


@dataclass(frozen=True)
class _Caption:
    """A shared image's caption: its place in the parsed text, its medium and who shared it."""

    start: int
    end: int
    text: str
    media: str
    speaker: str | None


# --- text preparation ------------------------------------------------------------------------


def _without_labels(raw: str, actor: str | None, *, labels_are_speakers: bool) -> tuple[str, str | None]:
    """A line without its labels ("Caroline: ...") and who "I" is on it."""
    speaker = actor
    for _ in range(2):  # "Tomas: Tomas: I'm a nurse": a semantic record's name before its summary
        match = _SPEAKER_PREFIX.match(raw)
        if match is None:
            break
        key = anchor_key(match["speaker"])
        reason = rejection_reason(key)
        if reason == "generic":
            return "", actor  # an inventory line ("People: ..."), not a statement
        if labels_are_speakers and reason == "dialogue_role":
            speaker = actor if key in ("user", "human") else None
        elif labels_are_speakers and reason is None:
            speaker = match["speaker"]
        raw = raw[match.end() :]
    return raw, speaker


def _prepared(record: ExtractionInput) -> tuple[str, tuple[_Line, ...], tuple[_Caption, ...]]:
    """The text to parse and its lines, one for each line of the record's text.

    Labels are taken off: in an episodic record a label names the speaker, who "I" is on that
    line ("Caroline: ..."); a semantic record starts with the name of what it is about, and
    "I" stays its source. A line filed under a generic label ("People: ...", "Places: ...")
    and the writer's metadata lines are left out (blank), and an image marker is replaced by
    its caption.
    """
    lines: list[_Line] = []
    captions: list[_Caption] = []
    parts: list[str] = []
    offset = 0
    for text in record.text.splitlines():
        raw, speaker = _without_labels(text, record.actor, labels_are_speakers=record.kind == "episodic")
        if _METADATA_LINE.match(raw):
            raw = ""
        pieces: list[str] = []
        cursor = 0
        for marker in _VISUAL.finditer(raw):
            pieces.append(raw[cursor : marker.start()] + " (")
            caption = marker["caption"].strip()
            start = offset + sum(map(len, pieces))
            captions.append(_Caption(start, start + len(caption), caption, marker["media"].lower(), speaker))
            pieces.append(caption + ") ")
            cursor = marker.end()
        line = "".join(pieces) + raw[cursor:]
        lines.append(_Line(start=offset, speaker=speaker))
        parts.append(line)
        offset += len(line) + 1
    return "\n".join(parts), tuple(lines), tuple(captions)


# --- mentions --------------------------------------------------------------------------------


def _clean_text(tokens: Sequence[Token]) -> str:
    text = "".join(token.text_with_ws for token in tokens).strip()
    return text.strip(" \"'\u201c\u201d\u2018\u2019,;:.!?()[]")


def _noun_type(token: Token) -> EntityType:
    lemma = token.lemma_.lower()
    for nouns, kind in _NOUN_TYPES:
        if lemma in nouns:
            return kind
    if token.pos_ == "PROPN":
        return "other"
    return "concept" if lemma.endswith(_ABSTRACT_SUFFIXES) else "object"


class _Analysis:
    """One record's parse, its anchor mentions and its candidate frames."""

    def __init__(self, record: ExtractionInput) -> None:
        self.record = record
        text, self.lines, self.captions = _prepared(record)
        self.doc = _PARSES.get(text)
        self._line_starts = [line.start for line in self.lines]
        self.named: dict[int, Span] = {}
        self.literal: dict[int, Span] = {}
        for entity in self.doc.ents:
            target = self.named if entity.label_ in _ANCHOR_LABELS else self.literal
            if entity.label_ in _ANCHOR_LABELS or entity.label_ in _LITERAL_LABELS:
                for token in entity:
                    target[token.i] = entity
        for quote in self._quoted_spans():
            for token in quote:
                self.literal.pop(token.i, None)
                self.named[token.i] = quote
        self.mentions: list[_Mention] = []  # every anchor, once, in order of first mention
        self.mentioned_at: list[tuple[int, _Mention]] = []  # (character offset, anchor) of every mention
        self._types: dict[str, EntityType] = {}
        self._collect_mentions()
        self.candidates = [
            candidate for sentence in self.doc.sents for candidate in self._sentence_candidates(sentence)
        ]

    # -- lines and speakers

    def speaker_of(self, token: Token) -> str | None:
        index = bisect.bisect_right(self._line_starts, token.idx) - 1
        return self.lines[max(index, 0)].speaker

    def person(self, name: str) -> _Mention | None:
        key = anchor_key(name)
        if not key or rejection_reason(key) is not None:
            return None
        return _Mention(name=name, type="person", key=key)

    # -- spans

    def _quoted_spans(self) -> Iterator[Span]:
        for match in _QUOTED.finditer(self.doc.text):
            group = "straight" if match["straight"] is not None else "curly"
            span = self.doc.char_span(match.start(group), match.end(group), alignment_mode="expand")
            if span is not None and 0 < len(span) <= _MAX_QUOTE_TOKENS and not any(t.is_sent_start for t in span[1:]):
                yield span

    def _named_mention(self, span: Span) -> _Mention | None:
        tokens = [token for token in span if not (token.i == span.start and token.dep_ == "det")]
        name = _clean_text(tokens)
        key = anchor_key(name)
        if not key or rejection_reason(key) is not None:
            return None
        label = span.label_ or "WORK_OF_ART"  # a quoted phrase names a work, a title or a saying
        kind = self._types.get(key) or _ANCHOR_LABELS.get(label, "content")
        return _Mention(name=name, type=kind, key=key)

    def _noun_tokens(self, token: Token) -> list[Token]:
        """The words that name a noun phrase: its compounds and modifiers, not its determiners."""
        excluded: set[int] = set()
        for child in token.children:
            if (
                child.dep_ in _NOT_A_NAME_DEPS
                or child.i in self.literal
                or (child.dep_ == "amod" and child.lower_ in _EVALUATIVE)
            ):
                excluded.update(t.i for t in child.subtree)
        return [
            t
            for t in self.doc[token.left_edge.i : token.i + 1]
            if t.i not in excluded
            and t.pos_ not in ("DET", "PRON", "PUNCT", "PART", "INTJ")
            and t.i not in self.literal
            and t.lower_ not in _FILLER
        ]

    def _noun_mention(self, token: Token) -> _Mention | None:
        name = _clean_text(self._noun_tokens(token))
        key = anchor_key(name)
        if not key or rejection_reason(key) is not None:
            return None
        return _Mention(name=name, type=self._types.get(key) or _noun_type(token), key=key)

    def mention(self, token: Token) -> _Mention | None:
        """The anchor an argument token stands for, if any."""
        lower = token.lower_
        if lower in _FIRST_PERSON:
            speaker = self.speaker_of(token)
            return self.person(speaker) if speaker else None
        if lower in _FILLER:
            return None
        if token.pos_ == "PRON":
            if lower in _RELATIVE and token.head.dep_ == "relcl":
                return self.mention(token.head.head)
            return None
        named = self.named.get(token.i)
        if named is not None:
            return self._named_mention(named)
        if token.i in self.literal:
            return None
        if token.pos_ not in ("NOUN", "PROPN"):
            return None
        name_child = self._name_beside(token)
        if name_child is not None:
            return name_child
        return self._noun_mention(token)

    def _name_beside(self, token: Token) -> _Mention | None:
        """A named entity standing in apposition to a common noun: "my sister Amelie"."""
        for child in token.children:
            if child.dep_ in _APPOSITION_DEPS and child.i in self.named:
                return self._named_mention(self.named[child.i])
        return None

    def _collect_mentions(self) -> None:
        votes: dict[str, EntityType] = {}
        # One type per name: PERSON anywhere wins (the tagger also calls people ORG), else the first label.
        for span in {id(s): s for s in self.named.values()}.values():
            key = anchor_key(_clean_text(list(span)))
            label_type = _ANCHOR_LABELS.get(span.label_, "content")
            if label_type == "person" or key not in votes:
                votes[key] = label_type
        if self.record.actor:
            votes[anchor_key(self.record.actor)] = "person"
        for line in self.lines:
            if line.speaker:
                votes[anchor_key(line.speaker)] = "person"
        self._types = votes
        seen: set[str] = set()
        for token in self.doc:
            mention: _Mention | None = None
            if token.lower_ in _FIRST_PERSON or token.i in self.named:
                named = self.named.get(token.i)
                if named is not None and (token.i != named.root.i or self._is_modifier(named)):
                    continue
                mention = self.mention(token)
            elif token.pos_ in ("NOUN", "PROPN") and token.dep_ != "compound" and token.i not in self.literal:
                mention = self._noun_mention(token)
            if mention is None:
                continue
            self.mentioned_at.append((token.idx, mention))
            if mention.key not in seen:
                seen.add(mention.key)
                self.mentions.append(mention)

    def _is_modifier(self, span: Span) -> bool:
        """A name used as a modifier of a larger noun ("the Louvre museum") is part of that noun."""
        root = span.root
        return root.dep_ in ("compound", "amod") and root.head.i not in self.named and root.head.pos_ == "NOUN"

    # -- candidate frames

    def _sentence_candidates(self, sentence: Span) -> Iterator[_Candidate]:
        if sentence.text.rstrip().endswith("?"):
            return  # a question asserts nothing
        candidates: list[_Candidate] = []
        for token in sentence:
            candidate = self._clause(token)
            if candidate is not None:
                candidates.append(candidate)
            named = self._possessive_name(token)
            if named is not None:
                candidates.append(named)
        clauses = {candidate.head.i: candidate for candidate in candidates if candidate.clause}
        kept = {i: candidate for i, candidate in clauses.items() if _distinct(candidate) >= 2}
        for entity in {id(s): s for i, s in self.literal.items() if sentence.start <= i < sentence.end}.values():
            # The nearest clause above that will be a frame, else the nearest at all (repair may complete it).
            owner = _owner(entity.root, kept) or _owner(entity.root, clauses)
            if owner is not None:
                owner.literals.append(entity)
        yield from candidates

    def _clause(self, token: Token) -> _Candidate | None:
        if token.i in self.named or any(child.dep_ == "neg" for child in token.children):
            return None
        if token.pos_ == "VERB" and token.dep_ not in ("aux", "auxpass", "amod", "compound"):
            if token.dep_ == "acl" and token.lemma_.lower() in _NAMING_LEMMAS:
                return None  # "a puppy named Max": the name of an argument, not a clause
            return self._verb_clause(token)
        if token.pos_ == "AUX" and token.lemma_ == "be" and token.dep_ in ("ROOT", "conj", "ccomp", "advcl", "relcl"):
            return self._copula(token)
        return None

    def _subjects(self, verb: Token, depth: int = 0) -> list[tuple[str, Token]]:
        subjects = [
            ("theme" if child.dep_ == "nsubjpass" else "agent", child)
            for child in verb.children
            if child.dep_ in ("nsubj", "nsubjpass")
        ]
        if subjects or depth > 3:
            return subjects
        if verb.dep_ in _CLAUSE_LINKS and verb.head.i != verb.i:
            return self._subjects(verb.head, depth + 1)
        if verb.dep_ == "acl" and verb.head.pos_ in ("NOUN", "PROPN"):
            return [("theme" if verb.tag_ == "VBN" else "agent", verb.head)]
        return []

    def _expanded(self, role: str, token: Token) -> list[tuple[str, _Mention]]:
        arms: list[tuple[str, _Mention]] = []
        for argument in (token, *token.conjuncts):
            mention = self.mention(argument)
            if mention is not None:
                arms.append((role, mention))
            arms += self._naming(argument)
        return arms

    def _naming(self, token: Token) -> list[tuple[str, _Mention]]:
        """ "a puppy named Max" → the name Max joins the frame of "puppy"."""
        arms: list[tuple[str, _Mention]] = []
        for child in token.children:
            if child.dep_ == "acl" and child.lemma_.lower() in _NAMING_LEMMAS:
                for named in child.children:
                    if named.dep_ in ("oprd", "attr", "dobj", "xcomp", "npadvmod"):
                        mention = self.mention(named)
                        if mention is not None:
                            arms.append(("name", mention))
        return arms

    def _prepositional(self, preposition: Token, *, on_noun: bool) -> list[tuple[str, _Mention]]:
        word = preposition.lower_
        if on_noun and word not in _NOUN_PREPOSITIONS:
            return []
        arms: list[tuple[str, _Mention]] = []
        for child in preposition.children:
            if child.dep_ != "pobj":
                continue
            for argument in (child, *child.conjuncts):
                mention = self.mention(argument)
                if mention is None:
                    continue
                if (
                    on_noun
                    and word in _PERSON_ONLY_NOUN_PREPOSITIONS
                    and mention.type not in ("person", "organization")
                ):
                    continue
                role = _preposition_role(word, mention.type, passive_agent=preposition.dep_ == "agent")
                if on_noun and word == "by":
                    role = "creator" if mention.type in ("person", "organization") else "location"
                arms.append((role, mention))
                if not on_noun:  # one level down: "went for a run with Melanie"
                    for nested in argument.children:
                        if nested.dep_ == "prep":
                            arms += self._prepositional(nested, on_noun=True)
        return arms

    def _arguments(self, head: Token) -> list[tuple[str, _Mention]]:
        arms: list[tuple[str, _Mention]] = []
        objects: list[Token] = []
        has_object = any(child.dep_ == "dobj" for child in head.children)
        for child in head.children:
            dep = child.dep_
            if child.i in self.named and dep in _TITLE_DEPS and self.named[child.i].root.i == child.i:
                arms += self._expanded("theme", child)  # a title parsed as a clause: read "Becoming Nicole"
                objects.append(child)
            elif dep == "dobj" or (dep == "npadvmod" and not has_object and child.pos_ == "NOUN"):
                arms += self._expanded("theme", child)
                objects.append(child)
            elif dep in ("attr", "oprd") and child.pos_ in ("NOUN", "PROPN", "PRON"):
                arms += self._expanded("attribute", child)
                objects.append(child)
            elif dep == "dative" and child.pos_ != "ADP":
                arms += self._expanded("recipient", child)
            elif dep in ("prep", "agent") or (dep == "dative" and child.pos_ == "ADP"):
                arms += self._prepositional(child, on_noun=False)
        for argument in objects:
            for child in argument.children:
                if child.dep_ == "prep":
                    arms += self._prepositional(child, on_noun=True)
        return arms

    def _verb_clause(self, verb: Token) -> _Candidate:
        arms = [arm for role, subject in self._subjects(verb) for arm in self._expanded(role, subject)]
        arms += self._arguments(verb)
        particle = [child.lower_ for child in verb.children if child.dep_ == "prt"]
        return _Candidate(
            head=verb,
            predicate=normalize_label(" ".join([verb.lemma_.lower(), *particle])),
            arms=arms,
            planned=_is_planned(verb),
            past=verb.tag_ in ("VBD", "VBN") and not any(child.lower_ in _FUTURE_AUX for child in verb.children),
        )

    def _copula(self, verb: Token) -> _Candidate | None:
        subjects = self._subjects(verb)
        if not subjects:
            return None
        _, subject = subjects[0]
        complement = next((c for c in verb.children if c.dep_ in ("attr", "oprd") and c.pos_ != "PRON"), None)
        possessor = self._possessor(subject)
        if complement is not None and possessor is not None and subject.pos_ == "NOUN":
            theme, value = self._noun_mention(subject), self.mention(complement)
            if theme is not None and value is not None:
                role = "name" if complement.pos_ == "PROPN" or complement.i in self.named else "attribute"
                return _Candidate(
                    head=verb,
                    predicate="have",
                    arms=[("possessor", possessor), ("theme", theme), (role, value)],
                    planned=_is_planned(verb),
                    past=verb.tag_ == "VBD",
                )
        arms = self._expanded("theme", subject) + self._arguments(verb)
        return _Candidate(head=verb, predicate="be", arms=arms, planned=_is_planned(verb), past=verb.tag_ == "VBD")

    def _possessor(self, noun: Token) -> _Mention | None:
        owner = next((child for child in noun.children if child.dep_ == "poss"), None)
        return self.mention(owner) if owner is not None else None

    def _noun_and_name(self, token: Token) -> tuple[Token, Token] | None:
        """A common noun and the name beside it, seen from either: "my sister Amelie", "my dog Max"."""
        named = self.named.get(token.i)
        if named is not None:
            if token.i != named.root.i:
                return None
            noun = next(
                (c for c in token.children if c.dep_ == "compound" and c.pos_ == "NOUN" and c.i not in self.named),
                None,
            )
            return (noun, token) if noun is not None else None
        if token.pos_ != "NOUN":
            return None
        name = next((c for c in token.children if c.dep_ in _APPOSITION_DEPS and c.i in self.named), None)
        return (token, name) if name is not None else None

    def _possessive_name(self, token: Token) -> _Candidate | None:
        """ "my sister Amelie", "my dog Max": have(possessor, theme: the noun, name: the entity)."""
        pair = self._noun_and_name(token)
        if pair is None:
            return None
        noun, named_token = pair
        possessor = self._possessor(noun) or self._possessor(named_token)
        theme = self._noun_mention(noun)
        name = self._named_mention(self.named[named_token.i])
        if possessor is None or theme is None or name is None:
            return None
        return _Candidate(
            head=noun,
            predicate="have",
            arms=[("possessor", possessor), ("theme", theme), ("name", name)],
            planned=False,
            past=False,
            clause=False,
        )

    def bare_possessives(self, sentence: Span) -> Iterator[_Candidate]:
        """Possessed nouns without a name ("my 2 kids", "Caroline's dog"), for repair."""
        for token in sentence:
            if token.pos_ != "NOUN" or token.i in self.named:
                continue
            possessor, theme = self._possessor(token), self._noun_mention(token)
            if possessor is None or theme is None:
                continue
            literals = [self.literal[t.i] for t in token.subtree if t.i in self.literal]
            yield _Candidate(
                head=token,
                predicate="have",
                arms=[("possessor", possessor), ("theme", theme)],
                planned=False,
                past=False,
                literals=list({id(s): s for s in literals}.values()),
                clause=False,
            )


def _owner(token: Token, heads: dict[int, _Candidate]) -> _Candidate | None:
    """The candidate of the nearest clause head above a token."""
    current = token
    while True:
        candidate = heads.get(current.i)
        if candidate is not None:
            return candidate
        if current.head.i == current.i:
            return None
        current = current.head


def _preposition_role(word: str, kind: EntityType, *, passive_agent: bool) -> str:
    if passive_agent:
        return "agent"
    if word == "with":  # an unrecognized proper name after "with" is most often a person
        return "companion" if kind in ("person", "organization", "other") else "instrument"
    if word == "for":
        return "recipient" if kind in ("person", "organization") else "purpose"
    if word in _PLACE_PREPOSITIONS:
        if kind in ("location", "organization") or (kind == "other" and word in ("in", "at")):
            return "location"  # an unrecognized proper name after in/at is most often a place
        if kind == "event":
            return "occasion"
        if word == "on":
            return "topic"
    return _PREPOSITION_ROLES.get(word, word)


def _is_planned(verb: Token) -> bool:
    current = verb
    for _ in range(4):
        if any(child.dep_ == "aux" and child.lower_ in _FUTURE_AUX for child in current.children):
            return True
        if current.dep_ not in _CLAUSE_LINKS:
            return False
        parent = current.head
        if current.dep_ == "xcomp" and (
            parent.lemma_.lower() in _PLAN_LEMMAS or (parent.lemma_ == "go" and parent.tag_ == "VBG")
        ):
            return True
        current = parent
    return False


# --- from candidates to frames ---------------------------------------------------------------


def _literal_value(entity: Span) -> tuple[str, str]:
    text = entity.doc.text
    start = entity.start_char
    if entity.label_ == "MONEY" and start > 0 and text[start - 1] in "$\u20ac\u00a3\u00a5":
        start -= 1  # spaCy leaves the currency sign out of "$45"
    value = " ".join(text[start : entity.end_char].split())
    name = _LITERAL_LABELS[entity.label_]
    if name == "date":
        duration = _DURATION.match(value)
        if duration:
            name = "age" if duration["old"] else "duration"
    elif name == "count" and entity.root.dep_ == "nummod" and entity.root.head.pos_ == "NOUN":
        value = f"{value} {entity.root.head.text}"  # "2 kids", not "2"
    return name, value


def _date_phrase(entity: Span) -> str:
    """The date with its preposition, which some forms need ("in June", "in 2022")."""
    head = entity.root.head
    return f"{head.text} {entity.text}" if head.pos_ == "ADP" and head.i < entity.start else entity.text


def _literals(entities: Sequence[Span]) -> dict[str, str]:
    literals: dict[str, str] = {}
    for entity in entities:
        name, value = _literal_value(entity)
        if name in literals:
            if value not in literals[name].split("; "):
                literals[name] += f"; {value}"
        else:
            literals[name] = value
    return literals


def _frame(analysis: _Analysis, candidate: _Candidate, extra: Sequence[tuple[str, _Mention]] = ()) -> ExtractedFrame:
    record = analysis.record
    arms = list(dict.fromkeys((role, mention.name) for role, mention in [*candidate.arms, *extra]))
    literals = _literals(candidate.literals)
    planned = candidate.planned
    event_time = record.event_time
    dated = [entity for entity in candidate.literals if _literal_value(entity)[0] == "date"]
    if dated and record.mention_time is not None:
        mention_day = record.mention_time.date()
        tense = Tense.FUTURE if planned else Tense.PAST if candidate.past else clause_tense(candidate.head)
        resolved = [
            found
            for entity in dated
            for found in find_dates(_date_phrase(entity), mention_time=mention_day, tense=tense)
        ]
        best = most_specific(resolved)
        if best is not None:
            event_time = best.iso
            planned = planned or (best.start > mention_day and not candidate.past)
    status: FrameStatus = "planned" if planned else "done" if candidate.past else (record.status or "done")
    return ExtractedFrame(
        predicate=candidate.predicate,
        roles=arms,
        literals=literals,
        event_time=event_time,
        status=status,
    )


def _distinct(candidate: _Candidate, extra: Sequence[tuple[str, _Mention]] = ()) -> int:
    return len(candidate.keys() | {mention.key for _, mention in extra})


def _primary(analysis: _Analysis) -> list[tuple[_Candidate, ExtractedFrame]]:
    return [(c, _frame(analysis, c)) for c in analysis.candidates if _distinct(c) >= 2]


def _entities(mentions: Sequence[_Mention]) -> list[ExtractedEntity]:
    return [ExtractedEntity(name=mention.name, type=mention.type) for mention in mentions]


@functools.lru_cache(maxsize=256)
def _analysis(record: ExtractionInput) -> _Analysis:
    return _Analysis(record)


# --- repair ----------------------------------------------------------------------------------


def _holds(text: str, items: Sequence[str]) -> list[str]:
    folded = text.casefold()
    return [item for item in items if item.casefold() in folded]


def _overlaps(literals: Sequence[Span], items: Sequence[str]) -> bool:
    """Whether a literal is one of the missing items ("$45" is missing, spaCy's entity is "45")."""
    values = [_literal_value(entity)[1].casefold() for entity in literals]
    return any(item.casefold() in value or value in item.casefold() for value in values for item in items)


def _repair_candidates(
    analysis: _Analysis, items: Sequence[str]
) -> Iterator[tuple[_Candidate, list[tuple[str, _Mention]]]]:
    by_sentence: dict[int, list[_Candidate]] = {}
    for candidate in analysis.candidates:
        by_sentence.setdefault(candidate.head.sent.start, []).append(candidate)
    for sentence in analysis.doc.sents:
        wanted = _holds(sentence.text, items)
        if not wanted:
            continue
        yield from ((candidate, []) for candidate in analysis.bare_possessives(sentence))
        for candidate in by_sentence.get(sentence.start, []):
            extra = _quote_arms(analysis, candidate, sentence, wanted)
            if _distinct(candidate, extra) < 2 and _overlaps(candidate.literals, wanted):
                speaker = analysis.speaker_of(candidate.head)
                source = analysis.person(speaker) if speaker else None
                if source is not None:
                    extra.append(("source", source))
            if extra:
                yield candidate, extra


def _quote_arms(
    analysis: _Analysis, candidate: _Candidate, sentence: Span, wanted: Sequence[str]
) -> list[tuple[str, _Mention]]:
    arms: list[tuple[str, _Mention]] = []
    heads = {c.head.i: c for c in analysis.candidates if c.head.sent.start == sentence.start and c.clause}
    quoted = {
        match.start(group): match[group]
        for match in _QUOTED.finditer(sentence.text)
        for group in ("straight", "curly")
        if match[group] is not None
    }
    for item in wanted:
        start = next((at for at, quote in quoted.items() if quote.strip().casefold() == item.casefold()), -1)
        span = sentence.char_span(start, start + len(item), alignment_mode="expand") if start >= 0 else None
        if span is None or _owner(span.root, heads) is not candidate:
            continue
        key = anchor_key(item)
        if key and rejection_reason(key) is None and key not in candidate.keys():
            arms.append(("title", _Mention(name=item, type="content", key=key)))
    return arms


def _depictions(analysis: _Analysis, items: Sequence[str]) -> Iterator[tuple[ExtractedFrame, list[_Mention]]]:
    """share(agent: who shared it, depicts: what its caption names) for each caption with a missing item."""
    for caption in analysis.captions:
        if not caption.text or not _holds(caption.text, items):
            continue
        agent = analysis.person(caption.speaker) if caption.speaker else None
        excluded = {*_MEDIA_KEYS, agent.key if agent else ""}
        inside = [mention for at, mention in analysis.mentioned_at if caption.start <= at < caption.end]
        depicted = list({m.key: m for m in inside if m.key not in excluded}.values())[:_MAX_DEPICTED]
        arms = ([("agent", agent.name)] if agent else []) + [("depicts", m.name) for m in depicted]
        frame = ExtractedFrame(
            predicate="share",
            roles=arms,
            literals={"media": caption.media},
            event_time=analysis.record.event_time,
            status="done",
        )
        yield frame, ([agent] if agent else []) + depicted


# --- the provider ----------------------------------------------------------------------------


class LocalGraphLLM:
    model = f"local-frames+{SPACY_MODEL}"

    def extract_frames_many(self, records: Sequence[ExtractionInput], *, metering: MeteringContext) -> list[Extraction]:
        """``extract_frames`` of each record, in order, parsing the batch together (faster)."""
        extractions: list[Extraction] = []
        for start in range(0, len(records), _PIPE_BATCH):
            batch = records[start : start + _PIPE_BATCH]
            _PARSES.warm([_prepared(record)[0] for record in batch])
            extractions += [self.extract_frames(record, metering=metering) for record in batch]
        return extractions

    def extract_frames(self, record: ExtractionInput, *, metering: MeteringContext) -> Extraction:
        analysis = _analysis(record)
        primary = _primary(analysis)
        arms = [mention for candidate, _ in primary for _, mention in candidate.arms]
        return consistent_extraction(_entities([*analysis.mentions, *arms]), [frame for _, frame in primary])

    def decide_same_entity(
        self, record: ExtractionInput, questions: Sequence[SameEntityQuestion], *, metering: MeteringContext
    ) -> list[SameEntityDecision]:
        decisions: list[SameEntityDecision] = []
        for question in questions:
            key = anchor_key(question.name)
            same_as = next(
                (
                    candidate.name
                    for candidate in question.candidates
                    if key
                    and may_denote_same(question.name, candidate.name)
                    and (key == anchor_key(candidate.name) or key in {anchor_key(alias) for alias in candidate.aliases})
                ),
                None,
            )
            decisions.append(SameEntityDecision(name=question.name, same_as=same_as))
        return decisions

    def dream_decide(self, question: DreamQuestion, *, metering: MeteringContext) -> DreamVerdict:
        return local_verdict(question)

    def repair_frames(
        self,
        record: ExtractionInput,
        *,
        frames: Sequence[ExtractedFrame],
        missing: Sequence[str],
        metering: MeteringContext,
    ) -> Extraction:
        items = [item.strip() for item in missing if item.strip()][:MAX_REPAIR_ITEMS]
        if not items:
            return Extraction(entities=[], frames=[])
        analysis = _analysis(record)
        known = {frame_signature(frame) for frame in frames} | {
            frame_signature(frame) for _, frame in _primary(analysis)
        }
        added: list[ExtractedFrame] = []
        mentions: list[_Mention] = []
        for candidate, extra in _repair_candidates(analysis, items):
            if _distinct(candidate, extra) < 2:
                continue
            frame = _frame(analysis, candidate, extra)
            if frame_signature(frame) not in known:
                known.add(frame_signature(frame))
                added.append(frame)
                mentions += [mention for _, mention in [*candidate.arms, *extra]]
        for frame, depicted in _depictions(analysis, items):
            if frame_signature(frame) not in known and len({m.key for m in depicted}) >= 2:
                known.add(frame_signature(frame))
                added.append(frame)
                mentions += depicted
        return consistent_extraction(_entities(list({m.key: m for m in mentions}.values())), added)
