"""Which fact key a question asks for, read off a spaCy parse. Pure (spaCy is only a type
here).

"Where does Nadia live now?" asks for (Nadia, home city) or (Nadia, home), whichever is newer;
"What was her job before?" asks for the value a newer one superseded. Retrieval and the local
answerer read the key here (``asked_key``, ``asked_prior``, ``asked_anchor``) and compare it
with the keys the statement reader (``apps.language.facts``) gave the stored facts; the
memory writer reads a fragment said in answer to a question ("14 September.") as a statement
of the attribute asked (``with_asked_attribute``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from apps.language.facts import (
    ATTRIBUTE_FAMILIES,
    COMMUTE_PREDICATES,
    EVENT_VERBS,
    FAMILY_NOUNS,
    HAVING_PREDICATES,
    JOB_ITSELF,
    PERSON_ROLES,
    SCHEDULE_WORDS,
    SUBJECT_DEPS,
    WORKPLACES,
    asks_a_relatives_name,
    family_named,
    family_of_predicate,
    family_of_word,
    gerund_of,
    is_qualified_role,
    normalize_attribute,
    owned_name,
    read_fact,
    relative_name,
    reports_to,
    scheduled_event,
    speaker_fact,
    token_lemma,
)
from apps.language.pipeline import is_unknown_name

if TYPE_CHECKING:
    from spacy.tokens import Span, Token


@dataclass(frozen=True)
class AskedKey:
    """The fact keys a question asks for: groups of attributes in the order the question names
    them (one group per word: "live" asks for the home or the home city, whichever is newer; an
    attribute ending in ":" is a prefix, for families of several values: "pet:"), and the names
    of whom it asks about. ``every``: the question asks for every value of a family of several
    by a plural of one of its kinds ("How many dogs does Andrew have?", "the names of his dogs"),
    not about the values as its subject ("How do her dogs react to snow?")."""

    groups: tuple[tuple[str, ...], ...]
    names: tuple[str, ...]
    every: bool = False

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(attribute for group in self.groups for attribute in group)


# Question words that name an attribute the families cue otherwise ("what city" → home city).
_SUPPORTING = frozenset({"support", "cheer", "follow", "root"})
_ASKED_WORDS: Mapping[str, str] = MappingProxyType(
    {"city": "home city", "town": "home city", "wake": "wake-up time", "work": "job", "living": "job"}
)


# Nouns for what one does, asked as one's pastimes ("hobby" and "pastime" name the family).
_PASTIME_NOUNS = frozenset({"activity"})

# Nouns that only say what kind of answer is wanted: "the name of her pet" asks for the pet.
_KIND_NOUNS = frozenset({"name", "kind", "type", "sort"})


# Adjectives that "how" turns into a question about a measure, not about the thing itself.
_HOW_VALUES = frozenset({"much", "many", "often"})


def _on_another_noun(token: Token) -> bool:
    """Within a prepositional phrase on a noun: "the deposit for her flat", "the inventory of
    her flat done" (however deep the phrase's own words)."""
    for word in (token, *token.ancestors):
        head = word.head
        if word.dep_ in ("pobj", "pcomp") and head.dep_ == "prep" and head.head.pos_ in ("NOUN", "PROPN"):
            return token_lemma(head.head) not in _KIND_NOUNS
    return False


def _beside_asked_noun(token: Token) -> bool:
    """The object of a preposition on the verb when the verb's subject or object is a common
    noun: that noun is what is asked ("Which storage unit comes with her flat?")."""
    head = token.head
    if token.dep_ != "pobj" or head.dep_ != "prep" or head.head.pos_ not in ("VERB", "AUX"):
        return False
    return any(
        child.dep_ in ("nsubj", "nsubjpass", "dobj") and child.pos_ == "NOUN" and token_lemma(child) not in _KIND_NOUNS
        for child in head.head.children
    )


def _opens_clause(token: Token) -> bool:
    return token.dep_ == "mark" or (token.dep_ == "advmod" and token.lower_ in ("when", "while", "once"))


