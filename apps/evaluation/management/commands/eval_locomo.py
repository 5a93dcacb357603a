"""LoCoMo evidence recall: ingest each conversation into its own organization, then ask every
question through search and score the returned dia_ids against the gold evidence.

Row ids and frame ids are random per ingestion, and orders and caps break ties by id, so the
same code scores up to a few points apart from one ingestion to the next (ADR 0020). With
``--ingestions N`` every conversation is ingested N times; the table reports the mean and the
range over the ingestions.

Questions are never seen by ingestion. Writes one JSON line per question and prints recall per
category at the system budget and within 512 / 1024 / 2048 returned tokens (words and
punctuation of the returned turns), with a plot.
"""

from __future__ import annotations

import json
import logging
import platform
import time
import uuid
from argparse import ArgumentParser
from collections import defaultdict
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.dream.services import DREAM_EVERY_CHUNKS, dream_run, graph_size
from apps.evaluation.coverage import question_coverage
from apps.evaluation.ingestion import conversation_ingest, kept_subject, row_dia_ids
from apps.evaluation.locomo import DATA_FILE, Conversation, Question, load_conversations
from apps.evaluation.reference import REFERENCE_MODES, TurnRetriever
from apps.evaluation.report import BENCHMARKS, write_section
from apps.language.words import count_tokens
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.providers.registry import embedder
from apps.retrieval.planner import OPERATOR_BUDGETS
from apps.retrieval.services import search
from apps.tenancy import services as tenancy
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope

TOKEN_BUDGETS = (512, 1024, 2048)
RANK_CUTOFFS = (1, 5, 10)  # recall among the first k returned rows
SCORED_CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MODES = ("flat", "graph", "graph+dream", *REFERENCE_MODES)
REFERENCE_TURNS = 64  # turns a reference order returns (the row limit a token-budgeted search has)
# A reference order's "system budget": the largest row budget (cited plus base rows) the planner gives (count: 20).
SYSTEM_TURNS = max(budgets.total_rows for budgets in OPERATOR_BUDGETS.values())
KEPT_FILE = Path("var/eval_locomo.kept.json")  # the organizations --keep leaves, for --reuse


