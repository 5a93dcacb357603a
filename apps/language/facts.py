"""Which fact a sentence states: the attribute of a fact key, read off a spaCy parse. Pure
(spaCy is only a type here).

A semantic fact is keyed by (entity, attribute): "We moved from Porto to Lyon" and "I live in
Porto" are two values of (Nadia, home city), so the second supersedes the first; "I'm allergic
to peanuts" is (Nadia, allergy: peanut) and supersedes neither. The attribute comes from an
attribute family when one of its cue lemmas is the clause's predicate or the head of its
object or complement, and otherwise from the predicate lemma and the object head ("love
hiking"), so unrelated facts never share a key.

A change stated as a change ("moved from Porto to Lyon", "I don't eat meat anymore", "the call
moved to Mondays", "I quit the bakery and joined a startup") is recognised too: the reading
says it is one and names the old value when the sentence does.

The vocabulary here (the families, their cue words, a token's lemma) is shared with the reader
of questions (``apps.language.questions``), which imports from this module and never the
other way round.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from apps.language.calendar import month_number, weekday_alternation
from apps.language.places import is_place_name
from apps.language.words import CHAT_WORDS, GERUND, SAME_WORD, uninflected

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

MAX_ATTRIBUTE_CHARS = 100


@dataclass(frozen=True)
class AttributeFamily:
    """One attribute and the lemmas that state it.

    ``predicates`` cue it as the clause's verb ("live", "eat"); ``words`` as the head of the
    clause's object, complement or possessed subject ("vegan", "car", "manager"). A family
    with ``multi_valued`` holds several values at once (allergies, pets), so the value's head
    is part of the attribute and a new pet does not supersede the old one. ``place_attribute``
    replaces the attribute when the value is a city or country ("home" → "home city").
    ``aliases`` are other names a writer may give the same attribute ("employer" → "job").
    A family that is not ``lasting`` names an attribute of events more often than of a person
    ("I ran a race"): its cues alone do not make a sentence a fact about the speaker.
    """

    attribute: str
    predicates: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    multi_valued: bool = False
    place_attribute: str = ""
    aliases: frozenset[str] = frozenset()
    lasting: bool = True


def _family(
    attribute: str,
    predicates: str = "",
    words: str = "",
    *,
    multi_valued: bool = False,
    place_attribute: str = "",
    aliases: str = "",
    lasting: bool = True,
) -> AttributeFamily:
    return AttributeFamily(
        attribute=attribute,
        predicates=frozenset(predicates.split()),
        words=frozenset(words.split()),
        multi_valued=multi_valued,
        place_attribute=place_attribute,
        aliases=frozenset(alias.strip() for alias in aliases.split(",") if alias.strip()),
        lasting=lasting,
    )


# The families, most specific first: a clause takes the first family one of its cues belongs to,
# words (the value) before predicates (the verb), so "I quit coffee" is a drink, not a job.
ATTRIBUTE_FAMILIES: tuple[AttributeFamily, ...] = (
    _family("name", "name call", "name", aliases="first name, full name"),
    _family("age", "", "old age", aliases="years old"),
    _family("birthday", "", "birthday", aliases="date of birth, birth date"),
    _family("birthplace", "bear", "birthplace", aliases="place of birth, born in, hometown"),
    _family("origin", "", "", aliases="country of origin, comes from, from"),
    _family("allergy", "", "allergic allergy", multi_valued=True, aliases="allergies"),
    _family("diet", "eat", "vegan vegetarian pescatarian meat diet keto paleo gluten dairy carnivore omnivore",
            aliases="diet, eating habits, food, eats"),
    _family("drink", "drink", "coffee espresso tea rooibos beer wine alcohol latte cappuccino juice soda caffeine "
            "teetotal sober decaf",
            aliases="drinks, beverage, morning drink"),
    _family("relationship", "marry date divorce propose", "married engaged single divorced widowed official partner "
            "boyfriend girlfriend husband wife fiance fiancé fiancee fiancée spouse",
            aliases="partner, spouse, marital status, relationship status"),
    _family("pet", "adopt", "pet dog cat puppy pup kitten rabbit bunny hamster parrot greyhound labrador terrier "
            "poodle goldfish tortoise turtle guinea beagle spaniel retriever collie husky dachshund pug "
            "corgi bulldog chihuahua schnauzer tabby", multi_valued=True, aliases="pets"),
    # makes that are no other common word ("Ford", "Mini", "Mercedes", "Dodge" are)
    _family("car", "lease", "car vehicle suv van motorbike motorcycle scooter jeep tesla toyota honda bmw audi "
            "volkswagen vw nissan hyundai kia mazda subaru volvo fiat renault peugeot citroen skoda chevrolet "
            "chevy lexus porsche mitsubishi suzuki dacia vauxhall opel", aliases="vehicle, cars"),
    _family("bike", "", "bike bicycle e-bike ebike", aliases="bicycle"),
    _family("phone", "", "phone smartphone iphone cellphone", aliases="mobile, mobile phone, cell phone"),
    _family("laptop", "", "laptop macbook thinkpad chromebook computer", aliases="computer"),
    _family("gym", "", "gym membership fitness", aliases="gym membership, fitness club"),
    _family("doctor", "", "doctor gp physician dentist therapist", aliases="gp, physician"),
    _family("rent", "", "rent", aliases="monthly rent"),
    _family("wake-up time", "wake", "alarm", aliases="wake time, wakes up, alarm"),
    _family("commute", "commute", "commute", aliases="how they get to work, transport"),
    _family("volunteering", "volunteer", "volunteer volunteering", aliases="volunteer work, volunteers"),
    _family("race", "", "marathon race triathlon 10k 5k half-marathon", aliases="training for", lasting=False),
    _family("tutor", "", "tutor coach instructor", aliases="teacher, private tutor"),
    _family("team", "", "fan supporter", aliases="favourite team, favorite team, sports team"),
    _family("language", "speak learn", "language", multi_valued=True, aliases="languages, spoken language"),
    _family("studies", "study", "student degree major university college school course phd mba doctorate masters",
            aliases="education, school, study"),
    _family("hobby", "", "hobby hobbies pastime pottery bouldering climbing knitting painting photography gardening "
            "chess woodworking sewing embroidery ceramics swimming hiking running jogging cycling camping fishing "
            "surfing skiing snowboarding kayaking canoeing sailing rowing skating curling yoga pilates dancing "
            "singing drawing sketching crochet quilting calligraphy origami birdwatching archery fencing tennis "
            "golf badminton volleyball basketball guitar piano violin cello ukulele drums saxophone flute "
            "meditation", multi_valued=True, aliases="hobbies, pastime"),
    _family("home", "live move relocate reside settle", "home flat apartment house neighbourhood neighborhood address",
            place_attribute="home city", aliases="residence, home address, neighbourhood, neighborhood"),
    _family("job", "work join quit hire employ resign retire promote freelance", "job career employer company startup firm freelance "
            "bakery restaurant hospital office nurse teacher engineer designer developer lawyer paralegal chef "
            "baker lead manager consultant accountant programmer scientist researcher analyst architect "
            "pharmacist dentist waiter waitress cashier barista mechanic electrician plumber pilot writer "
            "journalist artist musician photographer professor lecturer intern freelancer founder ceo "
            "principal headteacher midwife paramedic firefighter detective soldier farmer carpenter builder welder "
            "janitor receptionist secretary librarian translator interpreter editor producer actor actress singer "
            "surgeon veterinarian vet psychologist counselor counsellor physiotherapist technician recruiter "
            "realtor banker broker economist statistician physicist chemist biologist bartender cook butcher "
            "florist hairdresser barber tailor courier postman nanny caregiver carer housekeeper gardener "
            "entrepreneur executive cto cfo supervisor coordinator auditor attorney solicitor judge educator "
            "postdoc copywriter illustrator animator marketer dietitian nutritionist surveyor inspector pastor "
            "priest rabbi imam youtuber influencer blogger job-title",
            aliases="employer, occupation, profession, work, job title, role, position, workplace"),
)  # fmt: skip

_STUDIES = next(family for family in ATTRIBUTE_FAMILIES if family.attribute == "studies")
_HOME = next(family for family in ATTRIBUTE_FAMILIES if family.attribute == "home")
_JOB = next(family for family in ATTRIBUTE_FAMILIES if family.attribute == "job")
_RELATIONSHIP = next(family for family in ATTRIBUTE_FAMILIES if family.attribute == "relationship")
_VEHICLES = tuple(family for family in ATTRIBUTE_FAMILIES if family.attribute in ("car", "bike"))

# Canonical names of "home city" and "schedule: …" style attributes the families do not list.
_EXTRA_ALIASES: Mapping[str, str] = MappingProxyType(
    {"city": "home city", "home city": "home city", "city of residence": "home city", "hometown": "birthplace"}
)
# Recurring events whose day or time is a fact of its own: (Nadia, schedule: call).
SCHEDULE_WORDS = frozenset(
    "call meeting standup stand-up retro retrospective appointment session club review lesson rehearsal "
    "practice class".split()
)
_SCHEDULE_PREDICATES = frozenset({"move", "change", "shift", "reschedule", "switch", "push", "bring"})
# Schedule words that name a time given to an activity, not the activity: "my salsa class" is
# salsa's schedule, and "salsa's moved to thursdays" moves it (ADR 0132).
_ACTIVITY_SLOTS = frozenset({"class", "lesson", "session", "practice", "training"})
# Words before a slot that say its level, format or audience, not its activity ("a beginners
# class", "an online group class", "team practice").
_SLOT_QUALIFIERS = frozenset(
    "group beginner beginners intermediate advanced improver improvers online private intro introductory taster "
    "trial drop-in adult adults kid kids child children family team class lesson session practice training".split()
)
# Verbs that state a change of value, and markers that do.
_LEAVE_PREDICATES = frozenset({"quit", "leave", "stop", "cancel", "sell", "drop", "give", "end", "ditch"})
_SWAP_PREDICATES = frozenset({"swap", "trade", "replace", "exchange", "switch", "change"})
_FROM_TO_PREDICATES = frozenset({"move", "switch", "change", "go", "relocate", "transfer", "upgrade"})
_BECOME_PREDICATES = frozenset({"become", "go", "turn", "switch"})
_CHANGE_MARKERS = re.compile(r"\b(?:any\s*more|no\s+longer|no\s+more|instead|these\s+days|not\s+anymore)\b", re.I)
_PREFERENCE_PREDICATES = frozenset({"like", "love", "enjoy", "prefer", "adore", "hate", "dislike"})
_FIRST_PERSON = frozenset({"i", "we"})
_FIRST_PERSON_POSSESSIVE = frozenset({"my", "our"})
SUBJECT_DEPS = ("nsubj", "nsubjpass")
_OBJECT_DEPS = ("dobj", "attr", "acomp", "oprd", "pobj")
_PLACE_LABELS = frozenset({"GPE", "LOC"})
_NOT_PLACES = frozenset({"PERSON", "NORP", "DATE", "TIME", "MONEY", "CARDINAL", "PRODUCT", "WORK_OF_ART"})
# Job words that, owned by the speaker, name a person rather than the job ("my manager is Claire").
JOB_ITSELF = frozenset({"job", "career", "employer", "company", "workplace", "startup", "firm", "office"})
# The families of people one has (a doctor, a tutor), whose words said of what someone is are a job.
_PROVIDERS = frozenset({"doctor", "tutor"})
# Heads of job titles that only with a word before them name a job: "a health visitor", "a
# social worker", "a teaching assistant", "a police officer" (not "a hard worker", "a visitor").
_TITLE_HEADS = frozenset({"worker", "visitor", "assistant", "officer", "clerk", "administrator", "operator"})
# The words before such a head that the parser takes for adjectives, not compounds ("social worker").
_TITLE_ADJECTIVES = frozenset({"social", "medical", "personal", "administrative", "legal", "dental", "clinical"})
_TITLED = "job-title"  # the job family's word for such a title
# Verbs whose "for" object is the value: "I pay for a gym membership", "signed up for the 10k".
_FOR_VALUE_PREDICATES = frozenset({"pay", "sign", "register", "enter", "train", "enrol", "enroll", "apply"})
# A commitment to a passing thing ("signed up for the Lyon 10k") is a lasting fact of the speaker.
_COMMITMENT = re.compile(r"\b(?:sign(?:ed|ing)?\s+up|regist(?:er|ered|ering)|enrol+(?:ed|ing)?|training)\s+for\b", re.I)
# Verbs of working somewhere: their "at"/"for" object is the workplace ("started at the hospital").
_WORK_PREDICATES = frozenset({"work", "teach", "start", "join", "intern"})
# Families of the speaker's own things and routines: "my alarm goes off at 4:30", "the rent is
# 750 euros" state them whatever the verb, and without a possessive when the article is "the".
_ROUTINE_FAMILIES = frozenset({"rent", "wake-up time", "commute", "gym", "diet", "drink", "doctor", "tutor", "car"})
# A recurring conversation is a call ("now we talk every other Wednesday").
_TALK_PREDICATES = frozenset({"talk", "speak", "chat", "videochat", "facetime", "call", "phone", "ring"})
_THIRD_PERSON = frozenset({"he", "she"})
COMMUTE_PREDICATES = frozenset({"ride", "cycle", "bike", "walk", "drive", "take", "commute", "get", "go"})
WORKPLACES = frozenset({"office", "work", "job", "studio", "campus"})
_TRIPS = frozenset({"ride", "drive", "walk", "cycle", "commute", "journey", "trip", "run", "bus", "train", "tram"})
# Verbs that give the speaker one more value of a family of several ("we adopted a greyhound",
# "I have two cats", "I'm allergic to peanuts"); with another verb the thing is only its object.
HAVING_PREDICATES = frozenset({"have", "adopt", "get", "own", "rescue", "foster", "be", "keep", "buy"})


@dataclass(frozen=True)
class FactReading:
    """What a sentence says about its subject: the attribute of its key, whether an attribute
    family chose it (False: the predicate-and-object fallback), and whether it is stated as a
    change, with the old value when the sentence names it."""

    attribute: str
    from_family: bool
    changed: bool = False
    previous: str | None = None


def normalize_attribute(text: str) -> str:
    """One spelling per attribute: lowercase, single spaces, and a family's aliases folded into
    its name ("Employer" → "job", "home_city" → "home city"); what a writer returns is compared
    with what is stored through this."""
    folded = " ".join(re.sub(r"[_\s]+", " ", text).split()).casefold().strip(" .")
    if ":" in folded:  # "schedule: call", "allergy: peanut": the family part is normalized alone
        head, _, value = folded.partition(":")
        head, value = head.strip(), value.strip()
        return f"{_canonical(head)}: {value}"[:MAX_ATTRIBUTE_CHARS] if value else _canonical(head)
    return _canonical(folded)[:MAX_ATTRIBUTE_CHARS]


def _canonical(name: str) -> str:
    if name in _EXTRA_ALIASES:
        return _EXTRA_ALIASES[name]
    for family in ATTRIBUTE_FAMILIES:
        if name == family.attribute or name in family.aliases:
            return family.attribute
    return name


# The key of a plan, a wish or a duty about an attribute ("plan: home"): a new plan replaces the
# old plan, and neither replaces the attribute's current value.
PLAN = "plan: "
# The key a writer gives the end of a thing the speaker calls by name ("ended: moose" for "We
# lost Moose"): the stored fact that names the thing is the key it ends (the write resolves it).
ENDED = "ended: "
# A value of the first attribute ends the second when that one is the only one stated: a move to
# Porto ends a home known only as "near the river" or "in the North End" (ADR 0119); a new part
# of town does not end the city.
ENDS_ALONE: Mapping[str, str] = MappingProxyType({"home city": "home"})


def attribute_vocabulary() -> list[str]:
    """The attribute names writers are asked to use (the OpenAI writer's prompt lists them)."""
    names = ["home city", *(family.attribute for family in ATTRIBUTE_FAMILIES), "schedule: <event>"]
    names.append(f"{PLAN}<attribute>")
    return list(dict.fromkeys(names))


# --- reading a sentence -------------------------------------------------------------------


def token_lemma(token: Token) -> str:
    """The token's lemma in lower case; for chat's short form, the word it stands for ("bf")."""
    return CHAT_WORDS.get(token.lower_) or token.lemma_.lower()


def _word(token: Token) -> str:
    """The token in lower case; for chat's short form, the word it stands for ("w/" → "with")."""
    return CHAT_WORDS.get(token.lower_, token.lower_)


# Words before a name that speak to the one named: "Hey Gina", "Thanks, Gina", "Wow, Jon".
_ADDRESSING = frozenset(
    "hey hi hello hiya yo dear thanks thank thx ty cheers yeah yes yep yup no nope wow oh ooh aw aww congrats "
    "congratulations sorry ok okay haha lol omg well bye night morning sure great nice cool awesome".split()
)
_SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "u", "ur"})