def _in_clause_aside(token: Token) -> bool:
    """Within a subordinate clause ("if she wants to leave her flat", "when she started at
    Loomwork"): it sets the scene of the question, not what it asks."""
    return any(
        word.dep_ == "advcl" and any(_opens_clause(child) for child in word.children)
        for word in (token, *token.ancestors)
    )


def _is_setting(token: Token) -> bool:
    """ "at work", "at home", "at school" on a verb: where something is done, not what is asked
    ("Who does he report to at work?")."""
    return (
        token.dep_ == "pobj"
        and token.head.lower_ == "at"
        and token.head.head.pos_ in ("VERB", "AUX")
        and (token.lower_ in ("work", "home", "school") and not list(token.children))
    )


def _modifies_another(token: Token) -> bool:
    """A word that only qualifies what is asked: a compound ("a home insurance certificate"),
    a word of a prepositional phrase on another noun ("the deposit for her flat") or on a verb
    whose subject or object is the asked noun, or of a subordinate clause."""
    return (
        token.dep_ == "compound"
        or _on_another_noun(token)
        or _beside_asked_noun(token)
        or _in_clause_aside(token)
        or _is_setting(token)
    )


def _asks_a_measure(span: Span) -> bool:
    """ "How big a dog …", "How long has she …": the question asks a measure of something, not
    for a fact's value ("how much rent" and "how often" still do, and so does "How long is his
    commute?": what is measured is the fact itself)."""
    doc = span.doc
    return any(
        token.lower_ == "how"
        and token.i + 2 < len(doc)
        and doc[token.i + 1].pos_ in ("ADJ", "ADV")
        and doc[token.i + 1].lower_ not in _HOW_VALUES
        and doc[token.i + 2].lemma_ != "be"
        for token in span
    )


