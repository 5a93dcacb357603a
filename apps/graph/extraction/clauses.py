"""Clauses to frames: the anchor mentions, candidate frames and frames of one parsed record.

The rules (which clause heads make frames, which roles their arguments take, which entities
are anchors and which literals) are described in :mod:`apps.graph.extraction`.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from apps.graph.admission import rejection_reason
from apps.graph.extraction.parsing import QUOTED, prepared
from apps.graph.frames import EntityType, ExtractedEntity, ExtractedFrame, FrameStatus
from apps.graph.identity import normalize_label
from apps.graph.keys import anchor_key
from apps.language.dates import Tense, find_dates, most_specific
from apps.language.facts import elided_speaker, listed_with
from apps.language.lexicon import RELATION_FAMILIES
from apps.language.pipeline import PARSES, entity_words
from apps.language.tense import FUTURE_AUX, PLAN_LEMMAS, clause_tense
from apps.providers.extraction_schemas import (
    ExtractionInput,
)

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

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
# Verbs whose object a gerund after it says how it was spent ("had a great night playing board
# games", "spent the day hiking"): the gerund's agent is the verb's subject, not the object.
_SPENDING_LEMMAS = frozenset({"have", "spend"})
# How the parser attaches a name to the common noun beside it ("my sister Amelie"); "dobj" and
# "npadvmod" are its frequent misparses of a quoted title after a noun.
_APPOSITION_DEPS = frozenset({"appos", "npadvmod", "dobj", "nmod"})
# Dependencies under which the parser sometimes attaches a title that reads like a clause.
_TITLE_DEPS = frozenset({"xcomp", "ccomp", "advcl", "acomp", "oprd", "dep"})
# Children of a noun that are not part of its name: "my", "the", "'s", "2", "in Denver", ...
_NOT_A_NAME_DEPS = frozenset(
    {"poss", "det", "predet", "case", "prep", "relcl", "acl", "appos", "conj", "cc", "punct", "nummod"}
)
_MAX_QUOTE_TOKENS = 10


@dataclass(frozen=True)
class Mention:
    name: str
    type: EntityType
    key: str


@dataclass
class Candidate:
    """A clause head with its arguments and literals, before the two-anchor rule."""

    head: Token
    predicate: str
    arms: list[tuple[str, Mention]]
    planned: bool
    past: bool
    literals: list[Span] = field(default_factory=list)
    clause: bool = True  # False for a possessed noun: literals attach to clauses only

    def keys(self) -> set[str]:
        return {mention.key for _, mention in self.arms}


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


class Analysis:
    """One record's parse, its anchor mentions and its candidate frames."""

    def __init__(self, record: ExtractionInput) -> None:
        self.record = record
        text, self.lines, self.captions = prepared(record)
        self.doc = PARSES.get(text)
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
        self.mentions: list[Mention] = []  # every anchor, once, in order of first mention
        self.mentioned_at: list[tuple[int, Mention]] = []  # (character offset, anchor) of every mention
        self._types: dict[str, EntityType] = {}
        self._collect_mentions()
        self.candidates = [
            candidate for sentence in self.doc.sents for candidate in self._sentence_candidates(sentence)
        ]

    # -- lines and speakers

    def speaker_of(self, token: Token) -> str | None:
        index = bisect.bisect_right(self._line_starts, token.idx) - 1
        return self.lines[max(index, 0)].speaker

    def person(self, name: str) -> Mention | None:
        key = anchor_key(name)
        if not key or rejection_reason(key) is not None:
            return None
        return Mention(name=name, type="person", key=key)

    # -- spans

    def _quoted_spans(self) -> Iterator[Span]:
        for match in QUOTED.finditer(self.doc.text):
            group = "straight" if match["straight"] is not None else "curly"
            span = self.doc.char_span(match.start(group), match.end(group), alignment_mode="expand")
            if span is not None and 0 < len(span) <= _MAX_QUOTE_TOKENS and not any(t.is_sent_start for t in span[1:]):
                yield span

    def _named_mention(self, span: Span) -> Mention | None:
        tokens = [token for token in span if not (token.i == span.start and token.dep_ == "det")]
        name = _clean_text(tokens)
        key = anchor_key(name)
        if not key or rejection_reason(key) is not None:
            return None
        label = span.label_ or "WORK_OF_ART"  # a quoted phrase names a work, a title or a saying
        kind = self._types.get(key) or _ANCHOR_LABELS.get(label, "content")
        return Mention(name=name, type=kind, key=key)

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

    def _noun_mention(self, token: Token) -> Mention | None:
        name = _clean_text(self._noun_tokens(token))
        key = anchor_key(name)
        if not key or rejection_reason(key) is not None:
            return None
        return Mention(name=name, type=self._types.get(key) or _noun_type(token), key=key)

    def mention(self, token: Token) -> Mention | None:
        """The anchor an argument token stands for, if any."""
        lower = token.lower_
        whole = _partitive_whole(token)
        if whole is not None:
            return self.mention(whole)  # "one of the nearby lakes": the lakes
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

    def _name_beside(self, token: Token) -> Mention | None:
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
            mention: Mention | None = None
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

    def _sentence_candidates(self, sentence: Span) -> Iterator[Candidate]:
        if sentence.text.rstrip().endswith("?"):
            return  # a question asserts nothing
        candidates: list[Candidate] = []
        for token in sentence:
            candidate = self._clause(token)
            if candidate is not None:
                candidates.append(candidate)
            named = self._possessive_name(token)
            if named is not None:
                candidates.append(named)
        clauses = {candidate.head.i: candidate for candidate in candidates if candidate.clause}
        kept = {i: candidate for i, candidate in clauses.items() if distinct_anchors(candidate) >= 2}
        for entity in {id(s): s for i, s in self.literal.items() if sentence.start <= i < sentence.end}.values():
            if entity.root.lower_ == "one" and _partitive_whole(entity.root) is not None:
                continue  # "one of the lakes" counts nothing
            # The nearest clause above that will be a frame, else the nearest at all (repair may complete it).
            owner = clause_owner(entity.root, kept) or clause_owner(entity.root, clauses)
            if owner is not None:
                owner.literals.append(entity)
        yield from candidates

    def _clause(self, token: Token) -> Candidate | None:
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
        # "My girlfriend and I went fishing": the parser may read "went" as an auxiliary of
        # "fishing" and hang the subject on it.
        heads = [verb, *(child for child in verb.children if child.dep_ in ("aux", "auxpass"))]
        subjects = [
            ("theme" if child.dep_ == "nsubjpass" else "agent", child)
            for head in heads
            for child in head.children
            if child.dep_ in ("nsubj", "nsubjpass")
        ]
        if subjects or depth > 3:
            return subjects
        if verb.dep_ in _CLAUSE_LINKS and verb.head.i != verb.i:
            return self._subjects(verb.head, depth + 1)
        if verb.dep_ == "acl" and verb.head.pos_ in ("NOUN", "PROPN"):
            spent = verb.head.head
            if verb.tag_ == "VBG" and verb.head.dep_ == "dobj" and spent.lemma_.lower() in _SPENDING_LEMMAS:
                return self._subjects(spent, depth + 1)  # "we had a great night playing board games"
            return [("theme" if verb.tag_ == "VBN" else "agent", verb.head)]
        return []

    def _expanded(self, role: str, token: Token) -> list[tuple[str, Mention]]:
        arms: list[tuple[str, Mention]] = []
        for argument in (token, *listed_with(token)):
            mention = self.mention(argument)
            if mention is not None:
                arms.append((role, mention))
            arms += self._naming(argument)
        return arms

    def _naming(self, token: Token) -> list[tuple[str, Mention]]:
        """ "a puppy named Max" → the name Max joins the frame of "puppy"."""
        arms: list[tuple[str, Mention]] = []
        for child in token.children:
            if child.dep_ == "acl" and child.lemma_.lower() in _NAMING_LEMMAS:
                for named in child.children:
                    if named.dep_ in ("oprd", "attr", "dobj", "xcomp", "npadvmod"):
                        mention = self.mention(named)
                        if mention is not None:
                            arms.append(("name", mention))
        return arms

    def _prepositional(self, preposition: Token, *, on_noun: bool) -> list[tuple[str, Mention]]:
        word = preposition.lower_
        if on_noun and word not in _NOUN_PREPOSITIONS:
            return []
        arms: list[tuple[str, Mention]] = []
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

    def _arguments(self, head: Token) -> list[tuple[str, Mention]]:
        arms: list[tuple[str, Mention]] = []
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

    def _verb_clause(self, verb: Token) -> Candidate:
        subjects = self._subjects(verb)
        arms = [arm for role, subject in subjects for arm in self._expanded(role, subject)]
        if not subjects and self._opens_without_subject(verb):
            # "Started a dance class today", "Lost my job as a banker yesterday": chat drops the
            # "I" (ADR 0155)
            speaker = self.speaker_of(verb)
            mention = self.person(speaker) if speaker else None
            arms += [("agent", mention)] if mention is not None else []
        arms += self._arguments(verb)
        arms += self._kin_of_speaker([subject for _, subject in subjects], arms)
        particle = [child.lower_ for child in verb.children if child.dep_ == "prt"]
        return Candidate(
            head=verb,
            predicate=normalize_label(" ".join([verb.lemma_.lower(), *particle])),
            arms=arms,
            planned=_is_planned(verb),
            past=verb.tag_ in ("VBD", "VBN") and not any(child.lower_ in FUTURE_AUX for child in verb.children),
        )

    def _copula(self, verb: Token) -> Candidate | None:
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
                return Candidate(
                    head=verb,
                    predicate="have",
                    arms=[("possessor", possessor), ("theme", theme), (role, value)],
                    planned=_is_planned(verb),
                    past=verb.tag_ == "VBD",
                )
        arms = self._expanded("theme", subject) + self._arguments(verb)
        return Candidate(head=verb, predicate="be", arms=arms, planned=_is_planned(verb), past=verb.tag_ == "VBD")

    def _opens_without_subject(self, verb: Token) -> bool:
        """``verb``, or the verb it continues ("Went hiking with Gina": hiking), opens the
        speaker's sentence without a subject (ADR 0155)."""
        for _ in range(4):
            if elided_speaker(verb):
                return True
            if verb.dep_ not in _CLAUSE_LINKS or verb.head is verb:
                return False
            verb = verb.head
        return False

    def _kin_of_speaker(self, subjects: list[Token], arms: list[tuple[str, Mention]]) -> list[tuple[str, Mention]]:
        """ "The 2 younger kids love nature", "my son loves dinosaurs" said by Melanie: the kin
        are hers, and the frame is hers too (ADR 0154), as "My kids and I …" is by its agent."""
        kin = [
            token
            for subject in subjects
            for token in (subject, *subject.conjuncts)
            if token.pos_ == "NOUN"
            and token.lemma_.lower() in _KIN_WORDS
            and all(child.lower_ in _SPEAKERS_DETERMINERS for child in token.children if child.dep_ in ("poss", "det"))
        ]
        speaker = self.speaker_of(kin[0]) if kin else None
        mention = self.person(speaker) if speaker else None
        if mention is None or any(arm.key == mention.key for _, arm in arms):
            return []
        return [("possessor", mention)]

    def _possessor(self, noun: Token) -> Mention | None:
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

    def _possessive_name(self, token: Token) -> Candidate | None:
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
        return Candidate(
            head=noun,
            predicate="have",
            arms=[("possessor", possessor), ("theme", theme), ("name", name)],
            planned=False,
            past=False,
            clause=False,
        )

    def bare_possessives(self, sentence: Span) -> Iterator[Candidate]:
        """Possessed nouns without a name ("my 2 kids", "Caroline's dog"), for repair."""
        for token in sentence:
            if token.pos_ != "NOUN" or token.i in self.named:
                continue
            possessor, theme = self._possessor(token), self._noun_mention(token)
            if possessor is None or theme is None:
                continue
            literals = [self.literal[t.i] for t in token.subtree if t.i in self.literal]
            yield Candidate(
                head=token,
                predicate="have",
                arms=[("possessor", possessor), ("theme", theme)],
                planned=False,
                past=False,
                literals=list({id(s): s for s in literals}.values()),
                clause=False,
            )


