"""How a semantic row reads as one statement about its name, and which stored fact a
statement naming its replaced value replaces. Framework-free.

A first-person fact's summary already opens with its speaker ("Nadia: I'm vegan"), so the
name is not put in front a second time: search results, labels and the row's vector all read
"Nadia: I'm vegan", never "Nadia: Nadia: I'm vegan". A fact one person stated about another
opens with both ("Nadia, about Tiago: He moved to Berlin").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeVar

K = TypeVar("K")


def semantic_statement(name: str | None, summary: str) -> str:
    if not name or summary.startswith(f"{name}:"):
        return summary
    about = _ABOUT.match(summary)
    if about is not None and about["name"] == name:  # "Nadia, about Tiago: …" already names both
        return summary
    return f"{name}: {summary}"


_ABOUT = re.compile(r"^[^:\n]{1,60}, about (?P<name>[^:\n]{1,60}): ")


def without_about(summary: str) -> str:
    """The words of a statement without the "Nadia, about Tiago: " that opens it."""
    return split_about(summary)[1]


def split_about(summary: str) -> tuple[str, str]:
    """Whom a statement that opens with "Nadia, about Tiago: " is about ("Tiago"; "" when it
    opens otherwise), and its words after that opening."""
    about = _ABOUT.match(summary)
    return (about["name"], summary[about.end() :]) if about is not None else ("", summary)


def about_prefix(speaker: str, name: str) -> str:
    """How a statement one person made about another opens: "Nadia, about Tiago: He moved to
    Berlin", never "Tiago: He moved to Berlin", which reads as Tiago's own words."""
    return f"{speaker}, about {name}: "


def replaced_fact(old_value: str, facts: Iterable[tuple[K, str]]) -> K | None:
    """Of ``facts`` (key, text), oldest first, the newest whose text names ``old_value`` as
    whole words ("1,100" in "the rent is 1,100 euros a month"): the fact that a sentence
    naming its replaced value ("980 a month instead of 1,100") gives a new value of."""
    words = old_value.casefold().split()
    if not words:
        return None
    pattern = re.compile(r"(?<![\w,.])" + r"\s+".join(re.escape(word) for word in words) + r"(?![\w]|[,.]\d)")
    found = None
    for key, text in facts:
        if pattern.search(text.casefold()):
            found = key
    return found