def _asked_attribute(token: Token) -> list[str]:
    """The attributes one word of a question asks for (one group)."""
    if _modifies_another(token) or (token.dep_ == "conj" and token.head.dep_ in SUBJECT_DEPS):
        return []  # "What did Andrew and his GF do …?": someone they were with, not a fact asked
    lemma = token_lemma(token)
    if _asks_what_one_does(token):
        return ["job"]  # "What does Mia's brother do?"
    if (
        lemma in SCHEDULE_WORDS
        and not _bare_state(token)
        and (
            token.dep_ in ("dobj", "pobj", "nsubj", "attr")
            or any(c.dep_ in ("poss", "det", "compound") for c in token.children)
        )
    ):
        return [f"schedule: {scheduled_event(token)}"]  # "her call", "Nadia's book club", "his salsa class"
    head = token.head
    to_work = (head.lower_ == "to" and token_lemma(head.head) in COMMUTE_PREDICATES) or (
        token.dep_ == "xcomp"
        and token_lemma(head) in COMMUTE_PREDICATES
        and any(c.lower_ == "to" for c in token.children)
    )
    if lemma in WORKPLACES and to_work:
        return ["commute"]  # "how does she get to work"
    if lemma in _PASTIME_NOUNS and token.pos_ == "NOUN":
        return ["hobby:"]  # "What activities does Melanie partake in?": her pastimes (ADR 0109)
    if lemma in _ASKED_WORDS and (token.pos_ in ("NOUN", "ADJ") or lemma == "wake"):
        return [_ASKED_WORDS[lemma]]
    if lemma == "teach" and any(child.lower_ == "who" for child in token.children):
        return ["tutor"]  # "who teaches her French"
    if lemma in EVENT_VERBS:  # the tagger may take the verb for a noun
        return [f"schedule: {EVENT_VERBS[lemma]}"]  # "which night does his choir rehearse"
    if reports_to(token):
        return ["manager"]  # "who does he report to"
    if (lemma == "work" and any(c.dep_ == "prt" and c.lower_ == "out" for c in token.children)) or (
        lemma == "exercise" and token.pos_ == "VERB"
    ):
        return ["gym"]  # "where does she work out"
    if lemma == "title" and token.pos_ == "NOUN" and not any(child.dep_ == "prep" for child in token.children):
        return ["job"]  # "what was his title", not "the title of her book"
    if lemma == "team":  # "which team does he support", "her favourite team"; not "the team he works on"
        supported = any(token_lemma(word) in _SUPPORTING for word in token.sent)
        return ["team"] if supported or any(c.lower_ in ("favourite", "favorite") for c in token.children) else []
    if lemma in PERSON_ROLES and _who_one_is(token):
        return [owned_name(token)]  # "Who is Noor's best friend?": a person the speaker names as theirs
    if lemma == "vehicle" and token.pos_ == "NOUN":
        return ["car", "bike"]  # "what vehicle does he own": a car or a bike
    family = family_of_word(lemma) or family_named(lemma) if token.pos_ in ("NOUN", "ADJ", "PROPN", "NUM") else None
    if family is None and _is_verb(token) and not any(c.dep_ == "prt" for c in token.children):
        family = family_of_predicate(lemma)
    gerund = gerund_of(lemma) if family is None and _is_verb(token) else None
    pastimes = family_of_word(gerund) if gerund is not None else None
    if (
        pastimes is not None
        and not any(child.dep_ in ("dobj", "prt") for child in token.children)
        and not any(word.lower_ in ("what", "which") for word in token.sent)
    ):
        # "Does Kwame still curl?": the pastime the verb's gerund names, then the others; not
        # "Which voice part does he sing?", which asks for something done in it
        return [f"{pastimes.attribute}: {gerund}", f"{pastimes.attribute}:"]
    if family is not None and family.attribute == "name" and asks_a_relatives_name(token):
        return ["name", "name:"]  # "Kwame's mother's name", "the name of his brother"
    if family is not None and family.attribute == "name" and _names_its_owner(token):
        return ["name"]  # "What is Kofi's name?", as "What is my name?" is planned (ADR 0095)
    if family is None or family.attribute == "name":  # "the name of her pet" asks for the pet
        return []
    if family.attribute == "relationship" and is_qualified_role(token):
        return []  # "her People Operations partner", "his tennis partner": a role, not a partner
    if family.attribute == "job" and lemma not in JOB_ITSELF and token.pos_ == "NOUN" and lemma in family.words:
        if any(child.dep_ == "poss" for child in token.children):
            return [owned_name(token)]  # "Nadia's manager": a person the speaker names by role
    if family.multi_valued:  # "Kwame's beagle": that value first, then any of the family's
        kind = [f"{family.attribute}: {lemma}"] if lemma in family.words and lemma not in FAMILY_NOUNS else []
        return [*kind, f"{family.attribute}:"]
    if family.place_attribute:
        return [family.attribute, family.place_attribute]
    return [family.attribute]


_NOW = frozenset({"now", "currently", "nowadays"})


def _asks_what_one_does(token: Token) -> bool:
    """ "What does Mia's brother do?", "What does Layla do up in Leeds?", "What does she do
    now?": what one does, in the present and nothing else said of it, is one's work; not "What
    did she do yesterday?", "What does she do for fun?" or "What does she do on weekends?"."""
    if token_lemma(token) != "do" or token.pos_ not in ("VERB", "AUX"):
        return False
    children = list(token.children)
    if not any(c.dep_ == "dobj" and c.lower_ == "what" for c in children):
        return False
    if not any(c.dep_ == "aux" and c.lower_ in ("does", "do") for c in children):
        return False
    return all(
        (c.dep_ != "prep" or c.lower_ in ("in", "at"))  # where: "up in Leeds"
        and (c.dep_ != "advmod" or c.lower_ in _NOW)
        and c.dep_ not in ("npadvmod", "xcomp", "advcl", "ccomp")
        for c in children
    )


def _who_one_is(token: Token) -> bool:
    """ "Who is Noor's best friend?": one person someone has, asked who they are (not "Mel and
    her friends", nor "Caroline's friend's name")."""
    return (
        token.tag_ == "NN"
        and token.dep_ in ("nsubj", "attr")
        and token_lemma(token.head) == "be"
        and any(child.dep_ == "poss" for child in token.children)
    )


def _names_its_owner(token: Token) -> bool:
    """ "Kofi's name": the name of the person named as its owner, not of a relative or a pet."""
    return token_lemma(token) == "name" and any(
        child.dep_ == "poss" and child.pos_ == "PROPN" for child in token.children
    )