def _partitive_whole(token: Token) -> Token | None:
    """The whole a number or quantity word takes a part of: "one of the lakes", "some of my friends"."""
    if token.pos_ not in ("NUM", "PRON", "DET", "ADJ") or token.lower_ in _FIRST_PERSON:
        return None
    of = next((child for child in token.children if child.dep_ == "prep" and child.lower_ == "of"), None)
    whole = next((child for child in of.children if child.dep_ == "pobj"), None) if of is not None else None
    return whole if whole is not None and whole.lemma_.lower() != "one" else None


def clause_owner(token: Token, heads: dict[int, Candidate]) -> Candidate | None:
    """The candidate of the nearest clause head above a token."""
    current = token
    while True:
        candidate = heads.get(current.i)
        if candidate is not None:
            return candidate
        if current.head.i == current.i:
            return None
        current = current.head


# Words for one's kin (the family relation's nouns), and the determiners by which the speaker's
# are told ("my kids", "our son", "the kids": said by a parent, theirs).
_KIN_WORDS = frozenset(RELATION_FAMILIES["family"]) - {"family", "marry"}
_SPEAKERS_DETERMINERS = frozenset({"my", "our", "the"})


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
        if any(child.dep_ == "aux" and child.lower_ in FUTURE_AUX for child in current.children):
            return True
        if current.dep_ not in _CLAUSE_LINKS:
            return False
        parent = current.head
        if current.dep_ == "xcomp" and (
            parent.lemma_.lower() in PLAN_LEMMAS or (parent.lemma_ == "go" and parent.tag_ == "VBG")
        ):
            return True
        current = parent
    return False