def is_addressed(name: Span) -> bool:
    """A name the speaker speaks to, not one the sentence tells of: after a greeting or thanks
    ("Hey Gina, hope you're well", "Thanks, Gina - really appreciate it"), last after a comma
    ("You got this, Jon!"), first before a comma and "you" ("Gina, you're amazing"), or set
    off by commas in a sentence spoken to "you" ("Your support, Gina, means a lot"); not
    "Gina, my sister, moved to Paris", "I went hiking with my friend, Jon", "Yes, Maria Duarte,
    the manager" or "Gina moved to Paris"."""
    doc, sentence = name.doc, name.sent
    head = name.root.head
    if name.root.dep_ == "appos" and any(c.dep_ == "poss" and _word(c) not in _SECOND_PERSON for c in head.children):
        return False  # "my friend, Jon": who the friend is
    if any(child.dep_ == "appos" and _word(child) not in _ADDRESSING for child in name.root.children):
        return False  # "Yes, Maria Duarte, the manager": who she is
    start = name.start
    while start < name.end - 1 and _word(doc[start]) in _ADDRESSING:  # "Hey Gina" read as one name
        start += 1
    lead = [t for t in doc[sentence.start : start] if not t.is_punct]
    rest = [t for t in doc[name.end : sentence.end] if t.is_alpha or t.like_num]
    before = doc[start - 1].text if start > sentence.start else ""
    after = doc[name.end].text if name.end < sentence.end else ""
    if lead and all(_word(t) in _ADDRESSING for t in lead) and (not after or doc[name.end].is_punct):
        return True
    if before == "," and not rest:
        return True
    spoken_to = any(_word(t) in _SECOND_PERSON for t in sentence)
    if not lead and after == "," and rest and _word(rest[0]) in _SECOND_PERSON:
        return True
    return before == "," and after == "," and spoken_to


def _subject(clause: Token) -> Token | None:
    """The clause's subject, or for a verb joined to another without one ("Efua packed up and
    moved to Calgary"), the subject of the verb it is joined to. Of two subjects (the parser
    joins run-on chat into one clause: "femi left on friday, so i report to gareth now"), one
    right before the verb is its own."""
    subjects = [child for child in clause.children if child.dep_ in SUBJECT_DEPS]
    adjacent = [child for child in subjects if _right_before(child, clause)]
    own = next(iter(adjacent or subjects), None)
    if own is None and (_shares_subject(clause) or _state_after_copula(clause)):
        return _subject(clause.head)
    return own


def _state_after_copula(token: Token) -> bool:
    """What the copula says one is: "retired" and "married" in "my mum is retired and lives in
    Accra", "my sister is married and lives in Leeds"."""
    return token.dep_ == "acomp" and token_lemma(token.head) == "be"


def _right_before(subject: Token, verb: Token) -> bool:
    """Nothing but adverbs, auxiliaries or a negation between a subject and its verb."""
    between = subject.doc[subject.i + 1 : verb.i]
    return subject.i < verb.i and all(token.dep_ in ("advmod", "aux", "auxpass", "neg") for token in between)


def _shares_subject(token: Token) -> bool:
    return (
        token.dep_ == "conj"
        and (token.pos_ in ("VERB", "AUX") or _work_taken_for_noun(token))
        and (token.head.pos_ in ("VERB", "AUX") or _state_after_copula(token.head))
        and not any(child.dep_ in SUBJECT_DEPS for child in token.children)
    )


def _work_taken_for_noun(token: Token) -> bool:
    """ "work" joined to a verb and working somewhere or as something, which the tagger takes for
    a noun: "We live in Lyon and work for Airbus", "I live in Lisbon and work as a nurse"."""
    return (
        token.pos_ == "NOUN"
        and token.lower_ == "work"
        and token.dep_ == "conj"
        and token.head.pos_ in ("VERB", "AUX")
        and any(child.dep_ == "prep" and child.lower_ in ("at", "for", "as") for child in token.children)
    )


def _possessed_by_speaker(token: Token) -> bool:
    return any(child.dep_ == "poss" and child.lower_ in _FIRST_PERSON_POSSESSIVE for child in token.children)


def is_first_person(token: Token) -> bool:
    """The speaker: "I", "we", or a noun the speaker owns ("my manager", "our standup")."""
    return token.lower_ in _FIRST_PERSON or _possessed_by_speaker(token)


def _predicate(clause: Token) -> Token:
    """The verb that carries the meaning: "used to eat" → eat, "want to move" → move, "went
    back to eating fish" → eat, "is retired" → retire."""
    for child in clause.children:
        if _state_after_copula(child) and child.tag_ == "VBN" and child.lower_ != "gone":
            return child  # the parse of "is retired" as a passive says the same; "is gone" is read whole
        if (
            child.dep_ == "xcomp"
            and child.pos_ in ("VERB", "AUX")
            and not _taken_up(clause, child)
            and not any(grandchild.dep_ == "nsubj" for grandchild in child.children)  # ADR 0158
            and not _passive_of_a_family(clause)
        ):
            return clause if _lowercase_place(child) else child  # "moved to porto": no verb "porto"
    if token_lemma(clause) in _RETURN_PREDICATES:
        heads = [clause, *(child for child in clause.children if child.dep_ == "advmod")]  # "went back to"
        for child in (c for head in heads for c in head.children):
            if child.dep_ == "prep" and child.lower_ == "to":
                gerund = next((g for g in child.children if g.dep_ == "pcomp" and g.pos_ == "VERB"), None)
                if gerund is not None:
                    return gerund
    return clause


def _passive_of_a_family(clause: Token) -> bool:
    """ "Got promoted to design lead", "I was hired to teach maths": a family's verb in the
    passive keeps its meaning; what follows "to" is a title or a task (ADR 0158)."""
    passive = any(child.dep_ == "auxpass" for child in clause.children)
    return passive and family_of_predicate(token_lemma(clause)) is not None


def _gone_doing(predicate: Token) -> bool:
    """ "I go bouldering", "we went climbing": the gerund names the pastime as its object would."""
    return predicate.dep_ == "xcomp" and predicate.tag_ == "VBG" and token_lemma(predicate.head) == "go"


# Verbs whose "to …ing" carries the meaning: "went back to eating fish", "switched to drinking tea".
_RETURN_PREDICATES = frozenset({"go", "get", "switch", "return", "stick", "turn"})


def _objects(predicate: Token) -> list[Token]:
    found = [child for child in predicate.children if child.dep_ in _OBJECT_DEPS]
    for child in predicate.children:
        if child.dep_ in ("prep", "agent", "dative"):
            found += [grandchild for grandchild in child.children if grandchild.dep_ == "pobj"]
        if child.dep_ == "advmod" and child.lower_ in _DIRECTIONS:  # "we moved back to Toronto"
            found += [g for prep in child.children if prep.dep_ == "prep" for g in prep.children if g.dep_ == "pobj"]
        if child.dep_ == "xcomp" and (
            child.pos_ not in ("VERB", "AUX") or _gone_doing(child) or _taken_up(predicate, child)
        ):
            found.append(child)  # "I love hiking", "I stopped going climbing"
        elif child.dep_ == "xcomp" and _lowercase_place(child):
            found.append(child)  # "moved to porto", which the parser reads as "to" and a verb
        if child.dep_ == "acomp":  # "allergic to peanuts" (or, as the parser may have it, "to" + xcomp)
            for grandchild in child.children:
                if grandchild.dep_ == "prep":
                    found += [g for g in grandchild.children if g.dep_ == "pobj"]
                elif grandchild.dep_ == "xcomp":
                    found.append(grandchild)
    return found


# Verbs that begin or give up a pastime named by its gerund, and the pastimes.
_TAKING_UP = frozenset({"stop", "quit", "start", "begin", "take", "pick", "resume", "give"})
_PASTIMES = next(family for family in ATTRIBUTE_FAMILIES if family.attribute == "hobby").words


def _taken_up(predicate: Token, gerund: Token) -> bool:
    """ "I stopped climbing", "I took up knitting": a pastime begun or given up, named by its
    gerund, which is the verb's object rather than the verb that carries the meaning."""
    return token_lemma(predicate) in _TAKING_UP and gerund.tag_ == "VBG" and gerund.lower_ in _PASTIMES


# Adverbs a place hangs from: "moved back to Toronto", "went over to Lyon".
_DIRECTIONS = frozenset({"back", "over", "away"})

# Heads that make their compound the thing sought, not had: "job hunting", "a flat search".
_SEEKING = frozenset({"hunting", "hunt", "search", "searching", "seeking"})


def _words_of(token: Token) -> list[str]:
    """The lemma of a value's head and of its compounds ("bakery life" → life, bakery); none
    for a search ("I'm job hunting" states no job)."""
    if token_lemma(token) in _SEEKING or token.lower_ in _SEEKING:
        return []
    # "car-free", "meat-free": the thing one is free of is the value's word
    freed = [token_lemma(child) for child in token.children if child.dep_ == "npadvmod" and token.lower_ == "free"]
    compounds = [token_lemma(child) for child in token.children if child.dep_ == "compound"]
    qualified = compounds or any(c.dep_ == "amod" and c.lower_ in _TITLE_ADJECTIVES for c in token.children)
    titled = [_TITLED] if qualified and token_lemma(token) in _TITLE_HEADS else []
    return [token_lemma(token), token.lower_, *compounds, *freed, *titled]


def family_of_word(word: str) -> AttributeFamily | None:
    return next((family for family in ATTRIBUTE_FAMILIES if word in family.words), None)


def family_of_predicate(lemma: str) -> AttributeFamily | None:
    return next((family for family in ATTRIBUTE_FAMILIES if lemma in family.predicates), None)


# The family words that are gerunds, by the verb they are made from: "Does she still swim?"
# asks about swimming as "Does she still go swimming?" does.
_GERUNDS: dict[str, str] = {
    stem: word
    for family in ATTRIBUTE_FAMILIES
    if family.multi_valued
    for word in sorted(family.words)
    for stem in uninflected(word, GERUND, shortest=2)  # the verbs it may be the gerund of
}


def gerund_of(lemma: str) -> str | None:
    """The family word that is the gerund of the verb ``lemma`` ("curl" → "curling"), if any."""
    return _GERUNDS.get(lemma)


def _is_place(token: Token) -> bool:
    """A city or country: tagged as one, or a proper name the tagger took for nothing else (the
    small model reads "Lyon" as an organization in "I moved to Lyon")."""
    return token.ent_type_ in _PLACE_LABELS or (token.pos_ == "PROPN" and token.ent_type_ not in _NOT_PLACES)


_WEEKDAY = re.compile(rf"(?:{weekday_alternation()})s?", re.IGNORECASE)


def _placed(token: Token) -> bool:
    """A place where one lives: a city or country, or a proper name after "in", "to" or "from"
    that the tagger took for a person ("We moved to Lyon"); a street names none."""
    if token_lemma(token) in _STREET_WORDS:
        return False
    named_where = token.pos_ == "PROPN" and token.dep_ == "pobj" and token.head.lower_ in ("in", "to", "from")
    mistaken = token.ent_type_ == "PERSON" or (token.ent_type_ == "DATE" and month_number(token.lower_) is None)
    return (
        _is_place(token) or (named_where and mistaken and not _WEEKDAY.fullmatch(token.text)) or _lowercase_place(token)
    )


