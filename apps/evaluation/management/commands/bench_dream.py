"""The cost and effect of semantic AutoDream on the LoCoMo dev split.

Runs ``eval_locomo --mode graph,graph+dream``: every conversation is ingested twice, once with
graph indexing only and once with the AutoDream schedule of the ingestion driver (a request
after every 5 sessions and after the last, ``final``), then every question is asked of both.
Reports, per request: the rounds it ran, the pairs considered / verified (one decision each) /
merged / rejected / answered by the cache / skipped by a cap, its wall time, the graph size
before and after, and the memory size at that point; the dream time per request against the
total memory size (plot); and evidence recall ``graph`` vs ``graph+dream``.
"""

from __future__ import annotations

import json
import platform
import random
import time
import uuid
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand
from tqdm import tqdm

from apps.dream.candidates import FINAL_CAP, INTERMEDIATE_CAP, REPAIR_CAP
from apps.dream.candidates import ROUND_CAPS as CAPS
from apps.dream.services import dream_run
from apps.evaluation.management.commands.eval_locomo import CATEGORY_NAMES, SCORED_CATEGORIES, _recall_table
from apps.evaluation.near_duplicates import write_near_duplicate_anchors
from apps.evaluation.report import BENCHMARKS, write_section
from apps.graph import store
from apps.memory.models import SemanticItem
from apps.tenancy import services as tenancy
from apps.tenancy.scope import organization_scope

MODES = ["graph", "graph+dream"]


