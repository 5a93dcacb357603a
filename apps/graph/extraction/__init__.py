"""The ``local`` graph extractor: deterministic n-ary frames from spaCy's dependency parse.

Frames (docs/architecture.md, "Graph plane") come from clause heads:

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
the mention time (:mod:`apps.language.dates`), else the record's event time. A frame is
``planned`` under will/shall/going to/plan to/want to or a date after the mention time,
``done`` in the past tense, else it takes the record's status.

Repair (only additions) looks again at the sentences that hold a missing item: possessives
without a name ("my 2 kids" → ``have(possessor: Nadia, theme: kids)`` with the count), a
quoted phrase as the ``title`` of its clause, a clause left with one anchor completed by the
speaker as ``source`` when it holds a missing value, and a shared image as
``share(agent: speaker, depicts: ...)`` over its caption's noun phrases.

Same-entity decisions are conservative: an entity takes a candidate's name only when their
anchor keys are equal or its key is that of one of the candidate's aliases, and never when the two
names differ in a number, a date or a code.

Parses are cached per text, and ``extract_frames_many`` parses a batch in one pass; local
inference costs no tokens, so nothing is metered.
"""