# --- from candidates to frames ---------------------------------------------------------------


def literal_value(entity: Span) -> tuple[str, str]:
    value = entity_words(entity)
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
        name, value = literal_value(entity)
        if name in literals:
            if value not in literals[name].split("; "):
                literals[name] += f"; {value}"
        else:
            literals[name] = value
    return literals


def candidate_frame(
    analysis: Analysis, candidate: Candidate, extra: Sequence[tuple[str, Mention]] = ()
) -> ExtractedFrame:
    record = analysis.record
    arms = list(dict.fromkeys((role, mention.name) for role, mention in [*candidate.arms, *extra]))
    literals = _literals(candidate.literals)
    planned = candidate.planned
    event_time = record.event_time
    dated = [entity for entity in candidate.literals if literal_value(entity)[0] == "date"]
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


def distinct_anchors(candidate: Candidate, extra: Sequence[tuple[str, Mention]] = ()) -> int:
    return len(candidate.keys() | {mention.key for _, mention in extra})


def primary_frames(analysis: Analysis) -> list[tuple[Candidate, ExtractedFrame]]:
    return [(c, candidate_frame(analysis, c)) for c in analysis.candidates if distinct_anchors(c) >= 2]


def entities_of(mentions: Sequence[Mention]) -> list[ExtractedEntity]:
    return [ExtractedEntity(name=mention.name, type=mention.type) for mention in mentions]


@functools.lru_cache(maxsize=256)
def analysis_of(record: ExtractionInput) -> Analysis:
    return Analysis(record)
