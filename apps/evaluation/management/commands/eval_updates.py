"""Knowledge updates: is what search returns, and what the answer endpoint says, the *current*
value of a fact that changed? (apps/evaluation/updates.py holds the data set's loader and the
scoring.)

The set is written through the product's write path into a fresh organization (one chunk per
session, indexed into the graph), then every question is asked once through graph-mode search
with a 1,024-token budget and once through the answer endpoint's loop with the deployment's
answerer (local by default). Rows map back to turns through their provenance. Writes one JSON
line per question, prints the table, and plots the figures per category.
"""

from __future__ import annotations

import json
import logging
import math
import platform
import time
import uuid
from argparse import ArgumentParser
from pathlib import Path
from typing import Any, get_args

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.evaluation.ingestion import Voice, conversation_ingest, kept_subject, row_dia_ids
from apps.evaluation.report import BENCHMARKS, write_section
from apps.evaluation.updates import (
    CATEGORIES,
    CURRENT_BUDGET,
    DATA_FILE,
    NEEDLE_BUDGET,
    Figure,
    QuestionScore,
    ReturnedRow,
    UpdateQuestion,
    first_sessions,
    load_update_set,
    score_question,
    summarize,
)
from apps.language.words import count_tokens
from apps.providers.interfaces import MeteringContext
from apps.providers.registry import answer_llm_for, embedder
from apps.providers.services import DatabaseUsageMeter
from apps.retrieval.answering import answer_question
from apps.retrieval.services import search
from apps.tenancy import services as tenancy
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope

COLUMNS = (
    ("current_at_1", "current @ rank 1"),
    ("current_within_budget", f"current within {CURRENT_BUDGET:,} tok"),
    ("stale_above_current", "stale above current ↓"),
    ("needle_within_budget", f"needle within {NEEDLE_BUDGET} tok"),
    ("answer_match", "answer has current value"),
)