def _lowercase_place(token: Token) -> bool:
    """A city or country chat writes in lower case, which the tagger does not know for one
    ("moved to porto", "living in são paulo"): its words, with those before it in its phrase,
    name a larger city or a country (:mod:`apps.language.places`)."""
    if not token.is_lower or token.ent_type_ not in ("", "GPE", "LOC") or _WEEKDAY.fullmatch(token.text):
        return False
    phrase = [
        t.text for t in token.doc[token.left_edge.i : token.i + 1] if t.dep_ in ("compound", "amod") or t == token
    ]
    return month_number(token.lower_) is None and (is_place_name(token.text) or is_place_name(" ".join(phrase)))


# Words of a family of several values that name the family, not one value ("a pet", "allergic").
FAMILY_NOUNS = frozenset({"allergic", "allergy", "pet", "language", "hobby", "pastime"})
# Families of several values one has (a pet, an allergy, a language), not one does (a hobby).
_HAD_FAMILIES = frozenset({"pet", "allergy", "language"})
# Things one has one of, whose value only a verb of having, getting, using or giving up states
# ("I drive a Civic now", "we sold the car", "I got a new phone"); any other verb does something
# with the one there is (ADR 0137).
_THING_FAMILIES = frozenset({"car", "bike", "phone", "laptop"})
_THING_PREDICATES = HAVING_PREDICATES | frozenset(
    {
        "drive",
        "ride",
        "use",
        "lease",
        "sell",
        "switch",
        "upgrade",
        "trade",
        "replace",
        "lose",
        "steal",
        "die",
        "receive",
        "total",
    }
)


def _attribute_of(family: AttributeFamily, value: Token | None, values: list[Token]) -> str:
    # the place of the value itself, or the city of the dwelling one lives in ("we live in a
    # small flat in Lyon"; what one has, "an apartment in Ostiense", names the home)
    dwelling_cities = (
        place
        for v in values
        if v.dep_ == "pobj" and _is_dwelling(v)
        for place in _after(v, "in")
        if place.ent_type_ in _PLACE_LABELS
    )
    if family.place_attribute and (any(map(_placed, values)) or any(dwelling_cities)):
        return family.place_attribute
    if family.multi_valued and value is not None:
        if family.attribute == "allergy":  # "allergic to peanuts": the value is what one is allergic to
            value = next((token for token in values if token.dep_ in ("pobj", "xcomp")), value)
        if value.pos_ == "PROPN":  # "my dog Rex": the kind is the family's word before the name
            value = next((c for c in value.children if c.dep_ == "compound" and token_lemma(c) in family.words), value)
        elif family.attribute not in _HAD_FAMILIES and token_lemma(value) not in family.words:
            # "a pottery class": the pastime is the family's word in it
            value = next(
                (c for c in value.children if c.dep_ in ("compound", "amod") and token_lemma(c) in family.words), value
            )
        if token_lemma(value) not in FAMILY_NOUNS:
            # the family's own word as written when the lemmatizer took it for a verb ("bouldering")
            written = token_lemma(value) not in family.words and value.lower_ in family.words
            named = value.lower_ if written else token_lemma(value)
            return f"{family.attribute}: {named}"
    return family.attribute


def _schedule(clause: Token, subject: Token | None, objects: list[Token], span: Span) -> str | None:
    """A recurring event's day or time: moved ("the call moved to Mondays") or stated as a
    recurrence ("a standup every Tuesday"); a one-off plan ("the book club next Tuesday") is not."""
    recurring = bool(_RECURRENCE.search(span.text))
    if (
        subject is not None
        and token_lemma(subject) in SCHEDULE_WORDS
        and (token_lemma(clause) in _SCHEDULE_PREDICATES or recurring)
    ):
        return f"schedule: {scheduled_event(subject)}"
    if subject is not None and moved_to_a_time(subject):
        return f"schedule: {scheduled_event(subject)}"  # "salsa's moved to thursdays" (ADR 0131)
    if recurring:
        for token in objects:
            if token_lemma(token) in SCHEDULE_WORDS:
                return f"schedule: {scheduled_event(token)}"
        if token_lemma(clause) in _TALK_PREDICATES:
            return "schedule: call"  # "now we talk every other Wednesday at lunchtime"
    return None


def scheduled_event(token: Token) -> str:
    """The recurring event a schedule word or a moved name stands for: the activity a slot
    is given to ("my salsa class", "football practice": salsa, football), else the word itself
    ("the call", "book club": call, club; "salsa"). Two classes are two schedules, and a class
    named by its activity is the one its activity's move moves (ADR 0132)."""
    lemma = token_lemma(token)
    if lemma in _ACTIVITY_SLOTS:
        activity = [
            child
            for child in token.lefts
            if child.dep_ == "compound"
            and child.pos_ in ("NOUN", "PROPN")
            and child.ent_type_ not in ("DATE", "TIME", "PERSON")
            and not _WEEK_TIMES.match(child.lower_)
            and token_lemma(child) not in _SLOT_QUALIFIERS
            and child.lower_ not in _SLOT_QUALIFIERS
        ]
        if activity:
            return token_lemma(activity[-1])
    return lemma


_RECURRENCE = re.compile(
    r"\b(?:every|each|weekly|monthly|daily|nightly|fortnightly|biweekly|of\s+(?:the|every)\s+month"
    rf"|(?:{weekday_alternation()})s|(?:{weekday_alternation()})\s+(?:mornings|afternoons|evenings|nights)"
    r"|weekdays|weekends|(?:a|per)\s+(?:day|week|month))\b",
    re.IGNORECASE,
)


def with_schedule_referent(span: Span, before: str) -> str | None:
    """ "We moved it to Saturdays", said after "Does your Sunday call still work?": the
    sentence with "it" replaced by the recurring event the text before it names last ("We moved
    the call to Saturdays"), when the sentence moves "it" to a recurring time; else None."""
    predicate = _predicate(span.root)
    if token_lemma(predicate) not in _SCHEDULE_PREDICATES or not _RECURRENCE.search(span.text):
        return None
    return _it_replaced(span, predicate, _IT_DEPS, _schedules_named(before))


def _schedules_named(text: str) -> list[str]:
    """The recurring events a text names, in order, as "the call" or, for a slot given to an
    activity, with the word before it ("Is your salsa class still on Tuesdays?": "the salsa
    class"), so that what replaces "it" names the same schedule (ADR 0132)."""
    words = _words_before(text)
    named = []
    for i, word in enumerate(words):
        singular = word[:-2] if word.endswith("sses") else word if word.endswith("ss") else word.removesuffix("s")
        if singular not in SCHEDULE_WORDS:
            continue
        before = words[i - 1] if i else ""
        qualified = (
            before
            and singular in _ACTIVITY_SLOTS
            and before not in _NOT_ACTIVITIES | _SLOT_QUALIFIERS
            and not _WEEK_TIMES.match(before)
        )
        named.append(f"the {before} {singular}" if qualified else f"the {singular}")
    return named


def with_activity_taken_up(attribute: str, previous: Span | None) -> str:
    """ "schedule: class", read from "beginners class on tuesdays, 8pm" after "started salsa!!"
    in the same message: the schedule of the activity the sentence before takes up ("schedule:
    salsa"); any other attribute, or a slot with no such sentence before it, as it is (ADR 0132)."""
    family, _, event = attribute.partition(": ")
    if family != "schedule" or event not in _ACTIVITY_SLOTS or previous is None:
        return attribute
    taken_up = [
        child
        for verb in previous
        if token_lemma(verb) in _ACTIVITY_STARTS
        and (token_lemma(verb) != "take" or any(c.lower_ == "up" for c in verb.children))
        for child in verb.children
        if _names_an_activity(child)
    ]
    return f"schedule: {taken_up[-1].lower_}" if taken_up else attribute


_ACTIVITY_STARTS = frozenset({"start", "begin", "join", "take", "try"})


def _names_an_activity(token: Token) -> bool:
    """What one takes up, as a noun ("started pottery") or a bare word the tagger took for a
    verb ("started salsa!!"), not "started to cry", "started crying", a person, a place or a
    schedule word."""
    # a verb's form the word does not have ("salsa" tagged as a gerund) is a noun mistaken
    bare = token.dep_ == "xcomp" and not list(token.children) and not token.lower_.endswith(("ing", "ed"))
    return (
        ((token.dep_ == "dobj" and token.pos_ in ("NOUN", "PROPN")) or bare)
        and token.ent_type_ not in ("PERSON", "GPE", "ORG")
        and token_lemma(token) not in SCHEDULE_WORDS
    )


# Words before a slot that do not name its activity ("your class", "the weekly class").
_NOT_ACTIVITIES = frozenset(
    "a an the my your his her our their its this that these those weekly daily next last every each new old "
    "first same usual regular".split()
)


_IT_DEPS = frozenset({"dobj", "nsubj", "nsubjpass"})


def with_ended_referent(span: Span, before: str, question: Span | None = None) -> str | None:
    """ "I sold it last month", said after "Do you still have the car?": the sentence with
    "it" replaced by the last of the speaker's things the text before it names ("I sold the
    car last month"), when the sentence ends "it" (quit, leave, cancel, sell, give up …); else
    None. Failing a thing, the name of a place or thing the question before asks about ("Do
    you still go to Basic-Fit?" — "I cancelled Basic-Fit"): the stored fact naming it says
    what it is."""
    predicate = _predicate(span.root)
    if token_lemma(predicate) not in _LEAVE_PREDICATES:
        return None
    things = [f"the {word}" for word in _words_before(before) if _ended_thing(word)]
    named = things or [name for name in [_asked_thing(question)] if name]
    return _it_replaced(span, predicate, frozenset({"dobj"}), named)


def _asked_thing(question: Span | None) -> str | None:
    """The last proper name a question asks about as an object ("Do you still go to
    Basic-Fit?"), not a person's."""
    if question is None:
        return None
    names = [t for t in question if t.pos_ == "PROPN" and t.dep_ in ("dobj", "pobj") and t.ent_type_ != "PERSON"]
    return _name_words(names[-1]) if names else None


def _name_words(token: Token) -> str:
    """A proper name with the names before it, as written: "Holmes Place", "Basic-Fit"."""
    compounds = [c for c in token.lefts if c.dep_ == "compound" and c.pos_ == "PROPN"]
    return token.doc[compounds[0].i if compounds else token.i : token.i + 1].text


def _words_before(text: str) -> list[str]:
    return re.findall(r"[a-z-]+", text.lower())


def _it_replaced(span: Span, predicate: Token, deps: frozenset[str], named: list[str]) -> str | None:
    """The sentence with the predicate's "it" (in one of ``deps``) replaced by the last of
    ``named``; None when there is no such "it" or nothing named."""
    it = next((c for c in predicate.children if c.dep_ in deps and c.lower_ == "it"), None)
    if it is None or not named:
        return None
    start = it.idx - span.start_char
    return f"{span.text[:start]}{named[-1]}{span.text[start + len(it.text) :]}"


def _ended_thing(word: str) -> bool:
    """A word of a family whose value one can end: a car, a gym membership, a diet, a job."""
    family = family_of_word(word)
    return family is not None and family.attribute in _ENDED_FAMILIES


_ENDED_FAMILIES = frozenset({"car", "bike", "gym", "job", "diet", "drink", "hobby", "volunteering", "tutor", "doctor"})


# Verbs by which the speaker ends a thing of theirs they call by name ("We lost Moose", "I sold
# the Caravan", "I cancelled Holmes Place"), and the particles some need ("gave Rex away").
_ENDING_PREDICATES = frozenset({"lose", "sell", "cancel", "quit", "leave", "scrap", "rehome", "ditch", "bury"})
_ENDING_PARTICLES = MappingProxyType({"give": "away", "put": "down"})
# What one says of a named thing that is no more ("Moose died", "the Caravan was stolen").
_GONE_PASSIVES = frozenset({"sell", "steal", "total", "scrap", "rehome"})


def ended_name(span: Span) -> str | None:
    """The name of a thing of the speaker's that the sentence ends, as written: "We lost Moose
    on Thursday" → Moose, "I sold the Caravan", "I cancelled Holmes Place", "Moose passed
    away", "The Caravan is gone", "the Caravan was stolen"; else None. Which fact it ends is
    the stored fact that names it (the sentence alone does not say what Moose is)."""
    for clause in _clauses(span):
        predicate = _predicate(clause)
        subject = _subject(clause)
        had_to = token_lemma(clause) == "have" and clause.tag_ == "VBD"  # "We had to put Moose down": done
        if (_is_unrealised(clause) and not had_to) or _is_unrealised(predicate):
            continue  # "I'll sell the Caravan before the move": a plan
        if subject is not None and is_first_person(subject) and _ends_object(predicate):
            named = next((c for c in predicate.children if c.dep_ == "dobj" and _is_named(c)), None)
        elif subject is not None and subject.pos_ == "PROPN" and _is_gone(predicate):
            named = subject
        elif subject is not None and is_first_person(subject) and _no_longer(predicate):
            named = next((n for n in _after(predicate, "at", "with") if _is_named(n)), None)
        else:
            continue
        if named is not None and not _possessed_by_speaker(named):
            return _name_words(named)
    return None


def _is_named(token: Token) -> bool:
    """A proper name, or a capitalized word the recognizer holds in a name the tagger read as
    another word ("I left Spotify": a verb)."""
    return token.pos_ == "PROPN" or (token.is_title and token.ent_type_ != "" and token.i > token.sent.start)


def _ends_object(predicate: Token) -> bool:
    lemma = token_lemma(predicate)
    particle = _ENDING_PARTICLES.get(lemma)
    if particle is not None:
        return any(child.lower_ == particle for child in predicate.children)
    return lemma in _ENDING_PREDICATES


def _is_gone(predicate: Token) -> bool:
    """ "… died", "… passed away", "… is gone", "… was sold"."""
    lemma = token_lemma(predicate)
    if lemma == "die" or (lemma == "pass" and any(child.lower_ == "away" for child in predicate.children)):
        return True
    if lemma == "be":
        return any(child.dep_ == "acomp" and child.lower_ in ("gone", "dead") for child in predicate.children)
    passive = any(child.dep_ == "auxpass" for child in predicate.children)
    return passive and lemma in _GONE_PASSIVES


def is_possession(attribute: str) -> bool:
    """An attribute of a thing one has and can lose: a pet, a car, a gym membership."""
    family = family_named(attribute.partition(":")[0])
    return family is not None and (family.attribute == "pet" or family.attribute in _ENDED_FAMILIES)


