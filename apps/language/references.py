"""A question's references to a numbered part of a text: "clause 17", "section 4.2", "article
12(b)", "order #4471", "step no. 3". Pure.

A long document pasted in many near-identical parts (a lease of 400 clauses, a manual of
numbered steps) is found by what a part says only when the parts say different things; when
they do not, the number is what tells them apart, and the words around it ("within 17 days")
must not stand in for it. A reference is a content word followed by an identifier, written the
way a text that has the part would write its heading: the word, then the number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.language.calendar import MONTH_AND_WEEKDAY_NAMES
from apps.language.words import fold, is_content_word, is_heading_line

MAX_REFERENCES = 3  # a question names few parts; more are read as a list, not references

# The word, an optional "no." / "number" / "#", then the identifier: digits with dotted,
# dashed or slashed parts ("4.2", "3-1", "12/2"), an optional bracketed letter or number
# ("12(b)") and an optional letter ("17a"). Not a number that goes on as a decimal or a time.
_IDENTIFIER = r"\d+(?:[.\-/]\d+)*(?:\([a-z0-9]{1,3}\))?[a-z]?"
_REFERENCE = re.compile(
    rf"(?<![\w'’])(?P<label>[^\W\d_]{{3,}})\s+(?:(?:no\.?|number|#)\s*)?#?(?P<identifier>{_IDENTIFIER})(?![\w:]|[.,]\d)",
    re.IGNORECASE,
)
# Words a number follows that make it a place in a sentence or an amount, not a part's number:
# prepositions ("within 17 days") and words of quantity, rank and time.
_PREPOSITIONS = frozenset(
    """
    about above across after against along among around at before behind below beneath beside
    between beyond by during except for from inside into near off onto outside over past per
    since than through till to toward towards under until upon via with within without
    """.split()
)
_QUANTITIES = frozenset(
    """
    almost approximately nearly least most top last first next age aged year years day days
    week weeks month months hour hours minute minutes second seconds times time percent
    """.split()
)
_NOT_LABELS = _PREPOSITIONS | _QUANTITIES
# A number followed by a unit or a plural noun is an amount ("Ana 30 years old", "3 kids").
_NEXT_WORD = re.compile(r"\s*(?P<word>[^\W\d_]+)")
_UNITS = frozenset("km kg cm mm mi lb lbs oz ml am pm old dollars euros".split())


def _an_amount(text: str, end: int) -> bool:
    """Whether the number ending at ``end`` is followed by a unit or a plural noun."""
    if not (following := _NEXT_WORD.match(text, end)):
        return False
    word = fold(following["word"])
    plural = len(word) > 3 and word.endswith("s") and not word.endswith("ss") and is_content_word(word)
    return word in _QUANTITIES or word in _UNITS or plural


def numbered_references(text: str) -> list[str]:
    """The references in ``text``, each as "word identifier" in lowercase ("clause 17"), in
    order, repeats once, at most ``MAX_REFERENCES`` (none when there are more)."""
    found: list[str] = []
    for match in _REFERENCE.finditer(text):
        label = fold(match["label"])
        if label in _NOT_LABELS or label in MONTH_AND_WEEKDAY_NAMES or not is_content_word(label):
            continue
        if _an_amount(text, match.end()):
            continue
        reference = f"{label} {match['identifier'].lower()}"
        if reference not in found:
            found.append(reference)
    return found if len(found) <= MAX_REFERENCES else []


def _heading(label: str, identifier: str) -> re.Pattern[str]:
    """The label (or its plural), an optional "no." / "number" / "#", then ``identifier`` (a
    regex), as a text writes a part's heading or cites it."""
    return re.compile(
        rf"(?<![\w'’]){re.escape(label)}s?\s+(?:(?:no\.?|number)\s*)?#?{identifier}(?![\w]|[.,]\d)", re.IGNORECASE
    )


def names_part(text: str, references: Sequence[str]) -> bool:
    """Whether ``text`` names one of the referenced parts ("Clause 17.", "deploy #1057")."""
    for reference in references:
        label, identifier = reference.split(" ", 1)
        if _heading(label, re.escape(identifier)).search(text):
            return True
    return False


def _a_heading(sentence: str, named: re.Pattern[str]) -> bool:
    """The sentence is the part's heading alone: nothing but the reference ("Clause 17."), or a
    line that opens with it and ends without a full stop ("## Section 4: Restoring a replica")."""
    if not re.search(r"\w", named.sub("", sentence)):
        return True
    return is_heading_line(sentence) and named.match(sentence.lstrip("#*>-• \t")) is not None


def referenced_part(sentences: Sequence[str], references: Sequence[str]) -> list[str]:
    """The sentences of the first part ``references`` name that ``sentences`` hold: the one
    naming it ("Clause 17." or "Under clause 17, …") and those after it, up to the next part of
    the same kind ("Clause 18."), a heading alone joined to the sentence after it; all of
    ``sentences`` when none names a referenced part."""
    for reference in references:
        label, identifier = reference.split(" ", 1)
        named, another = _heading(label, re.escape(identifier)), _heading(label, _IDENTIFIER)
        start = next((i for i, sentence in enumerate(sentences) if named.search(sentence)), None)
        if start is None:
            continue
        end = next((i for i in range(start + 1, len(sentences)) if another.search(sentences[i])), len(sentences))
        part = list(sentences[start:end])
        if len(part) > 1 and _a_heading(part[0], named):
            part[:2] = [f"{part[0]} {part[1]}"]  # a heading alone opens what it heads
        return part
    return list(sentences)
