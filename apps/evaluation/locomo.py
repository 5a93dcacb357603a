"""The LoCoMo long-conversation benchmark, read from the shared data directory. Framework-free.

The data's license (CC BY-NC 4.0) forbids copying it into the product: it is read in place,
from ``../shared/datasets/locomo/`` beside the project root (or ``MIRIX_LOCOMO_DIR``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = PROJECT_ROOT.parent / "shared" / "datasets" / "locomo"
DATA_FILE = "locomo_dev.json"
FIXES_FILE = "evidence_fixes_dev.json"

_DIA_ID = re.compile(r"^D(\d+):(\d+)$")


def data_dir() -> Path:
    return Path(os.environ.get("MIRIX_LOCOMO_DIR", DEFAULT_DIR))


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str  # with the caption of a shared image appended, as part of the turn


@dataclass(frozen=True)
class Session:
    number: int
    date_time: datetime
    turns: list[Turn]


@dataclass(frozen=True)
class Question:
    sample_id: str
    qa_index: int
    question: str
    answer: str
    category: int
    evidence: list[str]
    dropped_evidence: list[str]  # malformed ids that could not be repaired


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[Question]

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def parse_session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → an aware datetime (the data has no zone: UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def repair_evidence(raw: list[str]) -> tuple[list[str], list[str]]:
    """Split "D8:6; D9:17", fix "D:11:26" and "D30:05"; return (valid ids, dropped)."""
    valid: list[str] = []
    dropped: list[str] = []
    for item in raw:
        for part in re.split(r"[;,]\s*", str(item)):
            candidate = part.strip().replace("D:", "D", 1) if part.strip().startswith("D:") else part.strip()
            match = _DIA_ID.match(candidate)
            if match:
                valid.append(f"D{int(match.group(1))}:{int(match.group(2))}")
            elif candidate:
                dropped.append(part)
    return list(dict.fromkeys(valid)), dropped


def _turn_text(turn: dict[str, object]) -> str:
    text = str(turn.get("text", ""))
    caption = turn.get("blip_caption")
    return f"{text} [shared an image: {caption}]" if caption else text


def load_conversations(directory: Path | None = None, data_file: str | None = None) -> list[Conversation]:
    """Conversations of a LoCoMo-format file (default: the dev split); evidence fixes are applied
    when ``evidence_fixes_dev.json`` sits beside it."""
    directory = directory or data_dir()
    samples = json.loads((directory / (data_file or DATA_FILE)).read_text())
    fixes_path = directory / FIXES_FILE
    fixes = (
        {(f["sample_id"], f["qa_index"]): f["evidence"] for f in json.loads(fixes_path.read_text())}
        if fixes_path.exists()
        else {}
    )
    conversations = []
    for sample in samples:
        conv = sample["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        sessions = [
            Session(
                number=n,
                date_time=parse_session_time(conv[f"session_{n}_date_time"]),
                turns=[
                    Turn(dia_id=t["dia_id"], speaker=t["speaker"], text=_turn_text(t)) for t in conv[f"session_{n}"]
                ],
            )
            for n in numbers
        ]
        questions = []
        for index, qa in enumerate(sample["qa"]):
            evidence, dropped = repair_evidence(fixes.get((sample["sample_id"], index), qa.get("evidence", [])))
            questions.append(
                Question(
                    sample_id=sample["sample_id"],
                    qa_index=index,
                    question=qa["question"],
                    answer=str(qa.get("answer", qa.get("adversarial_answer", ""))),
                    category=int(qa["category"]),
                    evidence=evidence,
                    dropped_evidence=dropped,
                )
            )
        conversations.append(
            Conversation(sample["sample_id"], (conv["speaker_a"], conv["speaker_b"]), sessions, questions)
        )
    return conversations


def session_messages(session: Session, *, user: str | None = None) -> Iterator[dict[str, object]]:
    """A session as chat messages for the write API: one per turn, the dia_id as its id, each
    named after its speaker; or, given ``user``, as most integrations send a chat: that
    speaker's turns as unnamed ``user`` messages and the other's as ``assistant`` ones."""
    for turn in session.turns:
        voice: dict[str, object] = {"role": "user", "name": turn.speaker}
        if user is not None:
            voice = {"role": "user" if turn.speaker == user else "assistant"}
        yield {"id": turn.dia_id, **voice, "content": turn.text, "timestamp": session.date_time}