def listed_with(token: Token) -> list[Token]:
    """The words listed with ``token``: its conjuncts, and those the parser hung on a name set
    beside it ("My girlfriend, Toby and I": "I" is a conjunct of "Toby"; ADRs 0141, 0149)."""
    return [*token.conjuncts, *(listed for c in token.children if c.dep_ == "appos" for listed in c.conjuncts)]


class PetIntroduction(NamedTuple):
    statement: str  # what the sentence says, as a statement of having: "I have a cat named Pickle"
    named_before: bool  # the name is in the sentence before ("And meet Pickle! A … cat")


def introduced_pet(span: Span, previous: Span | None) -> PetIntroduction | None:
    """A pet introduced without a verb of having: "Meet Biscuit, our new puppy!", "Say hi to
    Luna, a rescue greyhound.", "And meet Pickle! A three-legged grey tabby cat …" (the name
    in the sentence before), or the speaker's own in the company of their home ("living in
    manchester w/ my cat"); else None."""
    # "Moose is a beagle": a sentence about the animal, not an introduction; but "… - meet Toby,
    # my puppy" names the speaker's own pet inside any sentence, unless it ends ("Rex, my old
    # dog, died") (ADR 0112)
    stated = any(token.dep_ in SUBJECT_DEPS for token in span)
    ending = any(_is_gone(_predicate(c)) or _ends_object(_predicate(c)) for c in _clauses(span))
    for token in span:
        family = family_of_word(token_lemma(token))
        if family is None or family.attribute != "pet" or token.pos_ != "NOUN":
            continue
        own = _possessed_by_speaker(token) and not ending
        if token.dep_ == "appos" and token.head.pos_ == "PROPN" and (own or not stated):
            return PetIntroduction(f"I have a {token_lemma(token)} named {token.head.text}", named_before=False)
        if own and token.dep_ == "pobj" and _word(token.head) == "with" and _lives_with(token.head):
            return PetIntroduction(f"I have a {token_lemma(token)}", named_before=False)
        if stated:
            continue
        if token.dep_ == "ROOT" and previous is not None and not any(t.dep_ in SUBJECT_DEPS for t in previous):
            name = next((t for t in previous if t.pos_ == "PROPN" and t.dep_ in ("dobj", "pobj")), None)
            if name is not None:  # "Meet Pickle! A … cat"
                return PetIntroduction(f"I have a {token_lemma(token)} named {name.text}", named_before=True)
    return None


def _lives_with(preposition: Token) -> bool:
    """ "with" the company of a home: "living in manchester w/ my cat", "we moved to Porto with
    our dog" (not "went hiking with my dogs")."""
    return token_lemma(preposition.head) in _HOME.predicates


# Conjunctions of a clause that states nothing as so: a comparison or a condition.
_UNASSERTED_MARKS = frozenset({"like", "if", "unless", "though"})
_ACCEPTING = re.compile(
    r"\b(?:said\s+yes|accepted|took\s+it|signed"
    # a start with its time: "…, start 7th july", "starting monday", "I start in May"
    r"|start(?:s|ing)?\s+(?:on\s+|in\s+|from\s+|next\s+|this\s+)?(?:\d|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar"
    r"|apr|may|jun|jul|aug|sep|oct|nov|dec|tomorrow|week|month))",
    re.IGNORECASE,
)
_OFFERED = frozenset({"job", "position", "role", "post"})


def accepted_offer(span: Span) -> str | None:
    """ "They offered me the senior test engineer job and I said yes!", "pebblebox offered me the
    analytics engineer job, start 7th july": the job the speaker was offered and accepted, or
    starts at a time, as a statement of taking it ("I took the senior test engineer job");
    else None (an offer alone is not the speaker's job)."""
    for token in span:
        if token_lemma(token) != "offer" or not any(
            c.dep_ in ("dative", "dobj") and c.lower_ == "me" for c in token.children
        ):
            continue
        job = next((c for c in token.children if c.dep_ == "dobj" and token_lemma(c) in _OFFERED), None)
        if job is not None and _ACCEPTING.search(span.doc[job.i : span.end].text):
            return f"I took {span.doc[job.left_edge.i : job.i + 1].text}"
    return None


def _previous_value(predicate: Token, span: Span) -> tuple[bool, str | None]:
    """Is the clause stated as a change, and which old value does it name?"""
    lemma = token_lemma(predicate)
    for child in predicate.children:
        if child.dep_ == "prep" and child.lower_ == "from" and lemma in _FROM_TO_PREDICATES:
            value = next((g for g in child.children if g.dep_ == "pobj"), None)
            if value is not None:
                return True, _text(value)
    if lemma in _SWAP_PREDICATES or lemma in _LEAVE_PREDICATES:
        value = next((child for child in predicate.children if child.dep_ == "dobj"), None)
        return True, _text(value) if value is not None else None
    old = replaced_value(span.text)
    if old is not None:
        return True, old
    negated = any(child.dep_ == "neg" for child in predicate.children)
    if _CHANGE_MARKERS.search(span.text) or (negated and "now" in span.text.lower()):
        dobj = next((child for child in predicate.children if child.dep_ == "dobj"), None)
        return True, _text(dobj) if negated and dobj is not None else None
    if lemma in _BECOME_PREDICATES and any(child.dep_ in ("acomp", "attr", "oprd") for child in predicate.children):
        return True, None  # "I've gone vegan", "I became a nurse"
    if lemma in _SCHEDULE_PREDICATES and any(
        child.dep_ == "prep" and child.lower_ == "to" for child in predicate.children
    ):
        return True, None  # "the call moved to Mondays"
    return False, None


# The old value runs to the end of its clause; a comma or point inside a number is part of it.
_INSTEAD_OF = re.compile(r"\b(?:instead\s+of|rather\s+than)\s+(?P<old>(?:[^,.;!?]|[,.](?=\d))+)", re.I)
_SWAP_PREDICATES = frozenset({"swap", "trade", "exchange", "replace"})
# "I swapped bouldering for pottery", "traded my Fiat for a Zoe", "replaced the choir with kayaking".
_SWAPPED = re.compile(
    r"\b(?:swap(?:ped)?|trad(?:e|ed)|exchang(?:e|ed)|replac(?:e|ed))\s+(?:my\s+|our\s+|the\s+)?"
    r"(?P<old>[^,.;!?]+?)\s+(?:for|with)\b",
    re.I,
)


def replaced_value(text: str) -> str | None:
    """The old value a sentence names as replaced: "980 euros instead of 1,100" → "1,100",
    "I swapped bouldering for a pottery class" → "bouldering"."""
    found = _INSTEAD_OF.search(text) or _SWAPPED.search(text)
    return " ".join(found["old"].split()) if found else None


# One more of a kind: "another pup", "a second cat", "one more dog", "a 2nd rabbit".
_ONE_MORE = r"(?:another|a\s+(?:second|third|fourth|fifth|2nd|3rd|4th|5th)|one\s+more)\s+(?:[\w-]+\s+){0,2}?"


def adds_a_value(attribute: str, text: str) -> bool:
    """A value of a family of several one has, stated as one more of its kind ("I adopted
    another pup", "we got a second cat"): of the key "pet: pup", a sentence naming one more pup
    joins the current pup instead of replacing it. Not a pastime ("another pottery class" is
    more of the same one)."""
    family, colon, kind = attribute.partition(": ")
    if not colon or family not in _HAD_FAMILIES or not kind:
        return False
    return re.search(rf"\b{_ONE_MORE}{re.escape(kind)}", text, re.IGNORECASE) is not None


def _text(token: Token) -> str:
    """The value's words up to its head, without a determiner: "the bakery life" → "bakery life"."""
    start = token.left_edge.i
    while start < token.i and token.doc[start].dep_ in ("det", "poss"):
        start += 1
    return token.doc[start : token.i + 1].text


def _introduces(clause: Token, subject: Token | None) -> bool:
    """A first-person "be" whose attribute is a person's name: "I'm Kwame", "I am Ana Silva";
    not "I'm Kwame's sister", "I'm not Bob" or "I'm Canadian"."""
    if subject is None or subject.lower_ != "i" or token_lemma(clause) != "be":
        return False
    if any(child.dep_ == "neg" for child in clause.children):
        return False
    named = next((child for child in clause.children if child.dep_ == "attr"), None)
    return (
        named is not None
        and named.pos_ == "PROPN"
        and named.ent_type_ in ("PERSON", "")
        and not any(child.dep_ in ("poss", "det", "case", "prep") for child in named.children)
    )


# How a speaker's own name statement says the name ("I'm Kwame", "my name is Nadia Haddad"):
# the cue in any case, the name capitalized, not a possessive ("I'm Kwame's sister").
_NAME_WORD = r"[A-Z][\w-]*(?:['’][A-Z][\w-]*)?"
_STATED_NAME = re.compile(
    r"(?i:\b(?:I(?:['’]m|\s+am)(?:\s+called)?|my\s+name\s+is|call\s+me|name['’]s))\s+"
    rf"(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD})*)(?!['’]s\b|[\w'’])"
)


def stated_name(text: str) -> str | None:
    """The name a speaker's name statement gives ("user: Hi, I'm Kwame." → "Kwame"), if any."""
    match = _STATED_NAME.search(text)
    return match["name"] if match else None


def _family_reading(clause: Token, subject: Token | None, span: Span) -> tuple[str, Token] | None:
    """The attribute a clause states and its predicate. A verb that shares its subject with the
    verb before it ("I cancelled the gym and joined Basic-Fit") states a family's fact by its
    words or a place, not by a verb alone: "join" is as often a gym as a job."""
    by_verb = not _shares_subject(clause)
    if _introduces(clause, subject):
        return "name", clause  # "I'm Kwame", "I am Ana Silva"
    if subject is not None and _trip_to_work(subject):
        return "commute", clause  # "my bike ride to work is 20 mins now"
    if token_lemma(clause) in COMMUTE_PREDICATES and any(
        child.dep_ in ("xcomp", "advcl")  # "I cycle to work now" may be parsed as a purpose
        and token_lemma(child) == "work"
        and not any(g.dep_ == "prt" for g in child.children)
        for child in clause.children
    ):
        return "commute", clause  # "I take the bus to work"
    if _is_place_of_origin(clause):
        return "birthplace", clause  # "Kumasi, born and raised", "I grew up in Kumasi"
    predicate = _predicate(clause)
    if token_lemma(predicate) in _PREFERENCE_PREDICATES:
        return None  # likes are many at once: "love hiking" and "love painting" are two facts
    objects = [predicate] if _state_fragment(predicate) or _gone_doing(predicate) else _objects(predicate)
    schedule = _schedule(predicate, subject, objects, span)
    if schedule:
        return schedule, predicate
    lemma = token_lemma(predicate)
    if reports_to(predicate):
        return "manager", predicate  # "I report to Annika Lund now"
    phrasal = _phrasal_reading(predicate, lemma)
    if phrasal is not None:
        return phrasal, predicate
    if lemma in EVENT_VERBS and _RECURRENCE.search(span.text):
        return f"schedule: {EVENT_VERBS[lemma]}", predicate  # "we rehearse on Wednesday nights"
    if lemma in COMMUTE_PREDICATES and any(
        child.dep_ == "prep" and child.lower_ == "to" and any(token_lemma(g) in WORKPLACES for g in child.children)
        for child in predicate.children
    ):
        return "commute", predicate  # "I ride my bike to the office"
    if lemma == "be" and any(
        child.dep_ == "prep" and child.lower_ == "from" and not _dated(child) for child in predicate.children
    ):
        return "origin", predicate  # "I'm from Seattle", not "my laptop is from 2017"
    home = _home_reading(predicate, subject) or _based_in(predicate) or _dwelling_reading(predicate, subject)
    if home is not None:
        return home, predicate
    group = _pastime_group(predicate)
    if group is not None:
        # One key per group ("hobby: choir", "hobby: league"): a pastime joins the others, and
        # leaving the league replaces curling in it, not the choir.
        return f"hobby: {token_lemma(group)}", predicate  # "I joined a community choir", "quit the league"
    if _drives_own(predicate):
        return "car", predicate  # "I drive there in my old Dodge Grand Caravan"
    if _studied_at(predicate):
        return "studies", predicate  # "I did electrical engineering at the University of Manitoba"
    studied = any(  # "I've started a PhD at Oxford": a school, not a workplace (ADR 0113)
        family_of_word(word) is _STUDIES for obj in objects if obj.dep_ == "dobj" for word in _words_of(obj)
    )
    if lemma in _WORK_PREDICATES and not studied and not any(child.dep_ == "prt" for child in predicate.children):
        workplace = _workplace(predicate)
        if workplace is not None:
            return "job", predicate  # "Joon started at the hospital", "she teaches at a school"
    if lemma in _HOME.predicates and any(map(_placed, _after(predicate, "in", "to", "into"))):
        # "I live in Lyon with my partner Theo", "we moved to Porto with our cat": a move or a
        # home with its company states the home, not the partner or the pet
        objects = [token for token in objects if not (token.dep_ == "pobj" and _word(token.head) == "with")]
    owned = [
        token
        for token in [subject, *objects]
        if token is not None and (_possessed_by_speaker(token) or (token == subject and _is_routine(token)))
    ]
    values = [*owned, *(token for token in objects if token not in owned)]
    for value in values:
        if not _is_value(value, owned):
            continue
        if lemma in _SWAP_PREDICATES and value.dep_ == "dobj":
            incoming = _swapped_in(value, predicate)
            if incoming is None:
                continue
            value = incoming
        for word in _words_of(value):
            family = family_of_word(word)
            if family is None:
                continue
            if family.attribute == "pet" and value.pos_ != "PROPN" and word not in (token_lemma(value), value.lower_):
                continue  # "a dog park", "a new dog bed", "the pet store": no animal; "my dog Rex" is (ADR 0111)
            if value in owned and family.attribute == "job" and word not in JOB_ITSELF:
                return owned_name(value), predicate  # "my manager", "Rafael is my manager"
            if family.attribute in _HAD_FAMILIES and value not in owned and not _had(lemma, value, subject):
                continue  # "I walk dogs at the shelter": an animal one does something with, no pet
            if family.attribute in _THING_FAMILIES and (
                lemma not in _THING_PREDICATES
                or (lemma == "be" and not (_names_what_it_is(predicate, value) or _is_gone(predicate)))
            ):
                continue  # "I washed my car", "the car is in the garage": the same car
            if family.attribute == "job" and value not in owned and not _states_work(predicate, value):
                continue  # "we need restaurants that …", "we need a lawyer": no job of the speaker's
            if family.attribute == "relationship" and word == token_lemma(value) and is_qualified_role(value):
                continue  # "my climbing partner": no partner
            if family.attribute == "relationship" and any(c.lower_ in _FIRST_PERSON for c in listed_with(value)):
                continue  # "My partner and I adopted a kitten": the kitten is the news (ADR 0113)
            if family.attribute == "team" and not any(child.pos_ == "PROPN" for child in value.children):
                continue  # "a fan of jazz", "your biggest fan": no team named
            if family.attribute in _PROVIDERS and value.dep_ in ("attr", "oprd") and value not in owned:
                # "she's a clinical instructor", "I'm a doctor now": what one is, not whom one has
                return "job", predicate
            return _attribute_of(family, value, values), predicate
    family = family_of_predicate(lemma)
    if family is None and lemma == "get" and any(c.lower_ == "up" for c in predicate.children):
        family = next(f for f in ATTRIBUTE_FAMILIES if f.attribute == "wake-up time")
    if family is not None and family.attribute == "birthplace" and _born_when_not_where(predicate):
        return "birthday", predicate  # "I was born on May 3rd, 1990", not where (ADR 0159)
    if family is not None and not _verb_states(family, predicate, values):
        return None
    if family is not None and (by_verb or (family.place_attribute and any(map(_is_place, values)))):
        return _attribute_of(family, values[0] if values else None, values), predicate
    return None