def _is_verb(token: Token) -> bool:
    """A verb, or the root the tagger took for a noun after an auxiliary ("Where did Kwame study?")."""
    return token.pos_ in ("VERB", "AUX") or (
        token.dep_ == "ROOT" and any(child.dep_ == "aux" and child.lemma_ == "do" for child in token.children)
    )


def _bare_state(token: Token) -> bool:
    """ "on call", "on duty": a state a preposition puts something in, not an event of one's own."""
    return token.dep_ == "pobj" and token.head.lower_ == "on" and not list(token.children)


# Names of an attribute in several words ("job title", "relationship status", "date of birth"),
# longest first: a question that says one asks for that attribute, whatever its words' roles.
_ASKED_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"\b{re.escape(phrase)}\b", re.IGNORECASE), family.attribute)
    for family in ATTRIBUTE_FAMILIES
    for phrase in sorted(family.aliases, key=len, reverse=True)
    if " " in phrase and not family.multi_valued and family.lasting and family.attribute not in ("origin", "name")
)


def _asked_phrases(text: str) -> list[str]:
    return list(dict.fromkeys(attribute for pattern, attribute in _ASKED_PHRASES if pattern.search(text)))


def _names_another(token: Token) -> bool:
    """ "Nadia" in "Nadia's brother Tiago": the possessor of a relative who has a name of their own."""
    return token.dep_ == "poss" and any(
        child.dep_ == "appos" and child.pos_ == "PROPN" for child in token.head.children
    )


# A question about the value a fact had before its current one ("Where did Nadia live before
# Lyon?", "What did she used to eat?"), and the cue after which the question names the later value.
_PRIOR_CUE = re.compile(r"\b(?:before|prior to|used to|previous(?:ly)?|former(?:ly)?|original(?:ly)?|at first)\b", re.I)
_LATER_VALUE_CUE = re.compile(r"\b(?:before|prior to)\b", re.I)
# "Which city is Kwame originally from?", "Where does she come from?": a question of origin.
_ASKS_ORIGIN = re.compile(r"\bfrom\W*$", re.I)
_ORIGINALLY_FROM = re.compile(r"\boriginally\s+from\W*$", re.I)


def asked_key(span: Span) -> AskedKey:
    """The keys of the facts a question about someone's attributes asks for ("What diet does
    Nadia follow?" → diet of Nadia; "Where does Nadia's brother Tiago live?" → home of Tiago):
    nouns first (the value's kind), then verbs unless the noun after "which" or "what" named
    a key ("Which gym did she join?" asks for the gym, not the job "join" can state); about
    the named people that are not only the possessor of someone named in turn ("Nadia's
    brother Tiago": Tiago). A question about a measure ("How big a dog …") asks for no key."""
    if _asks_a_measure(span):
        return AskedKey(groups=(), names=_asked_names(span))
    if _ASKS_ORIGIN.search(span.text) and token_lemma(span.root) in ("be", "come", "hail"):
        return AskedKey(groups=(("origin", "birthplace"),), names=_asked_names(span))
    # The words after "before" name the value that replaced the asked one (asked_prior).
    later = _LATER_VALUE_CUE.search(span.text)
    cut = span.start_char + later.start() if later is not None else span.end_char
    asking = [token for token in span if token.idx < cut]
    groups: list[tuple[str, ...]] = []
    for attribute in _asked_phrases(span.text[: cut - span.start_char]):
        _add_group(groups, [attribute])
    for token in asking:
        if token.pos_ not in ("VERB", "AUX"):
            _add_group(groups, _asked_attribute(token))
    if not (groups and any(_determined_by_wh(token) for token in asking)):
        for token in asking:
            if token.pos_ in ("VERB", "AUX"):
                _add_group(groups, _asked_attribute(token))
    return AskedKey(groups=tuple(groups), names=_asked_names(span), every=any(map(_asks_every_value, asking)))


