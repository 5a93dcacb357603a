"""A small two-session conversation written for these tests (not taken from any dataset)."""

from __future__ import annotations

from datetime import UTC, datetime

from apps.providers.schemas import InputMessage, WriterInput

SESSION_1 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday
SESSION_2 = datetime(2023, 5, 20, 10, 0, tzinfo=UTC)  # a Saturday

_TURNS: list[tuple[str, str, str, datetime, str]] = [
    ("s1-1", "user", "Nadia", SESSION_1, "Hi! How are you?"),
    (
        "s1-2",
        "user",
        "Nadia",
        SESSION_1,
        "I went to the Louvre museum yesterday with my 2 kids and we spent $45 on tickets. "
        "We will fly to Paris next month to see my sister Amelie.",
    ),
    (
        "s1-3",
        "user",
        "Tomas",
        SESSION_1,
        "I'm a nurse at St. Mary's Hospital and I love hiking. "
        "Last Saturday I ran 10 km in the Riverside Half Marathon.",
    ),
    (
        "s1-4",
        "user",
        "Tomas",
        SESSION_1,
        "Lake Tahoe is a freshwater lake in the Sierra Nevada, on the border of California and Nevada.",
    ),
    ("s1-5", "user", "Nadia", SESSION_1, "Haha, thanks!"),
    (
        "s2-1",
        "user",
        "Nadia",
        SESSION_2,
        "I adopted a puppy named Biscuit last Sunday. She is 9 weeks old and cost $1,200.",
    ),
    (
        "s2-2",
        "user",
        "Tomas",
        SESSION_2,
        "Here's how to repot a cactus:\n"
        "1. Water the cactus a day before.\n"
        "2. Wear thick gloves.\n"
        "3. Loosen the soil and lift the plant out.\n"
        "4. Place it in a pot with 2 inches of gravel.",
    ),
    (
        "s2-3",
        "user",
        "Nadia",
        SESSION_2,
        "To make cold brew, first grind 100 g of coffee coarsely, then add 1 liter of water, "
        "and finally let it steep for 12 hours.",
    ),
    (
        "s2-4",
        "user",
        "Tomas",
        SESSION_2,
        "First we had dinner at Ramen Ya, then we watched Dune at the Roxy cinema on Thursday.",
    ),
    (
        "s2-5",
        "user",
        "Nadia",
        SESSION_2,
        'My favorite book is "The Overstory" by Richard Powers. I\'m going to the book club next Tuesday.',
    ),
    ("s2-6", "user", "Nadia", SESSION_2, "My notes from the trip are at https://example.com/paris-notes.pdf"),
    (
        "s2-7",
        "assistant",
        "Coach",
        SESSION_2,
        "I'm a running coach assistant and I prefer short, direct answers.",
    ),
]

MESSAGES = {
    message_id: InputMessage(message_id=message_id, role=role, name=name, content=content, timestamp=timestamp)  # type: ignore[arg-type]
    for message_id, role, name, timestamp, content in _TURNS
}


def conversation(*message_ids: str, related_memories: list[str] | None = None) -> WriterInput:
    """The named turns (all of them when none are named) as one write-call input."""
    chosen = [MESSAGES[message_id] for message_id in message_ids] if message_ids else list(MESSAGES.values())
    return WriterInput(messages=chosen, related_memories=related_memories or [])