_STILL = frozenset({"still", "now", "officially"})


def _state_fragment(clause: Token) -> bool:
    """A verbless sentence that states what the speaker still or now is, or has anew: "Still a
    Jets fan, even out here.", "Still vegan, by the way.", "new job at pebblebox!"; what they
    have been since a time ("veggie since uni"); or an occupation where they hold it ("data
    analyst at corvid analytics", "nurse at st marys, mostly nights") or from when ("senior
    data analyst from monday")."""
    if clause != clause.sent.root or clause.pos_ not in ("NOUN", "ADJ", "PROPN") or _subject(clause) is not None:
        return False
    occupation = family_of_word(token_lemma(clause)) is _JOB and token_lemma(clause) not in JOB_ITSELF
    return any(
        (child.dep_ == "advmod" and child.lower_ in _STILL)
        or (child.dep_ == "amod" and child.lower_ == "new")
        or (child.dep_ == "prep" and child.lower_ == "since")
        or (occupation and child.dep_ == "prep" and child.lower_ in ("at", "for"))
        or (occupation and child.dep_ == "prep" and child.lower_ == "from" and _dated(child))  # "from monday"
        for child in clause.children
    )


def _born_when_not_where(predicate: Token) -> bool:
    """ "born on May 3rd, 1990", "born last week": a date beside "born" and no place."""
    dates = [c for c in predicate.subtree if c.ent_type_ == "DATE"]
    places = [c for c in predicate.subtree if c.ent_type_ in _PLACE_LABELS]
    return bool(dates) and not places


def _dated(preposition: Token) -> bool:
    return any(child.dep_ == "pobj" and child.ent_type_ == "DATE" for child in preposition.children)


def elided_speaker(clause: Token) -> bool:
    """A verb that opens the speaker's sentence without its subject, as chat drops "I": in the
    past ("Just moved into a new place in Denver!", "Started a new job at Stripe last week.",
    "Moved to Porto last month.", which the parser may tag as a participle), or going on and
    said to last ("Living in Porto now", "Been working at Stripe since May"; not "Working from
    home today"), and a verb joined to such a one ("Packed up and moved to Bristol"). An
    imperative's base form ("Meet Pimenta!") is no statement."""
    if _shares_subject(clause) and clause.head == clause.sent.root and clause.tag_ in ("VBD", "VBN"):
        return elided_speaker(clause.head)
    # "big news: moved to porto last week!!": the verb after a lead-in opens the sentence
    lead_in = _lead_in_colon(clause.sent) if clause in lead_in_verbs(clause.sent) else None
    if (clause != clause.sent.root and lead_in is None) or _subject(clause) is not None:
        return False
    if clause.tag_ == "VBD":
        return True
    start = clause.sent.start if lead_in is None else lead_in.i + 1
    opens = all(token.dep_ in ("advmod", "intj", "punct", "aux", "auxpass") for token in clause.doc[start : clause.i])
    auxiliaries = [child.lower_ for child in clause.children if child.dep_ in ("aux", "auxpass")]
    if clause.tag_ == "VBN":
        return opens and auxiliaries in ([], ["got"])  # "Moved to Porto", "work news: got promoted!!"
    lasting = any(child.dep_ == "advmod" and child.lower_ in _STILL for child in clause.children)
    lasting = lasting or _sees_someone(clause)  # "ok so. seeing someone."
    return clause.tag_ == "VBG" and opens and auxiliaries in ([], ["been"]) and (lasting or auxiliaries == ["been"])


def _lead_in_colon(span: Span) -> Token | None:
    """The colon that ends a lead-in the sentence's root names ("Big news: …")."""
    return next((token for token in span if token.text == ":" and token.head == span.root), None)


def lead_in_verbs(span: Span) -> list[Token]:
    """The verbs after a lead-in the sentence's root names, which the parser hangs off the
    lead-in's noun: "Big news: Tiago moved to Berlin", "big news: moved to porto"."""
    colon = _lead_in_colon(span)
    if colon is None:
        return []
    return [child for child in span.root.children if child.i > colon.i and child.pos_ in ("VERB", "AUX")]


def _is_place_of_origin(clause: Token) -> bool:
    """A place stated as where one was born or grew up: "Kumasi, born and raised" (a place the
    verbless sentence describes) or "I grew up in Kumasi"."""
    if _is_place(clause) and clause.dep_ == "ROOT":
        return any(child.dep_ == "acl" and token_lemma(child) == "bear" for child in clause.children)
    particles = {child.lower_ for child in clause.children if child.dep_ == "prt"}
    return (
        token_lemma(clause) == "grow"
        and "up" in particles
        and any(
            child.dep_ == "prep"
            and child.lower_ == "in"
            and any(g.dep_ == "pobj" and _is_place(g) for g in child.children)
            for child in clause.children
        )
    )


def _phrasal_reading(predicate: Token, lemma: str) -> str | None:
    """Facts a verb states only with its particle or voice, or a bare number states: "I got
    laid off", "I was fired" (the job ends), "we broke up", "I've been seeing someone" (the
    relationship), "I'm 35 now", "I turned 35" (the age)."""
    particles = {child.lower_ for child in predicate.children if child.dep_ == "prt"}
    passive = any(child.dep_ in ("auxpass", "nsubjpass") for child in predicate.children)
    if (lemma == "lay" and "off" in particles) or (lemma == "fire" and passive):
        return "job"
    if (lemma in ("break", "split") and "up" in particles) or _sees_someone(predicate):
        return "relationship"
    things = [c for c in predicate.children if c.dep_ == "dobj" and c.lower_ == "things"]
    if lemma == "end" and things and _is_partner([*_after(predicate, "with"), *_after(things[0], "with")]):
        return "relationship"  # "ended things with callum on sunday", not "… with the agency"
    if lemma == "engage" and passive and all(c.lower_ == "to" for c in predicate.children if c.dep_ == "prep"):
        return "relationship"  # "I just got engaged", "we got engaged to …"; not "engaged in a project" (ADR 0113)
    adverbs = {child.lower_ for child in predicate.children if child.dep_ == "advmod"}
    if lemma == "get" and {"back", "together"} <= adverbs:
        return "relationship"  # "Tom and I got back together" (ADR 0113)
    if lemma == "be" and _no_longer(predicate) and any(g.ent_type_ == "PERSON" for g in _after(predicate, "with")):
        return "relationship"  # "I'm not with Tom anymore"
    if lemma == "go" and any(g.pos_ == "PROPN" for g in _after(predicate, "by")):
        return "name"  # "I've started going by Alex"
    fluent = [g for c in predicate.children if c.dep_ == "acomp" and c.lower_ == "fluent" for g in _after(c, "in")]
    if lemma == "be" and fluent and fluent[0].pos_ == "PROPN":
        return f"language: {normalize_attribute(fluent[0].text)}"  # "I'm fluent in Portuguese now"
    if lemma in ("accept", "take") and any(
        token_lemma(offer) == "offer"
        and any(g.pos_ == "PROPN" and g.ent_type_ != "PERSON" for g in _after(offer, "from"))
        for offer in predicate.children
        if offer.dep_ == "dobj"
    ):
        return "job"  # "I accepted an offer from Stripe"
    if lemma == "drop" and any(
        family_of_word(word) is _STUDIES
        for out in predicate.children
        if out.dep_ in ("prep", "prt") and out.lower_ == "out"
        for value in _after(out, "of")
        for word in _words_of(value)
    ):
        return "studies"  # "I dropped out of the MBA program"
    if lemma == "be" and any(
        child.dep_ == "attr" and child.like_num and not list(child.children) for child in predicate.children
    ):
        return "age"
    if (
        lemma == "turn"
        and not _after(predicate, "into")
        and any(
            child.dep_ in ("dobj", "attr", "oprd", "npadvmod") and child.like_num and not list(child.children)
            for child in predicate.children
        )
    ):
        return "age"  # "I turned 35 last week" (ADR 0113)
    return None


def _is_partner(tokens: list[Token]) -> bool:
    """Some token names a partner: a person's name, a bare lowercase word chat writes a name as
    ("callum"), or a relationship word ("my boyfriend"); not "the agency" or "my landlord"."""
    return any(
        t.ent_type_ == "PERSON"
        or family_of_word(token_lemma(t)) is _RELATIONSHIP
        or (t.pos_ in ("PROPN", "NOUN") and not any(c.dep_ in ("det", "poss") for c in t.children))
        for t in tokens
    )


def _after(token: Token, *prepositions: str) -> list[Token]:
    """The objects of the prepositions under ``token``: "with Tom" → Tom."""
    return [
        grandchild
        for child in token.children
        if child.dep_ == "prep" and _word(child) in prepositions
        for grandchild in child.children
        if grandchild.dep_ == "pobj"
    ]


_WEEK_TIMES = re.compile(
    rf"^(?:{weekday_alternation()})s?$|^(?:weekday|weekend|morning|afternoon|evening|night|lunchtime)s?$"
)


def moved_to_a_time(subject: Token) -> bool:
    """The subject of a move to another day or time of the week, when it can name a recurring
    event (a noun or an untagged name; not a pronoun, a person, a place or an organization):
    "salsa's moved to thursdays", "Book club moved to Saturday mornings" (ADR 0131). What
    moves to a time is such an event, not someone or something that changes home."""
    clause = subject.head
    return (
        subject.dep_ in ("nsubj", "nsubjpass")
        and subject.pos_ in ("NOUN", "PROPN")
        and subject.ent_type_ not in ("PERSON", "GPE", "ORG")
        and token_lemma(clause) in _SCHEDULE_PREDICATES
        and any(_moves_to_time(child) for child in clause.children)
    )


def _moves_to_time(child: Token) -> bool:
    """ "to thursdays", "to Saturday mornings", "to the weekend": a prepositional phrase of a
    move whose object is a day or time of the week."""
    return (
        child.dep_ == "prep"
        and _word(child) in ("to", "until", "till")
        and any(
            grandchild.dep_ == "pobj" and any(_WEEK_TIMES.match(token.lower_) for token in grandchild.subtree)
            for grandchild in child.children
        )
    )


def _has_particle(verb: Token, particle: str) -> bool:
    return any(child.dep_ == "prt" and child.lower_ == particle for child in verb.children)


def _no_longer(predicate: Token) -> bool:
    """ "not … anymore", "no longer": a state that has ended."""
    children = {child.lower_ for child in predicate.children}
    negated = bool(children & {"not", "n't"}) and bool(children & {"anymore", "any"})
    return negated or "longer" in children


def _sees_someone(predicate: Token) -> bool:
    """ "I've been seeing someone for three weeks", "I started seeing Ines": dating; not "I'm
    seeing Tom tomorrow" (a meeting)."""
    if token_lemma(predicate) != "see" or predicate.tag_ != "VBG":
        return False
    if any(token.lower_ in ("someone", "somebody") for token in predicate.subtree):
        return True
    ongoing = token_lemma(predicate.head) in ("start", "stop") or any(c.lower_ == "been" for c in predicate.children)
    return ongoing and any(c.dep_ == "dobj" and c.pos_ == "PROPN" for c in predicate.children)


def is_thing_word(word: str) -> bool:
    """A word of a family of things one has one of: "ThinkPad", "Tesla", "phone"."""
    family = family_of_word(word.lower())
    return family is not None and family.attribute in _THING_FAMILIES


def _names_what_it_is(copula: Token, value: Token) -> bool:
    """ "My car is a Toyota Corolla", "I'm car-free"; not "I'm on my phone" or "the car is in
    the garage"."""
    return value.lower_ == "free" or any(child.dep_ == "attr" for child in copula.children)


def _had(lemma: str, value: Token, subject: Token | None) -> bool:
    """A having verb's own object or complement, had by someone who can have it: "we adopted a
    greyhound", "I'm allergic"; not "I'm not ready for another dog" (what one is ready for) or
    "Halifax has great fish" (a place has no pets)."""
    had = (lemma in HAVING_PREDICATES and value.dep_ in ("dobj", "attr", "oprd", "acomp")) or _brought_home(value)
    return had and (subject is None or subject.ent_type_ not in _NOT_HOLDERS)


def _brought_home(value: Token) -> bool:
    """What one came or brought home with: "came home w/ a kitten", "we brought home a puppy"."""
    verb = value.head.head if value.dep_ == "pobj" and _word(value.head) == "with" else value.head
    taken = value.dep_ == "dobj" or verb is not value.head
    return (
        taken
        and token_lemma(verb) in ("come", "bring")
        and any(child.dep_ == "advmod" and child.lower_ == "home" for child in verb.children)
    )