def _asks_every_value(token: Token) -> bool:
    """A plural of a kind of a family of several, counted, had or named: "How many dogs …?",
    "Which dogs does she own?", "the names of his dogs"; not "How do her dogs react to snow?"
    nor "What kind of experiences are her dogs the best companions for?"."""
    family = family_of_word(token_lemma(token))
    return (
        family is not None
        and family.multi_valued
        and token.tag_ == "NNS"
        and (
            any(child.lower_ == "many" for child in token.children)  # "How many dogs …"
            or (token.dep_ == "dobj" and token_lemma(token.head) in HAVING_PREDICATES)  # "Which dogs does she own?"
            or (token.dep_ == "pobj" and token.head.lower_ == "of")  # "the names of his dogs"
        )
        and any(a.endswith(":") for a in _asked_attribute(token))
    )


def kinds_only(groups: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    """The groups without a family's other values where one of its kinds is named: a question
    about the past asks about that one ("When did Melanie go camping?": the camping, not her
    other pastimes), while one about the present may be answered by another ("Does Kwame
    still curl?": the league he quit; ADR 0107)."""
    return tuple(
        tuple(a for a in group if not (a.endswith(":") and any(b != a and b.startswith(a) for b in group)))
        for group in groups
    )


def _add_group(groups: list[tuple[str, ...]], attributes: list[str]) -> None:
    seen = {attribute for group in groups for attribute in group}
    group = tuple(attribute for attribute in attributes if attribute not in seen)
    if group:
        groups.append(group)


def _determined_by_wh(token: Token) -> bool:
    """ "gym" in "Which gym …": a noun the question word picks, when it names a key."""
    return (
        token.pos_ == "NOUN"
        and any(child.dep_ == "det" and child.lower_ in ("which", "what") for child in token.children)
        and bool(_asked_attribute(token))
    )


def _asked_names(span: Span) -> tuple[str, ...]:
    """The people a question asks about: its names, but the possessor of a relative, who is
    asked about instead ("Nadia's brother Tiago": Tiago; "Kwame's mother": Kwame's mother)."""
    names = []
    for token in span:
        # a name the tagger does not know, inside the question ("Where does Layla work?")
        named = token.pos_ == "PROPN" or (token.i > span.start and is_unknown_name(token))
        if not named or _names_another(token):
            continue
        relative = relative_name(token.text, token.head) if token.dep_ == "poss" else None
        names.append(relative or token.text)
    return tuple(dict.fromkeys(names))


_VALUE_POS = frozenset({"PROPN", "NOUN", "NUM"})


_AMOUNT = re.compile(r"^\W*how\s+(?:much|many)\b|\bwhat\s+(?:is|was)\s+the\s+(?:price|cost|fee)\b", re.IGNORECASE)


def asks_an_amount(question: str) -> bool:
    """ "How much does Kwame pay for his gym?", "What is the price of …": the question asks for a
    number the fact states."""
    return _AMOUNT.search(question) is not None


def asks_prior(question: str) -> bool:
    """Whether a question asks for an earlier value of a fact (a cheap test before parsing);
    "Where is she originally from?" asks where she comes from, which has no later value."""
    return _PRIOR_CUE.search(question) is not None and _ORIGINALLY_FROM.search(question) is None


def asked_prior(span: Span, key: AskedKey) -> tuple[str, ...] | None:
    """For a question about an earlier value of a fact: the words naming the value that
    replaced it ("before she moved to Lyon" → ("lyon",); "what did she used to eat" → ()), or
    ``None`` when the question does not ask for an earlier value."""
    if not asks_prior(span.text):
        return None
    later = _LATER_VALUE_CUE.search(span.text)
    if later is None:
        return ()
    cut = span.start_char + later.end()
    # Whom the question is about is named before the cue; a name after it is the later value.
    about = {token.lower_ for token in span if token.idx < cut} & {name.casefold() for name in key.names}
    return tuple(
        dict.fromkeys(
            token.lower_
            for token in span
            if token.idx >= cut and token.pos_ in _VALUE_POS and token.lower_ not in about and len(token.text) > 1
        )
    )


_ANCHOR_PREPOSITIONS = frozenset({"in", "at"})
_WHEN_PREPOSITIONS = frozenset({"in", "at", "for", "with", "to"})
# Verbs that ask for a value gained in a time, not one held through it ("which gym did she join").
_ACQUIRING_PREDICATES = frozenset(
    {"join", "get", "buy", "adopt", "start", "take", "sign", "switch", "land", "find", "accept", "lease"}
)


class AskedAnchor(NamedTuple):
    words: tuple[str, ...]  # naming the other fact's value: ("porto",)
    acquired: bool  # the value gained in that time ("which gym did she join"), not the one held


def asked_anchor(span: Span, key: AskedKey) -> AskedAnchor | None:
    """For a question about a value while another fact held ("What car did Nadia have in
    Porto?", "… when he lived in Winnipeg", "Which gym did she join when she started at
    Loomwork?"): the words naming that other value; ``None`` when the question names none. A
    date is no anchor: the question's date constraint is."""
    if not key.groups:
        return None
    words = []
    for token in span:
        if token.pos_ != "PROPN" or token.ent_type_ in ("DATE", "TIME") or token.head.dep_ != "prep":
            continue
        preposition, verb = token.head, token.head.head
        in_when = verb.dep_ == "advcl" and any(c.dep_ == "advmod" and c.lower_ == "when" for c in verb.children)
        if (in_when and preposition.lower_ in _WHEN_PREPOSITIONS) or (
            verb.dep_ == "ROOT" and preposition.lower_ in _ANCHOR_PREPOSITIONS
        ):
            words.append(token.lower_)
    if not words:
        return None
    return AskedAnchor(words=tuple(dict.fromkeys(words)), acquired=token_lemma(span.root) in _ACQUIRING_PREDICATES)


def _matches(attribute: str, asked: tuple[str, ...]) -> bool:
    return any(attribute == wanted or (wanted.endswith(":") and attribute.startswith(wanted)) for wanted in asked)


def is_asked_fact(name: str, attribute: str, key: AskedKey) -> bool:
    """Whether a stored fact key (name, attribute) is one the question asks for: the name is
    one the question asks about and the attribute one of its asked attributes."""
    names = {asked.casefold() for asked in key.names}
    return bool(attribute) and name.casefold() in names and _matches(normalize_attribute(attribute), key.attributes)


def states_key(sentences: Iterator[Span] | list[Span], *, speaker: str, key: AskedKey) -> bool:
    """Whether one of the sentences states a fact of the asked key: the speaker's own fact when
    the speaker is one of the asked names, or a fact of an asked name the sentence names."""
    if not key.attributes:
        return False
    names = {name.casefold() for name in key.names}
    for span in sentences:
        if speaker.casefold() in names:
            reading = speaker_fact(span)
            if reading is not None and _matches(reading.attribute, key.attributes):
                return True
        for token in span:
            if token.text.casefold() in names and token.dep_ in SUBJECT_DEPS:
                if _matches(read_fact(span, about=token).attribute, key.attributes):
                    return True
    return False


# Words that say a value of a family alone, beside the family's own words: how one gets to work
# ("How are you getting to the office?" "bike.").
_ANSWERING_WORDS = {
    "commute": frozenset(
        "bike bicycle cycle cycling bus tram train tube metro subway car drive driving walk walking foot scooter "
        "ferry carpool".split()
    )
}


def with_asked_attribute(span: Span, question: Span | None) -> str | None:
    """ "14 September, same as always.", said as the answer to "When is your birthday
    again?": the sentence read as a statement of the attribute asked ("My birthday is 14
    September, same as always."), when it is a fragment (no subject) that holds a value and
    the question asks the listener for one of their facts; else None."""
    if question is None or not any(token.lower_ in ("you", "your") for token in question):
        return None
    if any(token.dep_ in SUBJECT_DEPS for token in span):
        return None  # a sentence of its own, not a fragment
    for group in asked_key(question).groups:
        for attribute in group:
            family = family_named(attribute.removesuffix(":"))
            if family is None or family.attribute not in family.words:
                continue
            words = family.words | _ANSWERING_WORDS.get(family.attribute, frozenset())
            if any(token.ent_type_ or token.like_num or token_lemma(token) in words for token in span):
                return f"My {family.attribute} is {span.text}"  # a value: a name, a date, a number, a family word
            return None
    return None