class Command(BaseCommand):
    help = "Evidence recall on LoCoMo (per category, at the system budget and within token budgets)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--data", type=Path, default=None, help="A LoCoMo-format JSON file (default: the dev split)."
        )
        parser.add_argument(
            "--mode",
            default="graph",
            help="flat, graph, graph+dream, or a comma-separated list (graph+dream ingests on its own, with the "
            "AutoDream schedule: a round after every 5 sessions and after the last); turns-bm25, turns-dense and "
            "turns-rrf are reference retrievers over the raw turns, outside the product (no ingestion).",
        )
        parser.add_argument(
            "--out", type=Path, default=Path("var/eval_locomo.jsonl"), help="JSON lines, one per question."
        )
        parser.add_argument("--conversations", type=int, default=0, help="Only the first N conversations (0: all).")
        parser.add_argument(
            "--ingestions",
            type=int,
            default=1,
            help="Ingest each conversation this many times, each into its own organization; recall is the mean, "
            "with the range over the ingestions (ids are random per ingestion and break ties).",
        )
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")
        parser.add_argument(
            "--keep",
            action="store_true",
            help="Keep the ingested organizations (no offboarding) and write their ids and subject ids to "
            "var/eval_locomo.kept.json, for --reuse.",
        )
        parser.add_argument(
            "--reuse",
            type=Path,
            default=None,
            help="A file written by --keep: ask the questions against its kept organizations instead of ingesting "
            "(a tuning aid: the same rows and ids every run). The organizations stay.",
        )
        parser.add_argument(
            "--coverage-report",
            action="store_true",
            help="With graph mode: list the multi-hop gold turns that no graph lane brings into the candidate set, "
            "with the lane that should have reached each (first ingestion; a section of its own with --write-docs).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        modes = [m.strip() for m in options["mode"].split(",") if m.strip()]
        unknown = sorted(set(modes) - set(MODES))
        if unknown:
            raise CommandError(f"unknown mode(s) {unknown}; available: {list(MODES)}")
        logging.getLogger("apps").setLevel(logging.WARNING)
        data: Path | None = options["data"]
        conversations = load_conversations(data.parent if data else None, data.name if data else None)
        if options["conversations"]:
            conversations = conversations[: options["conversations"]]
        ingestions: int = options["ingestions"]
        if ingestions < 1:
            raise CommandError("--ingestions must be at least 1")
        self.coverage: list[dict[str, Any]] | None = [] if options["coverage_report"] else None
        if self.coverage is not None and "graph" not in modes:
            raise CommandError("--coverage-report traces graph mode: add graph to --mode")
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        lines: list[dict[str, Any]] = []
        organizations = []
        self.dream_rounds: list[dict[str, Any]] = []
        plain = [m for m in modes if m in ("flat", "graph")]
        reference = [m for m in modes if m in REFERENCE_MODES]
        reuse: Path | None = options["reuse"]
        reused = _kept_subjects(reuse) if reuse is not None else None
        kept: list[dict[str, Any]] = []
        try:
            for conversation in conversations:
                if reference:
                    lines += [{**line, "ingestion": 0} for line in self._reference(conversation, reference)]
                # Flat and graph share each ingestion; graph+dream changes the graph, so it has its own.
                for group, dream in ((plain, False), (["graph+dream"] if "graph+dream" in modes else [], True)):
                    for ingestion in range(ingestions) if group else ():
                        if reused is not None:
                            subject = _reused_subject(reused, conversation.sample_id, ingestion, dream=dream)
                        else:
                            organization = tenancy.organization_create(
                                name=f"LoCoMo {conversation.sample_id}",
                                slug=f"eval-{conversation.sample_id}-{uuid.uuid4().hex[:6]}",
                            )
                            organizations.append(organization.id)
                            index = dream or "graph" in group
                            subject = self._ingest(organization.id, conversation, index=index, dream=dream)
                            kept.append(
                                {
                                    "sample_id": conversation.sample_id,
                                    "ingestion": ingestion,
                                    "dream": dream,
                                    "organization_id": str(organization.id),
                                    "subject_id": str(subject.id),
                                }
                            )
                        for mode in group:
                            lines += [
                                {**line, "ingestion": ingestion} for line in self._ask(subject, conversation, mode)
                            ]
                        if self.coverage is not None and not dream and not ingestion:
                            self.coverage += self._coverage(subject, conversation)
        finally:
            if options["keep"]:
                KEPT_FILE.parent.mkdir(parents=True, exist_ok=True)
                KEPT_FILE.write_text(json.dumps(kept, indent=1) + "\n")
            else:
                for organization_id in organizations:
                    tenancy.organization_offboard(organization_id=organization_id)
        with out.open("w") as handle:
            for line in lines:
                handle.write(json.dumps(line) + "\n")
        if "graph+dream" in modes:
            with out.with_suffix(".dream.jsonl").open("w") as handle:
                for dream_round in self.dream_rounds:
                    handle.write(json.dumps(dream_round) + "\n")
        # The dev split keeps its section; any other file has one of its own, named after it.
        own = data is not None and data.name != DATA_FILE
        section = f"eval_locomo_{data.stem}" if own and data is not None else "eval_locomo"
        plot_path = BENCHMARKS.parent / "img" / f"{section}.png" if options["write_docs"] else out.with_suffix(".png")
        source = f"`{data}`" if own else "the dev split (LoCoMo, CC BY-NC 4.0, read in place)"
        body = self._report(
            lines,
            modes,
            conversations,
            out,
            plot_path,
            ingestions=ingestions,
            source=source,
            data=data if own else None,
        )
        self.stdout.write(body)
        if options["write_docs"]:
            write_section(section, body)
        if self.coverage is not None:
            with out.with_suffix(".coverage.jsonl").open("w") as handle:
                for item in self.coverage:
                    handle.write(json.dumps(item) + "\n")
            report = _coverage_report(self.coverage, lines, conversations, source=source, data=data if own else None)
            self.stdout.write(report)
            if options["write_docs"]:
                write_section(f"{section}_coverage", report)

    def _ingest(
        self, organization_id: uuid.UUID, conversation: Conversation, *, index: bool, dream: bool = False
    ) -> Subject:
        frontier: list[uuid.UUID] = []

        def dream_on_schedule(subject: Subject, chunk_id: uuid.UUID) -> None:
            frontier.append(chunk_id)
            if len(frontier) == DREAM_EVERY_CHUNKS:
                self._dream(subject, conversation, list(frontier), final=False)
                frontier.clear()

        subject = conversation_ingest(
            organization_id=organization_id,
            conversation=conversation,
            index=index,
            after_session=dream_on_schedule if dream else None,
        )
        if dream:
            self._dream(subject, conversation, frontier, final=True)
        return subject

    def _dream(self, subject: Subject, conversation: Conversation, frontier: list[uuid.UUID], *, final: bool) -> None:
        """One AutoDream request, as the ingestion driver makes it, with its cost and the graph size."""
        with organization_scope(subject.organization_id):
            before = graph_size(subject)
            rows = sum(model.objects.filter(subject=subject).count() for model in (EpisodicEvent, SemanticItem))
            started = time.perf_counter()
            summary = dream_run(subject=subject, chunk_ids=frontier, final=final)
            wall_ms = (time.perf_counter() - started) * 1000
            after = graph_size(subject)
        self.dream_rounds.append(
            {
                "sample_id": conversation.sample_id,
                "request": len([r for r in self.dream_rounds if r["sample_id"] == conversation.sample_id]) + 1,
                "final": final,
                "chunks": len(frontier),
                "memory_rows": rows,
                "wall_ms": round(wall_ms, 1),
                "anchors_before": before["anchors"],
                "frames_before": before["frames"],
                "anchors_after": after["anchors"],
                "frames_after": after["frames"],
                **{k: v for k, v in summary.items() if k != "rounds"},
                "rounds": summary["rounds"],
            }
        )

    def _reference(self, conversation: Conversation, modes: list[str]) -> list[dict[str, Any]]:
        """The reference orders of the raw turns, scored like a search (``returned`` = the first
        SYSTEM_TURNS, ``returned_wide`` = the first REFERENCE_TURNS)."""
        turns = [(t.dia_id, f"{t.speaker}: {t.text}") for s in conversation.sessions for t in s.turns]
        tokens = {t.dia_id: count_tokens(t.text) for s in conversation.sessions for t in s.turns}
        retriever = TurnRetriever(turns, embedder())
        lines = []
        for question in tqdm(conversation.questions, desc=f"ask {conversation.sample_id} (turns)", unit="q"):
            orders = retriever.orders(question.question, limit=REFERENCE_TURNS)
            for mode in modes:
                wide: list[dict[str, Any]] = [
                    {"dia_id": dia, "tokens": tokens[dia], "rank": rank}
                    for rank, dia in enumerate(orders[mode], start=1)
                ]
                system = wide[:SYSTEM_TURNS]
                lines.append(
                    {
                        **_question_line(question, mode, system, wide),
                        "tokens_returned": sum(item["tokens"] for item in system),
                        "rows_returned": len(system),
                        "anchors_inspected": 0,
                        "frames_inspected": 0,
                        "rows_inspected": len(turns),
                        "fallback": False,
                        "latency_ms": 0.0,
                    }
                )
        return lines

    def _ask(self, subject: Subject, conversation: Conversation, mode: str) -> list[dict[str, Any]]:
        turn_tokens = {t.dia_id: count_tokens(t.text) for s in conversation.sessions for t in s.turns}
        search_mode = "graph" if mode == "graph+dream" else mode  # the same retrieval over the dreamed graph
        vectors = embedder()
        lines = []
        dia_of = row_dia_ids(subject)
        for question in tqdm(conversation.questions, desc=f"ask {conversation.sample_id} ({mode})", unit="q"):
            started = time.perf_counter()
            with organization_scope(subject.organization_id):
                system = search(subject=subject, question=question.question, embedder=vectors, mode=search_mode)  # type: ignore[arg-type]
                wide = search(
                    subject=subject,
                    question=question.question,
                    embedder=vectors,
                    mode=search_mode,  # type: ignore[arg-type]
                    token_budget=max(TOKEN_BUDGETS),
                )
            latency = (time.perf_counter() - started) * 1000 / 2
            lines.append(
                {
                    **_question_line(
                        question, mode, _returned(system, dia_of, turn_tokens), _returned(wide, dia_of, turn_tokens)
                    ),
                    "tokens_returned": system.budget.tokens_returned,
                    "rows_returned": system.budget.rows_returned,
                    "anchors_inspected": system.budget.anchors_inspected,
                    "frames_inspected": system.budget.frames_inspected,
                    "rows_inspected": system.budget.rows_inspected,
                    "fallback": system.fallback,
                    "latency_ms": round(latency, 1),
                }
            )
        return lines

    def _coverage(self, subject: Subject, conversation: Conversation) -> list[dict[str, Any]]:
        rows_of: dict[str, list[str]] = defaultdict(list)
        for row_id, dias in row_dia_ids(subject).items():
            for dia in dias:
                rows_of[dia].append(row_id)
        vectors = embedder()
        found = []
        for question in conversation.questions:
            if question.category == 1 and question.evidence:
                found += question_coverage(subject=subject, question=question, embedder=vectors, rows_of=rows_of)
        return found

    def _report(
        self,
        lines: list[dict[str, Any]],
        modes: list[str],
        conversations: list[Conversation],
        out: Path,
        plot_path: Path,
        *,
        ingestions: int = 1,
        source: str = "the dev split",
        data: Path | None = None,
    ) -> str:
        table = _recall_table(lines, modes)
        plot = _plot(table, modes, plot_path, title=f"{data.stem if data else 'LoCoMo dev split'}")
        link = plot.relative_to(BENCHMARKS.parent) if plot.is_relative_to(BENCHMARKS.parent) else plot
        spread = ingestions > 1
        header = (
            "| mode | category | questions | recall @ system budget | @512 tok | @1024 tok | @2048 tok | "
            + "".join(f"R@{k} | " for k in RANK_CUTOFFS)
            + "rows/q | tokens/q |"
        )
        rows = [
            header + (" @1024 tok: range over ingestions |" if spread else ""),
            "|---" * (10 + len(RANK_CUTOFFS) if spread else 9 + len(RANK_CUTOFFS)) + "|",
        ]
        for mode in modes:
            for category in [*SCORED_CATEGORIES, "all"]:
                cell = table[mode][category]
                low, high = cell["low"], cell["high"]
                rows.append(
                    f"| {mode} | {CATEGORY_NAMES.get(category, 'all 1–4') if category != 'all' else 'all 1–4'} | {cell['n']} | "  # type: ignore[call-overload]
                    f"{cell['system']:.1%} | {cell[512]:.1%} | {cell[1024]:.1%} | {cell[2048]:.1%} | "
                    + "".join(f"{cell[f'R@{k}']:.1%} | " for k in RANK_CUTOFFS)
                    + f"{cell['rows']:.1f} | {cell['tokens']:.0f} |"
                    + (f" {low:.1%} – {high:.1%} |" if spread else "")
                )
        dropped = sum(
            len(line["dropped_evidence"]) for line in lines if line["mode"] == modes[0] and not line["ingestion"]
        )
        command = (
            (f"--data {data} " if data else "")
            + f"--mode {','.join(modes)}"
            + (f" --ingestions {ingestions}" if spread else "")
        )
        means = (
            f"Each conversation was ingested {ingestions} times, each into its own organization; figures are means "
            "over the ingestions (questions are counted once), with the range of recall within 1,024 tokens. "
            if spread
            else ""
        )
        return "\n".join(
            [
                f"## LoCoMo evidence recall{f' on {data.stem}' if data else ''} "
                f"(`python manage.py eval_locomo {command} --write-docs`)",
                "",
                f"{len(conversations)} conversations of {source}, "
                f"categories 1–4, local providers, {platform.machine()}, 2 cores. Every turn is written through the "
                "write path (one chunk per session) and indexed; questions are never seen by ingestion. Recall = share "
                "of a question's gold dia_ids among the returned rows' dia_ids (facts count through their cited rows). "
                "R@k = the share cited by one of the first k returned rows (of the 2,048-token search). "
                f"Evidence fixes applied; {dropped} malformed evidence ids could not be repaired and were dropped. "
                f"{means}Run file: `{out}`.",
                "",
                *rows,
                "",
                f"![recall per category]({link})",
            ]
        )


def _kept_subjects(path: Path) -> dict[tuple[str, int, bool], dict[str, Any]]:
    """The organizations and subjects a ``--keep`` run left, by (sample id, ingestion, dream)."""
    if not path.exists():
        raise CommandError(f"--reuse: {path} does not exist (write it with --keep)")
    return {(item["sample_id"], item["ingestion"], item["dream"]): item for item in json.loads(path.read_text())}


def _reused_subject(
    kept: dict[tuple[str, int, bool], dict[str, Any]], sample_id: str, ingestion: int, *, dream: bool
) -> Subject:
    item = kept.get((sample_id, ingestion, dream))
    if item is None:
        raise CommandError(f"--reuse: no kept ingestion {ingestion} of {sample_id}{' (dream)' if dream else ''}")
    return kept_subject(item["organization_id"], item["subject_id"])


def _coverage_report(
    coverage: list[dict[str, Any]],
    lines: list[dict[str, Any]],
    conversations: list[Conversation],
    *,
    source: str,
    data: Path | None,
) -> str:
    """The multi-hop gold turns graph mode never makes candidates, by lane, with the rank flat
    mode gives each (when flat mode ran)."""
    questions = [q for c in conversations for q in c.questions if q.category == 1 and q.evidence]
    gold = sum(len(q.evidence) for q in questions)
    flat_rank = {
        (line["sample_id"], line["qa_index"], item["dia_id"]): item["rank"]
        for line in lines
        if line["mode"] == "flat" and not line["ingestion"]
        for item in line["returned_wide"]
    }
    by_lane: dict[str, int] = defaultdict(int)
    for item in coverage:
        by_lane[item["lane"]] += 1
    flat_ran = any(line["mode"] == "flat" for line in lines)
    table = [
        "| conversation | question | gold turn | lane that should have reached it | anchors its rows mention |"
        + (" flat rank |" if flat_ran else ""),
        "|---|---|---|---|---|" + ("---|" if flat_ran else ""),
    ]
    for item in sorted(coverage, key=lambda i: (i["sample_id"], i["qa_index"], i["dia_id"])):
        anchors = ", ".join(item["anchors"][:3]) + (
            f" (+{len(item['anchors']) - 3})" if len(item["anchors"]) > 3 else ""
        )
        rank = flat_rank.get((item["sample_id"], item["qa_index"], item["dia_id"]))
        table.append(
            f"| {item['sample_id']} | #{item['qa_index']} | {item['dia_id']} | {item['lane']} | {anchors or '—'} |"
            + (f" {rank if rank is not None else 'not returned'} |" if flat_ran else "")
        )
    command = (f"--data {data} " if data else "") + "--mode flat,graph --coverage-report"
    return "\n".join(
        [
            f"## Graph-mode candidate coverage of multi-hop gold turns (`python manage.py eval_locomo {command} "
            "--write-docs`)",
            "",
            f"{len(questions)} multi-hop questions of {source} with {gold} gold turns; **{len(coverage)} never enter "
            "graph mode's candidate set** (the rows of both lanes, their same-chunk neighbours and the rows cited by "
            "the relation lane's facts, before fusion and budgets; first ingestion). Questions are named by their "
            "index in the file. The lane is the first that should have reached the turn: the anchors the turn's rows "
            "mention are compared with the anchors the question selected, recalled and read as co-participants. "
            + (
                "Flat rank: the rank of the first row citing the turn in flat mode's 2,048-token search. "
                if flat_ran
                else ""
            ),
            "",
            *[f"- {lane}: {count}" for lane, count in sorted(by_lane.items(), key=lambda kv: (-kv[1], kv[0]))],
            "",
            *table,
        ]
    )


def _question_line(
    question: Question, mode: str, returned: list[dict[str, Any]], wide: list[dict[str, Any]]
) -> dict[str, Any]:
    """What every run line starts with: the question, its gold evidence, and the returned turns
    (at the system budget and with the widest token budget), ranked, with their token counts."""
    return {
        "sample_id": question.sample_id,
        "qa_index": question.qa_index,
        "category": question.category,
        "mode": mode,
        "evidence": question.evidence,
        "dropped_evidence": question.dropped_evidence,
        "returned": returned,
        "returned_wide": wide,
    }


def _returned(result: Any, dia_of: dict[str, list[str]], turn_tokens: dict[str, int]) -> list[dict[str, Any]]:
    """The returned rows' dia_ids in order, each once, with the 1-based rank of the first row
    that cites it (a fact cites several turns, all at its rank)."""
    seen: dict[str, dict[str, Any]] = {}
    for rank, fused in enumerate(result.rows, start=1):
        for dia in dia_of.get(fused.row.row_id, []):
            if dia not in seen:
                seen[dia] = {"dia_id": dia, "tokens": turn_tokens.get(dia, count_tokens(fused.row.text)), "rank": rank}
    return list(seen.values())


def _recall(evidence: list[str], returned: list[dict[str, Any]], budget: int | None) -> float:
    if not evidence:
        return 0.0
    kept, used = set(), 0
    for item in returned:
        if budget is not None and used + item["tokens"] > budget:
            break
        used += item["tokens"]
        kept.add(item["dia_id"])
    return len(set(evidence) & kept) / len(set(evidence))


def _recall_at(evidence: list[str], returned: list[dict[str, Any]], k: int) -> float:
    """Share of the gold turns cited by one of the first ``k`` rows (credited through provenance,
    as the token-budget recall credits them)."""
    if not evidence:
        return 0.0
    cited = {item["dia_id"] for item in returned if item["rank"] <= k}
    return len(set(evidence) & cited) / len(set(evidence))


def _recall_table(lines: list[dict[str, Any]], modes: list[str]) -> dict[str, dict[Any, dict[Any, float]]]:
    table: dict[str, dict[Any, dict[Any, float]]] = {}
    for mode in modes:
        groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        for line in lines:
            if line["mode"] == mode and line["category"] in SCORED_CATEGORIES and line["evidence"]:
                groups[line["category"]].append(line)
                groups["all"].append(line)
        table[mode] = {}
        for category in [*SCORED_CATEGORIES, "all"]:
            group = groups.get(category, [])
            n = max(1, len(group))
            runs = sorted({line["ingestion"] for line in group}) or [0]
            cell: dict[Any, float] = {"n": len(group) // len(runs)}
            cell["system"] = sum(_recall(line["evidence"], line["returned"], None) for line in group) / n
            for budget in TOKEN_BUDGETS:
                cell[budget] = sum(_recall(line["evidence"], line["returned_wide"], budget) for line in group) / n
            for k in RANK_CUTOFFS:
                cell[f"R@{k}"] = sum(_recall_at(line["evidence"], line["returned_wide"], k) for line in group) / n
            cell["rows"] = sum(line["rows_returned"] for line in group) / n
            cell["tokens"] = sum(line["tokens_returned"] for line in group) / n
            per_run = [
                [_recall(line["evidence"], line["returned_wide"], 1024) for line in group if line["ingestion"] == run]
                for run in runs
            ]
            cell["low"] = min((sum(r) / max(1, len(r)) for r in per_run), default=0.0)
            cell["high"] = max((sum(r) / max(1, len(r)) for r in per_run), default=0.0)
            table[mode][category] = cell
    return table


def _plot(table: dict[str, dict[Any, dict[Any, float]]], modes: list[str], path: Path, *, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    categories = [*SCORED_CATEGORIES, "all"]
    labels = [CATEGORY_NAMES.get(c, "all 1–4") if c != "all" else "all 1–4" for c in categories]  # type: ignore[call-overload]
    figure, axis = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(modes)
    for index, mode in enumerate(modes):
        values = [table[mode][c][1024] * 100 for c in categories]
        spread = [  # the mean of equal runs can differ from them in the last bit: never below zero
            [max(0.0, values[i] - table[mode][c]["low"] * 100) for i, c in enumerate(categories)],
            [max(0.0, table[mode][c]["high"] * 100 - values[i]) for i, c in enumerate(categories)],
        ]
        positions = [i + index * width for i in range(len(categories))]
        axis.bar(positions, values, width, yerr=spread, capsize=2, label=f"{mode} (within 1,024 tokens)")
    axis.set_xticks([i + width * (len(modes) - 1) / 2 for i in range(len(categories))], labels)
    axis.set_ylabel("evidence recall (%)")
    axis.set_ylim(0, 100)
    axis.legend()
    axis.set_title(f"{title}: evidence recall per category")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