_NOT_HOLDERS = frozenset({"GPE", "LOC", "FAC", "ORG"})


def _verb_states(family: AttributeFamily, predicate: Token, values: list[Token]) -> bool:
    """Whether a family's verb, with no word of the family beside it, states the fact: "call"
    names only as "call me Sam" or "I'm called Kwame" (not "I call my mum", "we called it
    off"); "move" is a move of home only without an object ("we moved it to Saturdays" is
    not); "live on" is a home only on a street or a place ("I live on takeout" is not), and
    "settle" only in a place ("we settled in Porto"; not "we settled on a name"); "join"
    is a job only with an employer's name ("I joined a community choir" is not); "work on" is
    an effort, not a job ("we can work on that")."""
    children = list(predicate.children)
    lemma = token_lemma(predicate)
    if family.attribute == "job":
        if lemma in ("join", "quit", "leave") and values and not any(map(_names_a_workplace, values)):
            return False  # "I joined a choir", "I quit smoking", "I left the party early"
        if lemma in ("hire", "employ") and any(c.dep_ == "dobj" and c.lower_ not in _SPEAKER_OBJECTS for c in children):
            return False  # "I hired a gardener": the speaker employs someone
        if lemma != "work":
            return True
        if any(c.dep_ == "prt" for c in children) or any(c.dep_ == "prep" and c.lower_ == "on" for c in children):
            return False  # "I worked out this morning", "we can work on that"
        # where or as what one works ("I work at a bakery", "worked as a nurse"); else only the
        # present states a job ("I work nights"), not a day's work ("worked late yesterday")
        return predicate.tag_ in ("VBP", "VBZ") or any(
            c.dep_ == "prep" and c.lower_ in ("at", "for", "as", "in", "from") for c in children
        )
    if family.attribute == "name":
        # "I named him Buddy", "we call the dog Rex": a name given to another (ADR 0111)
        if any(c.dep_ == "dobj" and c.pos_ != "PROPN" and c.lower_ not in _SPEAKER_OBJECTS for c in children):
            return False
        return any(c.dep_ in ("oprd", "nsubjpass") for c in children) or any(
            c.dep_ == "dobj" and c.pos_ == "PROPN" for c in children
        )
    if family.attribute == "language":  # "we speak Twi", not "we spoke about it"
        return any(c.dep_ == "dobj" and (c.pos_ == "PROPN" or c.ent_type_ in ("LANGUAGE", "NORP")) for c in children)
    if family.attribute == "home":
        if any(c.dep_ == "dobj" and c.lower_ not in ("house", "home") for c in children):
            return False
        if any(map(_moves_to_time, children)):
            return False  # "salsa moved to Thursdays": a recurring event's new day (ADR 0131)
        preps = [c for c in children if c.dep_ == "prep"]
        if lemma == "live" and preps and all(c.lower_ == "on" for c in preps):
            return any(_is_place(v) or token_lemma(v) in _STREET_WORDS for v in values)
        if lemma == "settle":  # "we settled in Porto", not "we settled on a name" or "I settled in fine"
            return any(_placed(v) for v in values if v.head.lower_ in ("in", "into"))
    return True


_SPEAKER_OBJECTS = frozenset({"me", "us"})


def _names_a_workplace(value: Token) -> bool:
    """An object that can be an employer: a name ("joined Loomwork") or an organization, but
    not a group one joins for leisure ("joined the Granite Curling Club")."""
    if any(word in _LEISURE_GROUPS for word in _words_of(value)):
        return False
    return value.pos_ == "PROPN" or value.ent_type_ == "ORG"


_LEISURE_GROUPS = frozenset(
    "club choir league team band society association group class course orchestra church congregation".split()
)


# Groups one belongs to for a pastime, and the verbs of joining and leaving one.
_PASTIME_GROUPS = frozenset("club choir league band orchestra".split())
_MEMBERSHIP_PREDICATES = frozenset({"join", "quit", "leave"})


def _swapped_in(swapped: Token, predicate: Token) -> Token | None:
    """What came in for the object of a swap: "I swapped bouldering for a pottery class" →
    class; "replaced the choir with kayaking" → kayaking."""
    return next(
        (
            pobj
            for prep in [*swapped.children, *predicate.children]
            if prep.dep_ == "prep" and _word(prep) in ("for", "with")
            for pobj in prep.children
            if pobj.dep_ == "pobj"
        ),
        None,
    )


def _pastime_group(predicate: Token) -> Token | None:
    """The group of a pastime stated by its group: joining or leaving one ("I joined a
    community choir", "quit the Granite league") or taking part in one now ("I curl in a
    league", "I sing in a choir"); not a past or one-off visit ("we played in a band in college"
    is no fact of now)."""
    lemma = token_lemma(predicate)
    for child in predicate.children:
        if child.dep_ == "dobj" and lemma in _MEMBERSHIP_PREDICATES:
            groups = [child]
        elif child.dep_ == "prep" and child.lower_ == "in" and predicate.tag_ in ("VBP", "VBZ") and lemma != "be":
            groups = [g for g in child.children if g.dep_ == "pobj"]
        else:
            continue
        for group in groups:
            if token_lemma(group) in _PASTIME_GROUPS and group.pos_ == "NOUN":
                return group
    return None


def _speakers_own(subject: Token | None) -> bool:
    """A clause without a subject ("Turned 40 today") or with the speaker as it ("I", "we")."""
    return subject is None or subject.lower_ in _FIRST_PERSON


def _is_relative(token: Token) -> bool:
    """A word for a relative ("mum", "brother", "landlord"), read as its canonical relation."""
    return SAME_WORD.get(token_lemma(token), token_lemma(token)) in _RELATIONS


def _had_gone(clause: Token, subject: Token) -> bool:
    """ "Our cat died on Sunday", "my dog Rex passed away", "my bike got stolen", "my laptop
    died": the speaker no longer has the pet or the thing."""
    lemma = token_lemma(clause)
    died = lemma == "die" or (lemma == "pass" and any(c.lower_ == "away" for c in clause.children))
    families = {f.attribute for f in map(family_of_word, _words_of(subject)) if f is not None}
    return (died and "pet" in families) or (bool(families & _THING_FAMILIES) and (lemma == "die" or _is_gone(clause)))


_STUDYING_PREDICATES = frozenset({"do", "study", "major", "graduate", "read"})


def _studied_at(predicate: Token) -> bool:
    """A subject done or studied at a school: "I did engineering at the University of
    Manitoba", "she graduated from McGill University"."""
    lemma = token_lemma(predicate)
    if lemma not in _STUDYING_PREDICATES:
        return False
    return any(
        child.dep_ == "prep"
        and child.lower_ in ("at", "from")
        and any(
            g.dep_ == "pobj"
            and (
                family_of_word(token_lemma(g)) is _STUDIES
                or (lemma in _SCHOOLED and g.ent_type_ == "ORG")  # "I graduated from MIT"
            )
            for g in child.children
        )
        for child in predicate.children
    )


# Verbs that say a named organization is a school ("graduated from MIT"); "did" or "read" at
# one says no such thing.
_SCHOOLED = frozenset({"study", "major", "graduate"})


def _drives_own(predicate: Token) -> bool:
    """ "I drive there in my old Dodge", "I now drive a Tesla": the vehicle one drives is one's
    car, whatever its make (a name, or one's own); "I don't drive anymore", "I stopped
    driving": one has none."""
    if token_lemma(predicate) != "drive":
        return False
    if not any(child.dep_ == "dobj" for child in predicate.children) and (
        token_lemma(predicate.head) in ("stop", "quit")
        or (any(child.dep_ == "neg" for child in predicate.children) and _CHANGE_MARKERS.search(predicate.sent.text))
    ):
        return True
    return any(
        child.dep_ == "dobj"
        and child.pos_ == "PROPN"
        and (_possessed_by_speaker(child) or any(g.dep_ == "det" and g.lower_ in ("a", "an") for g in child.children))
        for child in predicate.children
    ) or any(
        child.dep_ == "prep"
        and child.lower_ == "in"
        and any(g.dep_ == "pobj" and _possessed_by_speaker(g) for g in child.children)
        for child in predicate.children
    )


def _states_work(predicate: Token, value: Token) -> bool:
    """A job word states the speaker's work as what they are ("I'm a nurse", "I became the
    lead"), after a verb of working, joining or leaving ("I quit the bakery"), or as a role
    ("hired as a designer"); as the object of any other verb it is only a thing or a person."""
    lemma = token_lemma(predicate)
    if lemma in ("hire", "employ") and value.dep_ == "dobj":
        return False  # "we hired a gardener": whom the speaker employs ("I got hired" is a job)
    if lemma in _WORK_PREDICATES or any(lemma in f.predicates for f in ATTRIBUTE_FAMILIES if f.attribute == "job"):
        return True
    if value.dep_ in ("attr", "acomp", "oprd") or (value.dep_ == "pobj" and value.head.lower_ == "as"):
        return True
    if value == predicate and _state_fragment(value):
        return True  # "Still a nurse at the infirmary", "new job at pebblebox!"
    if lemma in _GAINING_PREDICATES and value.dep_ == "dobj" and token_lemma(value) in ("job", "position", "role"):
        return True  # "Dan got a job at NASA"
    return lemma in _LEAVE_PREDICATES or lemma in _BECOME_PREDICATES


_GAINING_PREDICATES = frozenset({"get", "land", "find", "take", "accept", "start"})


# Heads of an address inside a city: "I live on Agricola Street" names no city.
_STREET_WORDS = frozenset(
    "street st road rd avenue ave lane boulevard drive way square place terrace crescent court rue".split()
)


# Words for where one lives beside the home family's own: "place" only as a dwelling the
# speaker gets or is in ("we got a new place in Leith"), never as a venue ("a new place to eat").
_DWELLINGS = frozenset({"place", "condo", "sublet", "townhouse"})
# Verbs by which one gets a dwelling: "we got a new place in Leith", "I signed for the North
# End place", "we're renting a place in Dartmouth", "I signed a lease on a flat in Leith".
_DWELLING_PREDICATES = frozenset({"get", "find", "buy", "rent", "lease", "sign", "land", "snag", "take"})


def _is_dwelling(token: Token) -> bool:
    """A home word ("flat", "apartment", "house"), or "place" and the like, as a dwelling: not
    qualified by what it is for ("a place to eat", "the place that does ramen")."""
    lemma = token_lemma(token)
    if lemma in _DWELLINGS:  # "a place for brunch" is a venue
        return not any(
            child.dep_ in ("acl", "relcl", "advcl") or (child.dep_ == "prep" and child.lower_ == "for")
            for child in token.children
        )
    return lemma in _HOME.words and not any(child.dep_ in ("acl", "relcl", "advcl") for child in token.children)


def _names_after(token: Token, *prepositions: str) -> list[Token]:
    """The proper names a preposition under ``token`` takes ("in Leith", "on Agricola Street")."""
    return [place for place in _after(token, *prepositions) if place.pos_ == "PROPN"]


def _dwelling_place(dwelling: Token) -> Token | None:
    """Where a dwelling is, as a name: "a place in the North End" → End, "the North End place"
    → End; None when the sentence does not name it."""
    named = _names_after(dwelling, "in", "on")
    compounds = [child for child in dwelling.children if child.dep_ == "compound" and child.pos_ == "PROPN"]
    return [*named, *compounds[-1:], None][0]


def _dwelling_key(where: Token) -> str:
    """The home city when a dwelling's place is tagged a city or country ("a flat in Leith"),
    else the home: a part of a city ("the North End") is no answer to "which city"."""
    return "home city" if where.ent_type_ == "GPE" else "home"


def _gotten_dwellings(predicate: Token) -> list[Token]:
    """What a verb of getting a dwelling gets: its object ("got a new place"), what a lease is
    on ("signed a lease on a place"), what one signs for ("signed for the North End place")."""
    found: list[Token] = []
    for child in predicate.children:
        if child.dep_ == "dobj":
            found += [child, *(g for p in child.children if p.dep_ == "prep" for g in p.children if g.dep_ == "pobj")]
        elif child.dep_ == "prep" and child.lower_ in ("for", "on", "into"):
            found += [g for g in child.children if g.dep_ == "pobj"]
    return found


# A price by the month: "850 a month", "£1,050 per month", "900 quid a month", "700 pcm".
_MONTHLY = re.compile(
    r"\d[\d,.]*k?\s*(?:quid|euros?|dollars?|pounds?|bucks)?\s*(?:(?:a|per|/|each)\s*month\b|pcm\b)", re.I
)
_RENTING = frozenset({"rent", "lease"})


def pays_rent(span: Span) -> bool:
    """The speaker's dwelling rented or taken at a price by the month, a fact of the rent beside
    whatever else the sentence states: "we rent a little terrace …, 850 a month", "got a one
    bed in bedminster, 1,050 a month", "We found a flat in Leith for £950 a month"; not a car
    ("I lease a car for 300 a month")."""
    if not _MONTHLY.search(span.text):
        return False  # no price by the month: most sentences, read twice per write
    for clause in _clauses(span):
        subject = _subject(clause)
        if not _is_about(subject, clause, None) or not _MONTHLY.search(_subtree_text(clause)):
            continue
        lemma = token_lemma(clause)
        gotten = _gotten_dwellings(clause)
        vehicle = any(family_of_word(token_lemma(thing)) in _VEHICLES for thing in gotten)
        if (lemma in _RENTING and not vehicle) or (
            lemma in _DWELLING_PREDICATES and any(_is_dwelling(d) or _counted_rooms(d) for d in gotten)
        ):
            return True
    return False


def _subtree_text(token: Token) -> str:
    return token.doc[token.left_edge.i : token.right_edge.i + 1].text


def _counted_rooms(token: Token) -> bool:
    """ "a one bed", "a 2 bedroom": a dwelling named by its bedrooms."""
    return token_lemma(token) in ("bed", "bedroom") and any(child.dep_ == "nummod" for child in token.children)


def _is_new(token: Token) -> bool:
    return any(child.dep_ == "amod" and child.lower_ == "new" for child in token.children)


