"""Sentence embeddings from a transformer ONNX graph on onnxruntime's CPU provider: pooling, normalizing, batching."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ragls.errors import ConfigError, RaglsError

DENSE_HINT = "install the extra with: pip install 'ragls[dense]'"
# Texts per onnxruntime run. Measured on 2 cores with MiniLM: as fast as 8-32 on function-sized chunks and 35%
# faster than 1 on one-line ones; peak RSS grows with batch x length^2 (+35 MB at 4, +130 MB at 8, +650 MB at 32).
DEFAULT_BATCH_SIZE = 4
POOLING_MODES = ("mean", "cls")

# Background work (embedding chunks, building the quantized model) yields the CPU to searches and indexing.
BACKGROUND_NICENESS = 10

Tokenize = Callable[[str], list[int]]
T = TypeVar("T")


class EmbeddingError(RaglsError):
    """A provider that loaded could not embed (a server went away, an answer was malformed)."""


def missing_modules(*names: str) -> list[str]:
    """The top-level modules among `names` that cannot be found (without importing them)."""
    return [name for name in names if importlib.util.find_spec(name) is None]


def import_onnxruntime(what: str) -> Any:
    """onnxruntime, or a ConfigError that says how to install it."""
    try:
        return importlib.import_module("onnxruntime")
    except ImportError as error:
        raise ConfigError(f"{what} needs onnxruntime, which is not installed ({error}); {DENSE_HINT}") from None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def lower_thread_priority() -> None:
    """Run the calling thread at background priority. Threads it starts later (onnxruntime's pool threads)
    inherit it, and without privileges it cannot be raised again."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICENESS)


def at_low_priority(work: Callable[[], T]) -> T:
    """`work` on a thread of its own at background priority; the caller keeps its priority."""
    with ThreadPoolExecutor(1, thread_name_prefix="ragls-background", initializer=lower_thread_priority) as pool:
        return pool.submit(work).result()


def make_session(ort: Any, model_path: Path, threads: int) -> Any:
    """A CPU session that uses at most `threads` cores."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Every batch has its own shape (texts are batched by length); planned memory patterns per shape only grow
    # the peak (measured: batch 16, 835 MB with patterns, 554 MB without).
    options.enable_mem_pattern = False
    # One thread runs on the caller's thread. A pool of several only helps when its threads spin between ops
    # (without spinning, 2 threads ran no faster than 1); spinning burns CPU, so it comes only with threads > 1,
    # and stops when a run ends: threads still spinning made the search's next NumPy product 25x slower.
    spin = "1" if threads > 1 else "0"
    options.add_session_config_entry("session.intra_op.allow_spinning", spin)
    options.add_session_config_entry("session.force_spinning_stop", spin)
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])


class OnnxSentenceEncoder:
    """Token ids in, unit-length float32 rows out; batches by similar length so padding costs little."""

    def __init__(
        self,
        session: Any,
        tokenize: Tokenize,
        *,
        pad_id: int = 0,
        pooling: str = "mean",
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if pooling not in POOLING_MODES:
            raise ValueError(f"pooling must be one of {', '.join(POOLING_MODES)}, got {pooling!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.session = session
        self.tokenize = tokenize
        self.pad_id = pad_id
        self.pooling = pooling
        self.batch_size = batch_size
        self.input_names = {i.name for i in session.get_inputs()}
        for required in ("input_ids", "attention_mask"):
            if required not in self.input_names:
                raise ConfigError(
                    f"the ONNX graph has no `{required}` input (inputs: {', '.join(sorted(self.input_names))}); "
                    "export a sentence-transformers model with input_ids and attention_mask inputs"
                )
        self.output_name, self.output_rank = _choose_output(session)
        self.dims = self._dims()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        encoded = [self.tokenize(text) for text in texts]
        result = np.zeros((len(encoded), self.dims), dtype=np.float32)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            result[rows] = self._run([encoded[i] for i in rows])
        return result

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        width = max(len(ids) for ids in batch)
        input_ids = np.full((len(batch), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        output = np.asarray(self.session.run([self.output_name], feed)[0], dtype=np.float32)
        if self.output_rank == 2:
            pooled = output
        elif self.pooling == "cls":
            pooled = output[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)

    def _dims(self) -> int:
        shape = next(o.shape for o in self.session.get_outputs() if o.name == self.output_name)
        if isinstance(shape[-1], int) and shape[-1] > 0:
            return int(shape[-1])
        return int(self._run([self.tokenize("dimension probe")]).shape[1])


def _choose_output(session: Any) -> tuple[str, int]:
    """Token embeddings to pool (`last_hidden_state`, `token_embeddings`) or else an already pooled output."""
    outputs = session.get_outputs()
    by_name = {o.name: o for o in outputs}
    for name in ("last_hidden_state", "token_embeddings"):
        if name in by_name:
            return name, 3
    for output in outputs:
        if len(output.shape) == 3:
            return output.name, 3
    for output in outputs:
        if len(output.shape) == 2:
            return output.name, 2
    shapes = ", ".join(f"{o.name}{list(o.shape)}" for o in outputs)
    raise ConfigError(f"the ONNX graph has no token-embedding or sentence-embedding output (outputs: {shapes})")
