"""The local embedder's two pipelines in one run (ADR 0063): ONNX Runtime (now) against
sentence-transformers on torch (before), each with one inference thread, as API and worker
processes run them (ADR 0052).

Two workloads from the LoCoMo dev split (read in place, ``apps.evaluation.locomo``):

- **query**: the questions, one per call, as a search embeds its query;
- **worker batch**: the turns as ``Speaker: text``, 64 per call, as a worker embeds the rows of
  a batch of writes in one call (ADR 0054).

Both pipelines run alternately, call by call, so the machine's load falls on both alike; the
figures are texts per second and p50 per call, and their ratio. The vectors of the two are
compared too (the lowest cosine between them).

``--write-docs`` records the table in docs/benchmarks.md.
"""

from __future__ import annotations

import os
import platform
import time
from argparse import ArgumentParser
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand
from tqdm import tqdm

from apps.evaluation.locomo import load_conversations
from apps.evaluation.report import write_section
from apps.platform.stats import percentile
from apps.providers.minilm_onnx import MiniLM, weights_path

WORKER_BATCH = 64

Encoder = Callable[[Sequence[str]], np.ndarray]


def _reference() -> Encoder:
    """The pipeline before ADR 0063: sentence-transformers on torch, batches of 64."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    model = SentenceTransformer(str(weights_path()), device="cpu", local_files_only=True)
    return lambda texts: model.encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False)


class Command(BaseCommand):
    help = "The local embedder on ONNX Runtime against sentence-transformers, in one run."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--queries", type=int, default=200, help="Questions embedded one per call.")
        parser.add_argument("--batches", type=int, default=12, help="Calls of 64 turns.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        conversations = load_conversations()
        questions = [q.question for c in conversations for q in c.questions][: options["queries"]]
        turns = [f"{t.speaker}: {t.text}" for c in conversations for s in c.sessions for t in s.turns]
        batches = [turns[i : i + WORKER_BATCH] for i in range(0, len(turns), WORKER_BATCH)][: options["batches"]]
        pipelines: dict[str, Encoder] = {"onnx runtime (now)": MiniLM(threads=1).encode, "torch (before)": _reference()}
        rows = []
        lowest_cosine = 1.0
        for workload, calls in (("query", [[q] for q in questions]), ("worker batch", batches)):
            seconds: dict[str, list[float]] = {name: [] for name in pipelines}
            for encode in pipelines.values():
                encode(calls[0])  # warm
            for call in tqdm(calls, desc=workload, unit="call"):
                vectors = []
                for name, encode in pipelines.items():
                    start = time.perf_counter()
                    vectors.append(encode(call))
                    seconds[name].append(time.perf_counter() - start)
                lowest_cosine = min(lowest_cosine, float((vectors[0] * vectors[1]).sum(axis=1).min()))
            texts = sum(len(call) for call in calls)
            rate = {name: texts / sum(spent) for name, spent in seconds.items()}
            for name, spent in seconds.items():
                rows.append((workload, name, len(calls), texts, rate[name], 1000 * percentile(spent, 0.5)))
            rows.append((workload, "ratio", len(calls), texts, rate["onnx runtime (now)"] / rate["torch (before)"], 0))
        report = self._report(rows, lowest_cosine)
        self.stdout.write(report)
        if options["write_docs"]:
            write_section("bench_embedder", report)

    @staticmethod
    def _report(rows: list[tuple[str, str, int, int, float, float]], lowest_cosine: float) -> str:
        lines = [
            "## The local embedder (`python manage.py bench_embedder --write-docs`)",
            "",
            f"all-MiniLM-L6-v2, one inference thread each, {platform.machine()}, {os.cpu_count()} cores; "
            f"load average {os.getloadavg()[0]:.1f} at the end. The two pipelines run alternately, call by call. "
            f"Lowest cosine between their vectors: {lowest_cosine:.6f}.",
            "",
            "| workload | pipeline | calls | texts | texts/s | p50 ms per call |",
            "|---|---|---|---|---|---|",
        ]
        for workload, name, calls, texts, rate, p50 in rows:
            if name == "ratio":
                lines.append(f"| {workload} | **now ÷ before** | | | **{rate:.2f}×** | |")
            else:
                lines.append(f"| {workload} | {name} | {calls} | {texts} | {rate:.1f} | {p50:.1f} |")
        return "\n".join(lines) + "\n"