def _dwelling_reading(predicate: Token, subject: Token | None) -> str | None:
    """A dwelling the speaker now has, named by where it is (ADR 0110): one the speaker gets
    ("We just got a new place in the North End", "I signed for the North End place", "We're
    renting a place in Dartmouth now", "I signed a lease on a flat in Leith"); the speaker's
    own dwelling said to be somewhere ("My new place is in the North End"); the speaker in a
    new dwelling somewhere ("I'm in a new flat in Leith")."""
    if subject is None:
        return None
    lemma = token_lemma(predicate)
    speaker = subject.lower_ in _FIRST_PERSON
    where: Token | None = None
    if speaker and lemma in _DWELLING_PREDICATES:
        gotten = [d for d in _gotten_dwellings(predicate) if _is_dwelling(d)]
        where = next((place for d in gotten if (place := _dwelling_place(d)) is not None), None)
    elif speaker and lemma == "be":  # "I'm in a new flat in Leith"
        new = [dwelling for dwelling in _after(predicate, "in") if _is_dwelling(dwelling) and _is_new(dwelling)]
        if new:
            where = [*_names_after(predicate, "in"), _dwelling_place(new[0])][0]
    elif lemma == "be" and _possessed_by_speaker(subject) and _is_dwelling(subject):  # "My new place is in …"
        where = [*_names_after(predicate, "in"), None][0]
    return None if where is None else _dwelling_key(where)


def _home_reading(predicate: Token, subject: Token | None) -> str | None:
    """ "Porto is home" (a place stated as home), "we're in the Croix-Rousse now", "Tiago is
    still in Madrid" (a stay stated as lasting): the home, or the home city when it is a place."""
    if token_lemma(predicate) != "be":
        return None
    if subject is not None and any(
        child.dep_ == "attr" and token_lemma(child) == "home" and not list(child.children)
        for child in predicate.children
    ):
        return "home city" if _is_place(subject) else "home"
    lasting = any(child.dep_ == "advmod" and child.lower_ in ("now", "still") for child in predicate.children)
    places = [
        grandchild
        for child in predicate.children
        if child.dep_ == "prep" and child.lower_ == "in"
        for grandchild in child.children
        if grandchild.dep_ == "pobj" and grandchild.pos_ == "PROPN"
    ]
    if lasting and places:
        return "home city" if any(token.ent_type_ in _PLACE_LABELS for token in places) else "home"
    return None


def _based_in(predicate: Token) -> str | None:
    """ "I'm based in Denver these days": where one is based is one's home (city)."""
    if token_lemma(predicate) != "base":
        return None
    outs = [child for child in predicate.children if child.dep_ == "prep" and child.lower_ == "out"]
    places = _after(predicate, "in") + [place for out in outs for place in _after(out, "of")]  # "based out of Austin"
    if not places:
        return None
    return "home city" if any(map(_placed, places)) else "home"


# Names of kinds no one works at: "I work at Christmas", "I teach in Lyon" (a city is a home's).
_NO_WORKPLACE_ENTITIES = frozenset({"GPE", "LOC", "DATE", "TIME", "NORP"})


def _workplace(predicate: Token) -> Token | None:
    """The place a verb of working names: a job word, an organization or a name the recognizer
    left unlabelled ("I teach at Riverside High", ADR 0151) after "at" or "for"."""
    for child in predicate.children:
        if child.dep_ != "prep" or child.lower_ not in ("at", "for"):
            continue
        for value in child.children:
            if value.dep_ != "pobj":
                continue
            family = next((f for word in _words_of(value) if (f := family_of_word(word)) is not None), None)
            if (family is not None and family.attribute in ("job", "studies")) or value.ent_type_ == "ORG":
                return value
            if value.pos_ == "PROPN" and value.ent_type_ not in _NO_WORKPLACE_ENTITIES:
                return value
    return None


def _is_value(token: Token, owned: list[Token]) -> bool:
    """Whether a word can name the fact: the object, complement or owned noun, or a role ("as a
    designer"), not a circumstance ("I climbed at the gym" is no fact about a gym)."""
    if token in owned or token.dep_ != "pobj":
        return True
    preposition = token.head
    if preposition.lower_ in ("from", "to") and token_lemma(preposition.head) in _FROM_TO_PREDICATES:
        return True  # "switched from coffee to tea"
    if preposition.lower_ == "for" and token_lemma(preposition.head) in _FOR_VALUE_PREDICATES:
        return True  # "I pay for a gym membership", "I signed up for the Lyon 10k"
    if _brought_home(token):
        return True  # "came home with a kitten"
    if preposition.lower_ in ("off", "on") and token_lemma(preposition.head) == "be":
        return True  # "I'm off caffeine now" (ADR 0113), "I'm on a keto diet now" (ADR 0158)
    if preposition.lower_ == "on" and token_lemma(preposition.head) == "give" and _has_particle(preposition.head, "up"):
        return True  # "I gave up on the guitar" (ADR 0152)
    return preposition.lower_ == "as" or preposition.head.dep_ == "acomp"  # "allergic to peanuts"


def _owned_reading(clause: Token, subject: Token | None) -> str | None:
    """ "My favourite film is Amélie", "my cello is old": the attribute is what the speaker owns
    (no family's: such a sentence alone does not make a fact of the speaker)."""
    if token_lemma(clause) != "be":
        return None
    objects = _objects(clause)
    owned = [token for token in [subject, *objects] if token is not None and _possessed_by_speaker(token)]
    return owned_name(owned[0]) if owned else None


def owned_name(token: Token) -> str:
    """What the speaker's possession is called: "my best friend" → "best friend"."""
    modifiers = [
        child.lower_
        for child in token.children
        if child.dep_ == "compound" or (child.dep_ == "amod" and child.lower_ in _NAMING_ADJECTIVES)
    ]
    return normalize_attribute(" ".join([*modifiers, token_lemma(token)]))


_NAMING_ADJECTIVES = frozenset({"favourite", "favorite", "best", "older", "younger", "little", "big", "eldest"})


def _generic(predicate: Token) -> str:
    """The predicate lemma (with its particle) and the object's head: "love hiking", "have tutor"."""
    parts = [token_lemma(predicate), *(child.lower_ for child in predicate.children if child.dep_ == "prt")]
    objects = _objects(predicate)
    if objects:
        parts.append(token_lemma(objects[0]))
    return normalize_attribute(" ".join(parts))


def read_fact(span: Span, *, about: Token | None = None) -> FactReading:
    """The key attribute of the fact ``span`` states about ``about`` (a named entity's token), or
    about the speaker when ``about`` is None. The first clause, left to right, whose subject is
    that entity (or "I", "we", "my …") and whose words belong to a family decides; else the
    predicate-and-object fallback of the first such clause (or of the sentence's root)."""
    return _read(span, about) or _fallback(span.root, span)


def speaker_fact(span: Span) -> FactReading | None:
    """The reading of a sentence that states a family attribute of the speaker ("We moved to
    Lyon", "our standup moved to Wednesdays", "Rafael is my manager now") or a habit of theirs
    ("I run 5 km every morning"), else None."""
    reading = _read(span, None, families_only=True)
    if reading is None or (reading.attribute in _PASSING and not _COMMITMENT.search(span.text)):
        return None
    return reading


_PASSING = frozenset(family.attribute for family in ATTRIBUTE_FAMILIES if not family.lasting)


_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})


def exclaims_own_news(span: Span) -> bool:
    """A sentence of the speaker's own news that chat ends in "??" or "?!" for surprise, in the
    order of a statement: "also i own a car again??", "we're moving to Leeds?!". Not a question
    asked the other way round ("do i need a car??"), with a question word ("why am i awake??")
    or about someone else ("you're coming??")."""
    text = span.text.rstrip()
    marks = text[len(text.rstrip("?!")) :]
    if len(marks) < 2 or "?" not in marks:
        return False
    root = span.root
    subject = _subject(root)
    return (
        subject is not None
        and subject.lower_ in ("i", "we")
        and subject.i < root.i
        and not any(child.dep_ in ("aux", "auxpass") and child.i < subject.i for child in root.children)
        and not any(token.tag_ in _WH_TAGS for token in span)
    )


def is_asked(span: Span) -> bool:
    """The sentence asks: it ends in "?", and is not the speaker's own news that chat ends in
    "??" (:func:`exclaims_own_news`)."""
    return span.text.rstrip().endswith("?") and not exclaims_own_news(span)


def owned_statement(span: Span) -> bool:
    """Whether the sentence names what one of the speaker's own things or people is, in the
    present: "My best friend is Maria now", "My laptop is a MacBook" (keyed by the thing,
    :func:`owned_name`, so a new value supersedes the old). Not a past ("My weekend was a
    blast"), a quality ("My team is amazing"), a relative's fact ("My mum is a nurse") or
    where a thing is ("My notes are at the library")."""
    if is_asked(span):
        return False
    if _named_as_owned(span) is not None:
        return True  # "Priya is my best friend now"
    root = span.root
    subject = _subject(root)
    if token_lemma(root) != "be" or root.tag_ not in ("VBZ", "VBP") or subject is None:
        return False
    if not _possessed_by_speaker(subject) or _is_relative(subject) or subject.ent_type_:
        return False
    return any(child.dep_ == "attr" and child.pos_ in ("NOUN", "PROPN", "NUM") for child in root.children)


_BELIEF = frozenset({"sure", "think", "guess", "reckon", "suppose", "bet"})

# What someone can be to the speaker that no family keys ("Priya is my best friend now").
PERSON_ROLES = frozenset("friend bestie buddy mate mentor colleague coworker hero".split())


def _named_as_owned(span: Span) -> Token | None:
    """The speaker's own thing or person a present "be" names someone as, the other way round:
    "Priya is my best friend now", "pretty sure she's my best friend now" (the root's, or the
    clause a root of belief holds); not a relative ("she's my sister" is the relative's fact)."""
    held = (token for token in span if token.dep_ == "ccomp" and token_lemma(token.head) in _BELIEF)
    root = next(held, span.root)
    subject = _subject(root)
    if token_lemma(root) != "be" or root.tag_ not in ("VBZ", "VBP") or subject is None:
        return None
    owned = next(
        (
            child
            for child in root.children
            if child.dep_ == "attr" and _possessed_by_speaker(child) and not _is_relative(child) and not child.ent_type_
        ),
        None,
    )
    if owned is None or subject.lower_ in _THIRD_PERSON:
        return owned
    # a name as a person's: the tagger takes "Dance" in "Dance is my stress fix" for one too
    named = subject.ent_type_ == "PERSON" or (subject.pos_ == "PROPN" and not subject.ent_type_)
    return owned if named and token_lemma(owned) in PERSON_ROLES else None


def owned_by_pronoun(span: Span) -> bool:
    """ "she's my best friend now": the speaker names someone their own by a pronoun, so the
    name is in the sentence before ("priya from work has been amazing.")."""
    owned = _named_as_owned(span)
    subject = _subject(owned.head) if owned is not None else None
    return subject is not None and subject.lower_ in _THIRD_PERSON


@dataclass(frozen=True)
class ClauseFact:
    """One fact of a sentence that states several ("We're in the Croix-Rousse now, and the rent
    is 1,100 euros a month"): its reading and the words of its own clause."""

    reading: FactReading
    text: str


def clause_facts(span: Span, *, about: Token | None = None) -> list[ClauseFact]:
    """The speaker's family facts of ``span`` (or those of ``about``, a person the sentence
    speaks of: "My sister moved to Leeds and works at the hospital"), one per clause that states
    a fact of another key, each read on its own words; a sentence of one fact (or of one key)
    gives none. A clause keeps what it governs but the other fact clauses and their conjunction."""
    clauses = [clause for clause, _ in _family_readings(span, about, families_only=True)]
    if len(clauses) < 2:
        return []
    found: dict[str, ClauseFact] = {}
    for clause in clauses:
        kept = _clause_tokens(clause, clauses)
        words = clause.doc[kept[0].i : kept[-1].i + 1] if kept else span
        reading = next((r for c, r in _family_readings(words, about, families_only=True) if c.i == clause.i), None)
        if reading is None or reading.attribute in _PASSING or reading.attribute in found:
            continue
        text = "".join(token.text_with_ws for token in kept).strip()
        found[reading.attribute] = ClauseFact(reading=reading, text=f"{text[:1].upper()}{text[1:]}.")
    return list(found.values()) if len(found) > 1 else []


def _clause_tokens(clause: Token, clauses: list[Token]) -> list[Token]:
    """The clause's words without the other fact clauses inside it, their conjunction and the
    punctuation at its edges."""
    others = {t.i for other in clauses if other.i != clause.i and _within(other, clause) for t in other.subtree}
    kept = [t for t in clause.subtree if t.i not in others]
    while kept and (kept[-1].dep_ == "cc" or kept[-1].is_punct):
        kept.pop()
    while kept and (kept[0].dep_ == "cc" or kept[0].is_punct):
        kept.pop(0)
    return kept


def _family_readings(span: Span, about: Token | None, *, families_only: bool) -> Iterator[tuple[Token, FactReading]]:
    """The clauses of ``span`` about ``about`` (or the speaker) that state a family's fact, left
    to right, with their readings."""
    for clause in _clauses(span):
        subject = _subject(clause)
        if not _is_about(subject, clause, about) or (
            families_only
            and subject is None
            and not (_is_place_of_origin(clause) or elided_speaker(clause) or _state_fragment(clause))
        ):
            continue  # a sentence without a subject is the speaker's only as these say
        if _is_past_habit(clause):
            continue  # "I used to eat a francesinha": a former value, not the current one
        if any(child.dep_ == "mark" and child.lower_ in _UNASSERTED_MARKS for child in clause.children):
            continue  # "she corrects me like I'm six", "if I move to Lyon": nothing stated
        found = _family_reading(clause, subject, span)
        if found is not None and found[0] == "age" and about is None and not _speakers_own(subject):
            continue  # "My car is 10 years old", "my boss is 60": not the speaker's age (ADR 0153)
        if found is not None:
            attribute, predicate = found
            if _is_unrealised(clause) or _is_unrealised(predicate):
                # "I'll have to leave the bakery": a plan of its own key, not the job's new value
                yield clause, FactReading(attribute=f"{PLAN}{attribute}", from_family=True)
                continue
            changed, previous = _previous_value(predicate, span)
            yield clause, FactReading(attribute=attribute, from_family=True, changed=changed, previous=previous)


