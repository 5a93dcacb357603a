"""Text preparation of the local graph extractor.

A record's text is prepared line by line (speaker labels and metadata lines off, image markers
replaced by their captions) and parsed once with the process's spaCy pipeline; parses are
kept by text (``apps.language.pipeline.PARSES``), so extraction, repair and a retry of the
same record read one parse, and an episode whose text is its message's reads the writer's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from apps.graph.admission import SUBJECT_ROLES, rejection_reason
from apps.graph.keys import anchor_key
from apps.language.words import SHARED_PICTURE
from apps.providers.extraction_schemas import (
    ExtractionInput,
)

_SPEAKER_PREFIX = re.compile(r"^[ \t]*(?P<speaker>[A-Z][\w'\-]*(?:[ ][A-Z][\w'\-]*){0,2}):[ \t]+(?=\S)")
# Lines the local writer adds to a record's details: provenance and resolved dates. They state
# nothing about the world (the row's provenance columns hold the same).
_METADATA_LINE = re.compile(r"^\s*(?:Said by .+ \(message [^)]*\)\.?|Resolved dates:.*)\s*$")
QUOTED = re.compile(r"\"(?P<straight>[^\"\n]{1,80})\"|\u201c(?P<curly>[^\u201d\n]{1,80})\u201d")


@dataclass(frozen=True)
class Line:
    start: int
    speaker: str | None


@dataclass(frozen=True)
class Caption:
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
            speaker = actor if key in SUBJECT_ROLES else None
        elif labels_are_speakers and reason is None:
            speaker = match["speaker"]
        raw = raw[match.end() :]
    return raw, speaker


def prepared(record: ExtractionInput) -> tuple[str, tuple[Line, ...], tuple[Caption, ...]]:
    """The text to parse and its lines, one for each line of the record's text.

    Labels are taken off: in an episodic record a label names the speaker, who "I" is on that
    line ("Caroline: ..."); a semantic record starts with the name of what it is about, and
    "I" stays its source. A line filed under a generic label ("People: ...", "Places: ...")
    and the writer's metadata lines are left out (blank), and an image marker is replaced by
    its caption. A semantic record's line that says again, word for word, a line before it is
    left out too: its summary opens it, and its details repeat the summary's sentence, so
    that sentence would be parsed twice, at twice the cost, for the same frames; without the
    repeat, its text is usually its message's, which the writer parsed already (``PARSES``).
    """
    lines: list[Line] = []
    said: set[str] = set()
    captions: list[Caption] = []
    parts: list[str] = []
    offset = 0
    for text in record.text.splitlines():
        raw, speaker = _without_labels(text, record.actor, labels_are_speakers=record.kind == "episodic")
        if _METADATA_LINE.match(raw) or (record.kind == "semantic" and raw.strip() in said):
            raw = ""
        said.add(raw.strip())
        pieces: list[str] = []
        cursor = 0
        for marker in SHARED_PICTURE.finditer(raw):
            pieces.append(raw[cursor : marker.start()] + " (")
            caption = marker["caption"].strip()
            start = offset + sum(map(len, pieces))
            captions.append(Caption(start, start + len(caption), caption, marker["media"].lower(), speaker))
            pieces.append(caption + ") ")
            cursor = marker.end()
        line = "".join(pieces) + raw[cursor:]
        lines.append(Line(start=offset, speaker=speaker))
        parts.append(line)
        offset += len(line) + 1
    # Without the blank lines the metadata leaves at the end: an episode of one message is then
    # parsed as the message's text, which the writer parsed already (``PARSES``).
    return "\n".join(parts).rstrip("\n"), tuple(lines), tuple(captions)
