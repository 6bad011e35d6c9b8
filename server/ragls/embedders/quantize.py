"""A faster copy of a BERT ONNX model: fused operators, matmuls quantized to int8, built once and cached.

The bundled MiniLM stores int8 weights but dequantizes them to float32 when it loads, so every query
streams about 42 MB of float32 weights, through ~450 small nodes. The copy folds those weights,
rebuilds the encoder from onnxruntime's fused operators (fuse.py), and quantizes each weight matmul
per output channel, with the activations quantized per run. Against the model as shipped a query
embedding is 2.5x faster, background embedding 2.5x, for a cosine of 0.99 and 0.001-0.009 less MRR@10
(measured on the bench's dev corpora; docs/benchmarks.md).

Building needs the `onnx` package (onnxruntime's quantizer is written on it) and takes a few seconds,
so it runs in the background embedder, and the result is reused by every later session.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragls.embedders.fuse import fuse_bert
from ragls.embedders.runtime import DENSE_HINT, import_onnxruntime, missing_modules
from ragls.errors import ConfigError

# Bump when the steps below change, so copies built by the old steps are not used.
RECIPE = "fq1"
QUANTIZER_MODULES = ("onnx",)


def quantizer_available() -> bool:
    """Whether this install can build the quantized copy (found, not imported)."""
    return not missing_modules(*QUANTIZER_MODULES)


def quantized_copy_path(directory: Path, source_sha256: str) -> Path:
    """Where the copy of the model with this digest lives; onnxruntime's version is in the name, as its quantizer
    and kernels decide what the copy holds."""
    ort = import_onnxruntime("the quantized model")
    return directory / f"model-{source_sha256[:16]}-{RECIPE}-ort{ort.__version__}.onnx"


def build_quantized_copy(source: Path, target: Path, *, num_heads: int) -> Path:
    """Fold the graph's constants, fuse it, quantize its weight matmuls, and move the result into place atomically.

    Two processes building at once each write their own temporary folder; the last rename wins and
    both files are equal.
    """
    missing = missing_modules(*QUANTIZER_MODULES)
    if missing:
        raise ConfigError(f"quantizing the model needs {', '.join(missing)}, which is not installed; {DENSE_HINT}")
    ort = import_onnxruntime("quantizing the model")
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".quantizing-", dir=target.parent) as work:
        folded = Path(work) / "folded.onnx"
        fused = Path(work) / "fused.onnx"
        quantized = Path(work) / "quantized.onnx"
        fold_constants(ort, source, folded)
        fuse_bert(folded, fused, num_heads=num_heads)
        with _without_preprocessing_advice():
            quantize_dynamic(
                fused,
                quantized,
                weight_type=QuantType.QInt8,
                per_channel=True,
                # Only products with a constant weight (quantizing attention's activation x activation
                # products as well cost 0.05 cosine); the fused operators have no ONNX shape inference,
                # and their outputs are all float32.
                extra_options={"MatMulConstBOnly": True, "DefaultTensorType": TensorProto.FLOAT},
            )
        os.replace(quantized, target)
    return target


def fold_constants(ort: Any, source: Path, target: Path) -> None:
    """onnxruntime's basic optimizations turn the int8 -> float32 dequantization into plain float32 weights,
    which the quantizer can then see as constants."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(target)
    options.log_severity_level = 3
    ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])


class _DropAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Please consider to run pre-processing")


@contextlib.contextmanager
def _without_preprocessing_advice() -> Iterator[None]:
    """The quantizer advises "pre-processing" on the root logger at every run; that advice is about static
    quantization and would only puzzle someone reading the server's log."""
    root = logging.getLogger()
    advice = _DropAdvice()
    root.addFilter(advice)
    try:
        yield
    finally:
        root.removeFilter(advice)