def _read(span: Span, about: Token | None, *, families_only: bool = False) -> FactReading | None:
    for _, reading in _family_readings(span, about, families_only=families_only):
        return reading
    if about is None and _appointed(span):
        return FactReading(attribute="job", from_family=True, changed=True)
    given = _given_thing(span) if about is None else None
    if given is not None:
        return FactReading(attribute=given, from_family=True, changed=True)
    named = None if about is not None or families_only else _named_as_owned(span)
    if named is not None:
        changed, previous = _previous_value(named.head, span)
        return FactReading(attribute=owned_name(named), from_family=False, changed=changed, previous=previous)
    first = next(
        (
            clause
            for clause in _clauses(span)
            if _is_about(subject := _subject(clause), clause, about) and not (families_only and subject is None)
        ),
        None,
    )
    if first is None or (families_only and not _is_habit(first, span)):
        return None
    owned = _owned_reading(first, _subject(first))
    if owned is not None:
        changed, previous = _previous_value(first, span)
        return FactReading(attribute=owned, from_family=False, changed=changed, previous=previous)
    return _fallback(first, span)


_APPOINTING = frozenset({"make", "promote", "hire", "appoint", "name"})


def _appointed(span: Span) -> bool:
    """A job the speaker was given, stated by what someone else did: "they made me senior
    analytics engineer", "They promoted me to team lead", "Globex hired me as a designer"."""
    for clause in _clauses(span):
        if token_lemma(clause) not in _APPOINTING or _is_unrealised(clause):
            continue
        roles = [child for child in clause.children if child.dep_ in ("oprd", "ccomp", "xcomp")]
        roles += _after(clause, "to", "as")
        speaker = any(c.dep_ == "dobj" and c.lower_ in _SPEAKER_OBJECTS for c in clause.children) or any(
            c.dep_ == "nsubj" and c.lower_ in _SPEAKER_OBJECTS for role in roles for c in role.children
        )  # "made me engineer" is parsed as a small clause whose subject is "me"
        if speaker and any(family_of_word(word) is _JOB for role in roles for word in _words_of(role)):
            return True
    return False


_GIVING = frozenset({"give", "lend", "hand"})


def _given_thing(span: Span) -> str | None:
    """The family of a thing the speaker was given, stated by what someone else did: "work gave
    me a macbook pro", "my parents gave us their old car"."""
    for clause in _clauses(span):
        if token_lemma(clause) not in _GIVING or _is_unrealised(clause):
            continue
        if not any(c.dep_ in ("dative", "iobj") and c.lower_ in _SPEAKER_OBJECTS for c in clause.children):
            continue
        for thing in (c for c in clause.children if c.dep_ == "dobj"):
            families = (family_of_word(word) for word in _words_of(thing))
            given = next((f.attribute for f in families if f is not None and f.attribute in _THING_FAMILIES), None)
            if given is not None:
                return given
    return None


def _fallback(clause: Token, span: Span) -> FactReading:
    predicate = _predicate(clause)
    changed, previous = _previous_value(predicate, span)
    return FactReading(attribute=_generic(predicate), from_family=False, changed=changed, previous=previous)


def _clauses(span: Span) -> Iterator[Token]:
    """Verbs and copulas of the sentence, left to right: the root, every other one with a
    subject (the parser's root is not always the main clause), and a verb after a lead-in."""
    root = span.root
    lead = lead_in_verbs(span)  # "big news: moved to porto"
    for token in span:
        if (
            token.i == root.i
            or token in lead
            or (
                (token.pos_ in ("VERB", "AUX") or _work_taken_for_noun(token))
                and (any(child.dep_ in SUBJECT_DEPS for child in token.children) or _shares_subject(token))
            )
        ):
            yield token


def _is_about(subject: Token | None, clause: Token, about: Token | None) -> bool:
    if subject is None:
        # "Meet Pimenta!", "Kumasi, born and raised": the speaker's sentence
        return about is None and (
            elided_speaker(clause)
            or (
                clause == clause.sent.root
                and (clause.pos_ in ("VERB", "AUX") or _is_place_of_origin(clause) or _state_fragment(clause))
            )
        )
    if about is not None:
        return _within(about, subject) or _within(subject, about)  # "Omar" in "my brother Omar"
    if subject.lower_ in _FIRST_PERSON or any(token.lower_ in _FIRST_PERSON for token in listed_with(subject)):
        return True  # "I", "we", "Joon and I", "My girlfriend, Toby and I"
    copula = token_lemma(clause) == "be"
    if _possessed_by_speaker(subject):
        # "my birthday is …", "our standup moved …", "my alarm goes off at 4:30"; not "my
        # brother lives …" or "my sister is a nurse", facts about them
        if _had_gone(clause, subject):
            return True  # "my dog Rex passed away", "my bike got stolen": the speaker has it no more
        if _is_relative(subject) or subject.ent_type_ == "PERSON" or any(map(_is_relative, subject.children)):
            return False
        return copula or token_lemma(subject) in SCHEDULE_WORDS or _is_routine(subject)
    bare = not any(child.dep_ in ("det", "poss") for child in subject.children)
    if copula and (
        (_is_routine(subject) and any(child.lower_ == "the" and child.dep_ == "det" for child in subject.children))
        or (_trip_to_work(subject) and bare)  # chat's "bike ride to work is 20 mins now"
        or any(child.dep_ == "attr" and token_lemma(child) == "home" for child in clause.children)
    ):
        # "the rent is 750 euros a month", "Porto is home"; not "he says the rent is fine"
        return not any(
            t.dep_ in SUBJECT_DEPS and (t.lower_ in _THIRD_PERSON or t.pos_ == "PROPN")
            for t in clause.sent
            if t.head != clause
        )
    # "the call moved to Mondays", "salsa's moved to thursdays", "Rafael is my manager": the
    # speaker's own event or relation
    return (
        token_lemma(subject) in SCHEDULE_WORDS
        or moved_to_a_time(subject)
        or (copula and any(child.dep_ == "attr" and _possessed_by_speaker(child) for child in clause.children))
    )


def _is_routine(token: Token) -> bool:
    """A word for one of the speaker's own things or routines ("alarm", "rent", "commute"), or
    the way there and back ("the drive to work")."""
    return _trip_to_work(token) or any(
        family is not None and family.attribute in _ROUTINE_FAMILIES for family in map(family_of_word, _words_of(token))
    )


# People named by their relation to someone ("my mum", "Kwame's mother"), by the word their
# fact key names them by: (Kwame's mother, home city). A partner or a manager is not among
# them: who they are is a fact of the speaker's own (relationship, manager).
_RELATIONS = frozenset(
    "mother father grandmother grandfather sister brother son daughter aunt uncle cousin niece nephew roommate "
    "flatmate landlord landlady neighbour neighbor".split()
)


def _trip_to_work(token: Token) -> bool:
    """A journey to one's work: "my bike ride to work", "the drive to the office"."""
    return (
        token.pos_ == "NOUN"
        and token_lemma(token) in _TRIPS
        and any(
            child.dep_ == "prep" and child.lower_ == "to" and any(token_lemma(g) in WORKPLACES for g in child.children)
            for child in token.children
        )
    )


def relative_name(owner: str, token: Token) -> str | None:
    """The key name of someone named only by their relation to ``owner``: "Kwame's mother" for
    "my mum" said by Kwame or "Kwame's mum" asked; None for another word, or for a relative
    with a name of their own ("my brother Omar": Omar)."""
    lemma = token.lemma_.lower()
    relation = SAME_WORD.get(lemma, lemma)
    if relation not in _RELATIONS or any(c.dep_ in ("appos", "compound") and c.pos_ == "PROPN" for c in token.children):
        return None
    return f"{owner}'s {relation}"


# Relations one has one of: their name is the relative's "name"; of a sibling or a cousin,
# one of several ("name: kofi"), so a second brother does not replace the first.
_SINGLE_RELATIONS = frozenset({"mother", "father"})


def named_relatives(span: Span, owner: str) -> list[tuple[str, str]]:
    """The key names and name attributes of the speaker's relatives a sentence names ("my mum,
    Abena" → (Kwame's mother, name); "my big brother Kofi" → (Kwame's brother, name: kofi))."""
    named = []
    for token in span:
        if not _is_relative(token) or not _possessed_by_speaker(token):
            continue
        relation = SAME_WORD.get(token_lemma(token), token_lemma(token))
        name = next((c for c in token.children if c.dep_ in ("appos", "compound") and c.pos_ == "PROPN"), None)
        name = name or _name_given(token)
        if name is not None:
            attribute = "name" if relation in _SINGLE_RELATIONS else f"name: {normalize_attribute(name.text)}"
            named.append((f"{owner}'s {relation}", attribute))
    return named


def _name_given(relative: Token) -> Token | None:
    """The name "my brother's name is Omar" gives the relative: the one its name is."""
    name = relative.head
    if relative.dep_ != "poss" or token_lemma(name) != "name" or name.dep_ not in SUBJECT_DEPS:
        return None
    if token_lemma(name.head) != "be":
        return None
    return next((c for c in name.head.children if c.dep_ == "attr" and c.pos_ == "PROPN"), None)


def asks_a_relatives_name(token: Token) -> bool:
    """ "Kwame's mother's name", "the name of Kwame's brother": the name of a relative."""
    relatives = [c for c in token.children if c.dep_ == "poss"] + [
        g for c in token.children if c.dep_ == "prep" and c.lower_ == "of" for g in c.children if g.dep_ == "pobj"
    ]
    return any(map(_is_relative, relatives))


def speaker_relatives(span: Span) -> list[Token]:
    """The subjects of a sentence that are the speaker's people named only by their relation
    ("my mum moved in with Kofi", "our landlord sold the building")."""
    return [
        token
        for token in span
        if token.dep_ in SUBJECT_DEPS and _possessed_by_speaker(token) and relative_name("", token) is not None
    ]


def of_a_relative(span: Span) -> bool:
    """The sentence's subject is one of the speaker's people named by their relation alone, or
    their name, not beside the speaker: "My brother is a teacher", "my dad is retired", "My
    brother's name is Omar" (not "My sister and I went hiking"). What it states is the
    relative's, not the speaker's."""
    subject = _subject(span.root)
    if subject is not None and token_lemma(subject) == "name":  # "My brother's name is Omar"
        subject = next((c for c in subject.children if c.dep_ == "poss" and _is_relative(c)), subject)
    return (
        subject is not None
        and (subject in speaker_relatives(span) or (subject.dep_ == "poss" and _possessed_by_speaker(subject)))
        and not any(c.lower_ in _FIRST_PERSON for c in listed_with(subject))
    )


def pronoun_subject(span: Span) -> Token | None:
    """The main clause's subject when it is "he" or "she", which names the person the previous
    sentence spoke of ("Tiago did it. He moved to Berlin")."""
    subject = _subject(span.root)
    return subject if subject is not None and subject.lower_ in _THIRD_PERSON else None


def _within(token: Token, outer: Token) -> bool:
    return outer.left_edge.i <= token.i <= outer.right_edge.i


def _is_habit(clause: Token, span: Span) -> bool:
    """ "I run 5 km every morning": the present tense and a recurrence state a lasting habit."""
    predicate = _predicate(clause)
    return (
        predicate.tag_ in ("VBP", "VBZ")
        and token_lemma(predicate) not in ("be", "have")
        and bool(_RECURRENCE.search(span.text))
    )


def _is_past_habit(clause: Token) -> bool:
    return token_lemma(clause) == "use" and _has_to_infinitive(clause)


def _has_to_infinitive(clause: Token) -> bool:
    return any(
        child.dep_ == "xcomp" and any(g.dep_ == "aux" and g.lower_ == "to" for g in child.children)
        for child in clause.children
    )


# Auxiliaries of a clause that is not (yet) true: a plan, a wish, a possibility or a duty.
_UNREALISED_AUX = frozenset({"will", "'ll", "wo", "shall", "would", "'d", "might", "may", "could", "should", "must"})
# Verbs whose to-infinitive is not yet done: "I want to move", "I have to leave the bakery".
_UNREALISED_VERBS = frozenset({"want", "plan", "hope", "need", "intend", "have", "wish", "try", "go", "mean", "aim"})


def _is_unrealised(clause: Token) -> bool:
    """A clause that states what may, should or will be, not what is: "I'll have to leave the
    bakery", "we're going to move to Berlin", "we're moving in March if the paperwork goes
    through". A plan is a fact of its own key (:data:`PLAN`); it does not replace the value."""
    if any(child.dep_ in ("aux", "auxpass") and child.lower_ in _UNREALISED_AUX for child in clause.children):
        return True
    if token_lemma(clause) in _UNREALISED_VERBS and _has_to_infinitive(clause):
        # "We had to rehome our dog": an obligation told in the past was met (ADR 0113)
        return not (token_lemma(clause) == "have" and clause.tag_ == "VBD")
    told_as_past = clause.tag_ == "VBD" or any(
        child.dep_ in ("aux", "auxpass") and child.tag_ == "VBD" for child in clause.children
    )
    return not told_as_past and any(  # "I was born in 1990 if you need it": a fact (ADR 0160)
        child.dep_ == "advcl" and any(g.dep_ == "mark" and g.lower_ in ("if", "unless") for g in child.children)
        for child in clause.children
    )


# Verbs of a recurring event that name the event ("the choir rehearses on Thursdays").
EVENT_VERBS: Mapping[str, str] = MappingProxyType({"rehearse": "rehearsal"})


def reports_to(predicate: Token) -> bool:
    """ "I report to Annika now": whom one reports to is one's manager."""
    return token_lemma(predicate) == "report" and any(
        child.dep_ == "prep" and child.lower_ == "to" for child in predicate.children
    )


def is_qualified_role(token: Token) -> bool:
    """A relationship word another noun qualifies ("business partner", "People Operations
    partner", "tennis partner"): a role someone plays, not one's partner."""
    return any(child.dep_ == "compound" and child.pos_ in ("NOUN", "PROPN") for child in token.children)


def family_named(word: str) -> AttributeFamily | None:
    """The family a question names by its attribute ("What is her relationship status?")."""
    return next((family for family in ATTRIBUTE_FAMILIES if family.attribute == word), None)