class Command(BaseCommand):
    help = "Semantic AutoDream cost per round and its effect on LoCoMo evidence recall."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--data", type=Path, default=None, help="A LoCoMo-format JSON file (default: the dev split)."
        )
        parser.add_argument("--conversations", type=int, default=0, help="Only the first N conversations (0: all).")
        parser.add_argument("--out", type=Path, default=Path("var/bench_dream.jsonl"), help="The eval run file.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")
        parser.add_argument(
            "--reuse-run", action="store_true", help="Report from the run files of an earlier run (no ingestion)."
        )
        parser.add_argument(
            "--sizes",
            default="1000,4000,16000",
            help="Synthetic subjects of these many semantic-backed anchors, one fixed frontier each (0: none).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        out: Path = options["out"]
        sizes = [int(size) for size in options["sizes"].split(",") if int(size) > 0]
        synthetic = [_synthetic_round(size) for size in tqdm(sizes, desc="synthetic subjects", unit="subject")]
        if not options["reuse_run"]:
            extra = {"data": options["data"]} if options["data"] else {}
            call_command(
                "eval_locomo",
                mode=",".join(MODES),
                out=out,
                conversations=options["conversations"],
                stdout=self.stdout,
                **extra,
            )
        lines = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        requests = [json.loads(line) for line in out.with_suffix(".dream.jsonl").read_text().splitlines() if line]
        body = _report(lines, requests, out, synthetic)
        self.stdout.write(body)
        if options["write_docs"]:
            write_section("bench_dream", body)


def _report(
    lines: list[dict[str, Any]], requests: list[dict[str, Any]], out: Path, synthetic: list[dict[str, Any]]
) -> str:
    table = _recall_table(lines, MODES)
    plot = _plot(requests, synthetic)
    scaling = [
        "| anchors in the subject | frontier anchors | pairs considered | verified | merged | rejected | wall time |",
        "|---|---|---|---|---|---|---|",
        *(
            f"| {r['anchors']:,} | {r['frontier']} | {r['pairs_considered']} | {r['verified']} | {r['merged']} "
            f"| {r['rejected']} | {r['wall_ms'] / 1000:.2f} s |"
            for r in synthetic
        ),
    ]
    per_round = [
        "| conversation | request | rounds | memory rows | sources | pairs considered | verified (decisions) "
        "| merged | rejected | cached | skipped by cap | wall time | anchors before → after | frames before → after |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in requests:
        kinds = "+".join(x["kind"] for x in r["rounds"])
        sources = sum(x["sources"] for x in r["rounds"])
        per_round.append(
            f"| {r['sample_id']} | {r['request']} | {kinds} | {r['memory_rows']} | {sources} | {r['pairs_considered']} "
            f"| {r['verified']} | {r['merged']} | {r['rejected']} | {r['cached']} | {r['skipped_by_cap']} "
            f"| {r['wall_ms'] / 1000:.2f} s | {r['anchors_before']} → {r['anchors_after']} "
            f"| {r['frames_before']} → {r['frames_after']} |"
        )
    total = {k: sum(r[k] for r in requests) for k in ("verified", "merged", "rejected", "cached", "skipped_by_cap")}
    wall = sum(r["wall_ms"] for r in requests) / 1000
    caps_held = all(
        x["pairs_considered"] - x["cached"] - x["skipped_by_cap"] <= CAPS[x["kind"]]
        for r in requests
        for x in r["rounds"]
    )
    recall = [
        "| category | questions | graph @ system budget | graph+dream @ system budget | graph @1024 tok | graph+dream @1024 tok |",
        "|---|---|---|---|---|---|",
    ]
    for category in [*SCORED_CATEGORIES, "all"]:
        g, d = table["graph"][category], table["graph+dream"][category]
        name = CATEGORY_NAMES.get(category, "all 1–4") if category != "all" else "all 1–4"  # type: ignore[call-overload]
        recall.append(f"| {name} | {g['n']} | {g['system']:.1%} | {d['system']:.1%} | {g[1024]:.1%} | {d[1024]:.1%} |")
    conversations = sorted({r["sample_id"] for r in requests})
    return "\n".join(
        [
            "## Semantic AutoDream: cost per round and recall (`python manage.py bench_dream --write-docs`)",
            "",
            f"{len(conversations)} conversations of the LoCoMo dev split, local providers (the local decision "
            f"of ADR 0059), {platform.machine()}, 2 cores. Each conversation is ingested twice (one chunk per session, "
            "indexed): once without AutoDream (`graph`) and once with the ingestion driver's schedule — a request after "
            "every 5 sessions and a `final` one after the last, each run synchronously right after its chunks were "
            "indexed (`graph+dream`). A request is one round (intermediate or final) plus, when a final round merged, "
            f"one repair round. Caps: {INTERMEDIATE_CAP} / {FINAL_CAP} / {REPAIR_CAP} unseen pairs; "
            f"held in every round: {'yes' if caps_held else 'NO'}. Run files: `{out}`, `{out.with_suffix('.dream.jsonl')}`.",
            "",
            f"Totals: {len(requests)} requests, {total['verified']} decisions, {total['merged']} merges, "
            f"{total['rejected']} rejections (cached), {total['cached']} pairs answered by the cache, "
            f"{total['skipped_by_cap']} pairs left for later by a cap; {wall:.1f} s of dream time in all.",
            "",
            *per_round,
            "",
            *_merge_list(requests),
            _effect_note(requests),
            "",
            *(
                _synthetic_section(scaling)
                if synthetic
                else ["Cost on synthetic subjects: not measured in this run (`--sizes 0`).", ""]
            ),
            "Dream time per request against the memory size when it ran (LoCoMo, where each request's frontier is "
            "the sessions written since the last one):",
            "",
            f"![dream time per request against memory size]({plot.relative_to(BENCHMARKS.parent)})",
            "",
            "Evidence recall, same retrieval over each graph (recall as in the eval_locomo section):",
            "",
            *recall,
        ]
    )


def _synthetic_section(scaling: list[str]) -> list[str]:
    return [
        "Cost against memory size on synthetic subjects (`apps.evaluation` bench, seed 11): N semantic-backed "
        "object anchors in near-duplicate pairs (cosine ≈ 0.99; every 10th pair a containment the local decision "
        "merges, e.g. `steel gadget7` / `stainless steel gadget7`), real name-index reads (exact scan up to 5,000 "
        "anchors, HNSW above), and one fixed frontier of 60 new semantic rows, each naming one anchor:",
        "",
        *scaling,
        "",
        "With the frontier fixed, time per round still grows with the subject, though far slower than the "
        "subject (16× the anchors, about 3× the time): the nearest-name reads are batched and indexed, but the "
        "graph's anchor lookups by key still scan the index entries of the whole subject. That lookup is the "
        "next fix; the claim that the cost follows the frontier alone is not met yet.",
        "",
    ]


def _merge_list(requests: list[dict[str, Any]]) -> list[str]:
    """Every merge of the run (also in the run file, under ``merged_pairs``)."""
    merges = [(r["sample_id"], r["request"], m) for r in requests for m in r.get("merged_pairs", [])]
    if not merges:
        return []
    return [
        "Every merge of the run (from → into, type, cosine of the two names, decided by):",
        "",
        *(
            f"- {sample} request {request}: {m['from']} → {m['into']} ({m['type']}, {m['cosine']:.2f}, "
            f"{m['decided_by']})"
            for sample, request, m in merges
        ),
        "",
    ]


def _effect_note(requests: list[dict[str, Any]]) -> str:
    semantic = [x["sources"] for r in requests for x in r["rounds"]]
    if any(r["verified"] for r in requests):
        return (
            "Recall differences below combine the merges' effect with the run-to-run variation of two independent "
            "ingestions."
        )
    return (
        f"With the local writers few LoCoMo memories are semantic ({sum(semantic)} eligible sources in "
        f"{len(semantic)} rounds), and no pair reached a decision: the graph was left unchanged, and the "
        "recall differences below are the run-to-run variation of two independent ingestions, not an effect of "
        "AutoDream."
    )


def _synthetic_round(size: int) -> dict[str, Any]:
    """One intermediate round over a fixed frontier of 60 anchors, in a subject of ``size`` anchors."""
    rng = random.Random(11)
    organization = tenancy.organization_create(name="Dream bench", slug=f"bench-dream-{uuid.uuid4().hex[:8]}")
    try:
        with organization_scope(organization.id):
            subject = tenancy.subject_create(organization_id=organization.id, external_id="synthetic", kind="user")
            old_chunk, new_chunk = uuid.uuid4(), uuid.uuid4()
            pairs = size // 2
            rows = SemanticItem.objects.bulk_create(
                [
                    SemanticItem(
                        organization_id=organization.id,
                        subject=subject,
                        source_kind="api",
                        chunk_id=old_chunk,
                        name=f"gadget{n}",
                        summary=f"gadget{n}",
                        details=f"gadget{n}",
                        source="bench",
                        index_status="indexed",
                    )
                    for n in range(pairs)
                ],
                batch_size=2000,
            )
            names = [
                (f"steel gadget{n}", f"stainless steel gadget{n}")
                if n % 10 == 0
                else (f"gadget{n} alpha", f"gadget{n} beta")
                for n in range(pairs)
            ]
            anchors = write_near_duplicate_anchors(subject, pairs=names, row_ids=[str(row.id) for row in rows], seed=11)
        with organization_scope(organization.id):  # the frontier: 60 new rows naming anchors of 60 pairs
            frontier: list[tuple[dict[str, Any], str]] = []
            for n in rng.sample(range(pairs), 60):
                row = SemanticItem.objects.create(
                    organization_id=organization.id,
                    subject=subject,
                    source_kind="api",
                    chunk_id=new_chunk,
                    name=f"gadget{n} news",
                    summary="news",
                    details="news",
                    source="bench",
                    index_status="indexed",
                )
                frontier.append((anchors[2 * n], str(row.id)))
            store.anchors_write(
                organization_id=organization.id,
                created=[],
                updated=[
                    {**a, "semantic_ids": [*a["semantic_ids"], row_id], "mention_count": 2} for a, row_id in frontier
                ],
            )
        with organization_scope(organization.id):
            started = time.perf_counter()
            summary = dream_run(subject=subject, chunk_ids=[new_chunk], final=False)
            wall_ms = (time.perf_counter() - started) * 1000
    finally:
        tenancy.organization_offboard(organization_id=organization.id)
    return {
        "anchors": len(anchors),
        "frontier": 60,
        "wall_ms": wall_ms,
        **{k: v for k, v in summary.items() if k != "rounds"},
    }


def _plot(requests: list[dict[str, Any]], synthetic: list[dict[str, Any]]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = BENCHMARKS.parent / "img" / "bench_dream.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    figure, (left, right, far) = plt.subplots(1, 3, figsize=(14, 4))
    for sample in sorted({r["sample_id"] for r in requests}):
        mine = [r for r in requests if r["sample_id"] == sample]
        left.plot([r["memory_rows"] for r in mine], [r["wall_ms"] / 1000 for r in mine], marker="o", label=sample)
        right.plot([r["memory_rows"] for r in mine], [r["verified"] for r in mine], marker="o", label=sample)
    left.set_xlabel("episodic + semantic rows of the subject")
    left.set_ylabel("dream wall time per request (s)")
    left.set_ylim(bottom=0)
    right.set_xlabel("episodic + semantic rows of the subject")
    right.set_ylabel("pairs verified per request")
    right.axhline(FINAL_CAP + REPAIR_CAP, color="grey", linestyle=":", label="final + repair cap")
    right.set_ylim(bottom=0)
    far.plot([r["anchors"] for r in synthetic], [r["wall_ms"] / 1000 for r in synthetic], marker="o", label="wall time")
    if synthetic:
        far.set_xscale("log")
    far.set_xlabel("anchors of the subject (synthetic, fixed frontier of 60)")
    far.set_ylabel("dream wall time (s)")
    far.set_ylim(bottom=0)
    for axis in (left, right, far):
        axis.legend(fontsize="small")
    figure.suptitle("LoCoMo dev split: semantic AutoDream cost per request")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