class Command(BaseCommand):
    help = "Knowledge updates: current-value recall, stale rows above current ones, needles, answers."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--data", type=Path, default=DATA_FILE, help="An update set in the LoCoMo format.")
        parser.add_argument(
            "--out", type=Path, default=Path("var/eval_updates.jsonl"), help="JSON lines, one per question."
        )
        parser.add_argument(
            "--sessions",
            type=int,
            default=0,
            help="Only the first N sessions, with the questions whose cited turns they hold (0: all).",
        )
        parser.add_argument(
            "--voice",
            choices=get_args(Voice),
            default="named",
            help="named: each turn names its speaker; user: the person's turns as unnamed user messages "
            "for a subject named after them, the other's as assistant ones; user-opaque: the same, "
            "for a subject whose id is no name (ADR 0095).",
        )
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")
        parser.add_argument(
            "--keep",
            type=Path,
            help="Keep the ingested organization (no offboarding) and write its ids to this file, for --reuse.",
        )
        parser.add_argument(
            "--reuse",
            type=Path,
            help="A file written by --keep: ask the questions of its kept ingestion instead of ingesting (a "
            "tuning aid: the same rows every run, so two versions of the retrieval compare on one ingestion).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)
        conversation, questions = load_update_set(options["data"])
        if options["sessions"] < 0:
            raise CommandError("--sessions must be 0 (all) or a positive count")
        if options["sessions"]:
            conversation, questions = first_sessions(conversation, questions, options["sessions"])
        if not questions:
            raise CommandError("no question is answerable from the chosen sessions")
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        if options["reuse"] is not None:
            subject, ingest_s = _kept_subject(options["reuse"]), None
            lines = self._ask(subject, questions)
        else:
            organization = tenancy.organization_create(
                name="Knowledge updates", slug=f"eval-updates-{uuid.uuid4().hex[:6]}"
            )
            try:
                started = time.perf_counter()
                subject = conversation_ingest(
                    organization_id=organization.id, conversation=conversation, index=True, voice=options["voice"]
                )
                ingest_s = time.perf_counter() - started
                lines = self._ask(subject, questions)
            finally:
                if options["keep"] is None:
                    tenancy.organization_offboard(organization_id=organization.id)
            if options["keep"] is not None:
                ids = {"organization_id": str(organization.id), "subject_id": str(subject.id)}
                options["keep"].write_text(json.dumps(ids))
        with out.open("w") as handle:
            for line in lines:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        data: Path = options["data"]
        # Each update set has its own section and plot: the default one keeps the plain name.
        section = "eval_updates" if data.resolve() == DATA_FILE else f"eval_updates_{data.stem}"
        if options["voice"] != "named":  # the same set written as a chat of unnamed turns
            section += f"_{options['voice'].replace('-', '_')}"
        plot_path = BENCHMARKS.parent / "img" / f"{section}.png" if options["write_docs"] else out.with_suffix(".png")
        turns = [turn.text for session in conversation.sessions for turn in session.turns]
        shown = data.resolve().relative_to(Path.cwd()) if data.resolve().is_relative_to(Path.cwd()) else data
        command = "" if data.resolve() == DATA_FILE else f"--data {shown} "
        command += f"--voice {options['voice']} " if options["voice"] != "named" else ""
        command += f"--sessions {options['sessions']} " if options["sessions"] else ""
        body = _report(
            lines,
            out,
            plot_path,
            data=shown,
            command=command,
            sessions=len(conversation.sessions),
            turns=len(turns),
            longest_words=max(len(text.split()) for text in turns),
            ingest_s=ingest_s,
            voice=options["voice"],
        )
        self.stdout.write(body)
        if options["write_docs"]:
            write_section(section, body)

    def _ask(self, subject: Subject, questions: list[UpdateQuestion]) -> list[dict[str, Any]]:
        dia_of = row_dia_ids(subject)
        vectors = embedder()
        answerer = answer_llm_for(subject.organization_id)
        metering = MeteringContext(organization_id=subject.organization_id, meter=DatabaseUsageMeter())
        lines = []
        for item in tqdm(questions, desc="ask", unit="q"):
            with organization_scope(subject.organization_id):
                result = search(
                    subject=subject,
                    question=item.question.question,
                    embedder=vectors,
                    mode="graph",
                    token_budget=CURRENT_BUDGET,
                )
                answered = answer_question(
                    subject=subject,
                    question=item.question.question,
                    embedder=vectors,
                    answerer=answerer,
                    metering=metering,
                    mode="graph",
                )
            rows = [
                ReturnedRow(
                    dia_ids=tuple(dia_of.get(fused.row.row_id, ())),
                    text=fused.row.text,
                    tokens=count_tokens(fused.row.text),
                )
                for fused in result.rows
            ]
            score = score_question(item, rows, answered.answer)
            lines.append(
                {
                    "qa_index": item.question.qa_index,
                    "category": item.category,
                    "question": item.question.question,
                    "answer": item.question.answer,
                    "evidence": item.question.evidence,
                    "stale_evidence": list(item.stale_evidence),
                    "needle": item.needle.text if item.needle else None,
                    "returned": [
                        {"dia_ids": list(row.dia_ids), "tokens": row.tokens, "text": row.text[:300]} for row in rows
                    ],
                    "answered": answered.answer,
                    "fallback": result.fallback,
                    **{metric: getattr(score, metric) for metric, _ in COLUMNS},
                }
            )
        return lines


# How the set was written, in the section's title (ADR 0095).
_VOICES: dict[str, str] = {
    "named": "",
    "user": ", the person's turns as unnamed user messages",
    "user-opaque": ", the person's turns as unnamed user messages of a subject with an opaque id",
}


def _kept_subject(path: Path) -> Subject:
    """The subject of the ingestion a ``--keep`` run left."""
    if not path.exists():
        raise CommandError(f"--reuse: {path} does not exist (write it with --keep)")
    kept = json.loads(path.read_text())
    return kept_subject(kept["organization_id"], kept["subject_id"])


def _cell(figure: Figure) -> str:
    share = figure.share
    return "–" if share is None else f"{share:.1%} ({figure.hits}/{figure.questions})"


def _report(
    lines: list[dict[str, Any]],
    out: Path,
    plot_path: Path,
    *,
    data: Path,
    command: str,
    sessions: int,
    turns: int,
    longest_words: int,
    ingest_s: float | None,
    voice: Voice = "named",
) -> str:
    scores = [_score_of(line) for line in lines]
    table = summarize(scores)
    plot = _plot(table, plot_path)
    link = plot.relative_to(BENCHMARKS.parent) if plot.is_relative_to(BENCHMARKS.parent) else plot
    rows = [
        "| category | questions | " + " | ".join(label for _, label in COLUMNS) + " |",
        "|---" * (len(COLUMNS) + 2) + "|",
    ]
    for category in [*CATEGORIES.values(), "all"]:
        count = sum(1 for line in lines if category in ("all", line["category"]))
        rows.append(
            f"| {category} | {count} | " + " | ".join(_cell(table[category][metric]) for metric, _ in COLUMNS) + " |"
        )
    fallbacks = sum(1 for line in lines if line["fallback"])
    return "\n".join(
        [
            f"## Knowledge updates{'' if data.stem == 'updates_v1' else f' on {data.stem}'}"
            f"{_VOICES[voice]} "
            f"(`python manage.py eval_updates {command}--write-docs`)",
            "",
            f"The project's own update set (`{data}`): one person over {sessions} "
            f"sessions ({turns} turns, the longest {longest_words:,} words: a pasted document), facts that change once "
            "or twice, facts that never change, needle passages in the document. Local providers, "
            f"{platform.machine()}, 2 cores; "
            + (f"ingestion {ingest_s:.0f} s. " if ingest_s is not None else "a kept ingestion asked again. ")
            + "Each question is asked once through "
            f"graph-mode search with a {CURRENT_BUDGET:,}-token budget (tokens: words and punctuation of the returned "
            f"rows) and once through the answer endpoint's loop. A row counts for a turn through its provenance. "
            "Current = the turn stating today's value (for a past-value question, the old turn asked about); "
            "stale above current = a row citing a superseded turn ranks above every row citing the current one "
            "(questions with superseded turns only; lower is better); a needle counts when a row within the first "
            f"{NEEDLE_BUDGET} tokens holds its passage; an answer counts when its text contains the current value "
            f"(case and accents folded). {fallbacks} searches fell back to direct retrieval. Run file: `{out}`.",
            "",
            *rows,
            "",
            f"![knowledge updates per category]({link})",
        ]
    )


def _score_of(line: dict[str, Any]) -> QuestionScore:
    return QuestionScore(category=line["category"], **{metric: line[metric] for metric, _ in COLUMNS})


def _plot(table: dict[str, dict[str, Figure]], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    categories = [*CATEGORIES.values(), "all"]
    figure, axis = plt.subplots(figsize=(11, 4))
    width = 0.8 / len(COLUMNS)
    for index, (metric, label) in enumerate(COLUMNS):
        shares = [table[c][metric].share for c in categories]
        values = [math.nan if share is None else share * 100 for share in shares]  # not applicable: no bar
        positions = [i + index * width for i in range(len(categories))]
        axis.bar(positions, values, width, label=label)
    axis.set_xticks([i + width * (len(COLUMNS) - 1) / 2 for i in range(len(categories))], categories)
    axis.set_ylabel("share of questions (%)")
    axis.set_ylim(0, 100)
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axis.set_title("Knowledge updates per category (a metric that does not apply is left out)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
