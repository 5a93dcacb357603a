"""Precision and recall of the local AutoDream decision on the labelled anchor pairs.

``python manage.py eval_dream_pairs --data /path/to/locomo_dev.json --write-docs``: own pairs
with their own context, LoCoMo pairs with the turns of their conversation read from the data
file (the pairs file holds only names, ids, labels and reasons). Every wrong merge and every
missed pair is listed with the decision's reason.
"""

from __future__ import annotations

import platform
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.evaluation.dream_pairs import PAIRS_FILE, Scored, load_pairs, precision_recall, score
from apps.evaluation.locomo import load_conversations
from apps.evaluation.report import write_section

TARGET_PRECISION, TARGET_RECALL = 0.95, 0.6


class Command(BaseCommand):
    help = "Precision and recall of the local same-entity decision on labelled anchor pairs."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--pairs", type=Path, default=PAIRS_FILE, help="The labelled pairs (JSON).")
        parser.add_argument(
            "--data", type=Path, default=None, help="The LoCoMo-format file of the locomo pairs (default: dev split)."
        )
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        pairs = load_pairs(options["pairs"])
        data: Path | None = options["data"]
        try:
            conversations = load_conversations(data.parent if data else None, data.name if data else None)
        except FileNotFoundError as missing:
            raise CommandError(f"the LoCoMo data file is needed for the locomo pairs: {missing}") from missing
        turns_of = {c.sample_id: [f"{t.speaker}: {t.text}" for s in c.sessions for t in s.turns] for c in conversations}
        unknown = sorted({p["conversation"] for p in pairs if p["source"] == "locomo"} - set(turns_of))
        if unknown:
            raise CommandError(f"conversations {unknown} are not in the data file")
        scored = score(pairs, turns_of)
        body = _report(scored, options["pairs"])
        self.stdout.write(body)
        if options["write_docs"]:
            write_section("eval_dream_pairs", body)


def _row(name: str, figures: dict[str, Any]) -> str:
    return (
        f"| {name} | {figures['pairs']} | {figures['same']} | {figures['merged']} | {figures['false_merges']} "
        f"| {figures['missed']} | {figures['precision']:.3f} | {figures['recall']:.3f} |"
    )


def _report(scored: list[Scored], path: Path) -> str:
    groups = {
        "own pairs": [s for s in scored if s.pair["source"] == "own"],
        "LoCoMo dev pairs": [s for s in scored if s.pair["source"] == "locomo"],
        "all": scored,
    }
    total = precision_recall(scored)
    met = total["precision"] >= TARGET_PRECISION and total["recall"] >= TARGET_RECALL
    wrong = [s for s in scored if s.decision.same != s.expected]
    reasons: dict[str, list[int]] = {}
    for s in scored:
        counts = reasons.setdefault(s.decision.reason, [0, 0])
        counts[0 if s.decision.same == s.expected else 1] += 1
    return "\n".join(
        [
            "## Semantic AutoDream: the local decision on labelled pairs (`python manage.py eval_dream_pairs "
            "--data …/locomo_dev.json --write-docs`)",
            "",
            f"`{path.relative_to(path.parents[3]) if len(path.parents) > 3 else path}`: anchor pairs labelled same / "
            "different with a reason. Own pairs carry invented context sentences (and frame ids where two names "
            "share an event); LoCoMo dev pairs carry only anchor names, and the decision reads the turns that name "
            f"them from the dataset at run time. Deterministic, {platform.machine()}. Targets: precision ≥ "
            f"{TARGET_PRECISION}, recall ≥ {TARGET_RECALL}: {'met' if met else 'NOT met'}.",
            "",
            "| pairs | n | same | merged | wrong merges | missed | precision | recall |",
            "|---|---|---|---|---|---|---|---|",
            *(_row(name, precision_recall(group)) for name, group in groups.items()),
            "",
            "Decisions by the rule that made them (right / wrong):",
            "",
            "| reason | right | wrong |",
            "|---|---|---|",
            *(f"| {reason} | {right} | {bad} |" for reason, (right, bad) in sorted(reasons.items())),
            "",
            "Every wrong decision (wrong merges first):",
            "",
            *(
                f"- {s.pair['id']} ({s.pair['type']}): {s.pair['first']['name']} / {s.pair['second']['name']} — "
                f"labelled {s.pair['label']} ({s.pair['reason']}); decided "
                f"{'same' if s.decision.same else 'different'} ({s.decision.reason})"
                for s in sorted(wrong, key=lambda s: (s.expected, s.pair["id"]))
            ),
        ]
    )
