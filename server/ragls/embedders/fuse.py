"""Rebuild a BERT encoder graph from onnxruntime's fused operators, so a short query runs ~50 nodes, not ~450.

The exporter spells attention as dozens of small nodes (shape arithmetic, reshapes, transposes, masks)
that onnxruntime's own fusions do not recognize. For a 15-token query those nodes cost as much as the
matmuls. This module reads the weights of a constant-folded BERT export by their Hugging Face names and
writes the same network as EmbedLayerNormalization, Attention, SkipLayerNormalization and BiasGelu from
the `com.microsoft` domain: in float32 it gives the same vectors (cosine 1.0000 on the bench's queries).

Needs the `onnx` package; the caller checks for it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

CONTRIB = "com.microsoft"
OUTPUT = "last_hidden_state"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class FuseError(ValueError):
    """The graph is not the BERT encoder this module knows how to rebuild."""


def fuse_bert(source: Path, target: Path, *, num_heads: int) -> None:
    """Write `source` (a constant-folded BERT export) to `target` as fused operators."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = onnx.load(str(source)).graph
    weights = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    builder = _Builder(graph, weights)
    prefix = builder.prefix()
    embeddings = f"{prefix}embeddings."

    for name in INPUTS:
        builder.node("Cast", [name], [f"{name}_int32"], to=TensorProto.INT32)
    builder.node(
        "EmbedLayerNormalization",
        [
            "input_ids_int32",
            "token_type_ids_int32",
            builder.constant("word_embeddings", weights[f"{embeddings}word_embeddings.weight"]),
            builder.constant("position_embeddings", weights[f"{embeddings}position_embeddings.weight"]),
            builder.constant("token_type_embeddings", weights[f"{embeddings}token_type_embeddings.weight"]),
            builder.constant("embeddings_gamma", weights[f"{embeddings}LayerNorm.weight"]),
            builder.constant("embeddings_beta", weights[f"{embeddings}LayerNorm.bias"]),
            "attention_mask_int32",
        ],
        ["hidden_0", "mask_index"],
        domain=CONTRIB,
        epsilon=builder.epsilon(f"{embeddings}LayerNorm.weight"),
    )
    layers = builder.layers(prefix)
    hidden = "hidden_0"
    for index in layers:
        output = OUTPUT if index == layers[-1] else f"hidden_{index + 1}"
        _encoder_layer(builder, f"{prefix}encoder.layer.{index}.", f"layer{index}", hidden, output, num_heads)
        hidden = output

    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in INPUTS]
    width = weights[f"{embeddings}LayerNorm.weight"].shape[0]
    outputs = [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", "sequence", width])]
    fused = helper.make_graph(builder.nodes, "bert-fused", inputs, outputs, builder.initializers)
    model = helper.make_model(fused, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(CONTRIB, 1)])
    onnx.save(model, str(target))


def _encoder_layer(builder: _Builder, names: str, tag: str, hidden: str, output: str, num_heads: int) -> None:
    """Self-attention, then the feed-forward block, each closed by a residual LayerNorm (post-norm BERT)."""
    attention = f"{names}attention."
    projections = ("query", "key", "value")
    qkv_weight = np.concatenate([builder.weight_of(f"{attention}self.{p}.bias") for p in projections], axis=1)
    qkv_bias = np.concatenate([builder.weights[f"{attention}self.{p}.bias"] for p in projections])
    builder.node(
        "Attention",
        [
            hidden,
            builder.constant(f"{tag}_qkv", qkv_weight),
            builder.constant(f"{tag}_qkv_bias", qkv_bias),
            "mask_index",
        ],
        [f"{tag}_attention"],
        domain=CONTRIB,
        num_heads=num_heads,
    )
    builder.projection(f"{tag}_attention", f"{attention}output.dense", f"{tag}_attention_out")
    builder.skip_layer_norm(f"{tag}_attention_out", hidden, f"{attention}output", f"{tag}_attention_norm")

    builder.projection(f"{tag}_attention_norm", f"{names}intermediate.dense", f"{tag}_intermediate")
    bias = builder.constant(f"{tag}_intermediate_bias", builder.weights[f"{names}intermediate.dense.bias"])
    builder.node("BiasGelu", [f"{tag}_intermediate", bias], [f"{tag}_gelu"], domain=CONTRIB)
    builder.projection(f"{tag}_gelu", f"{names}output.dense", f"{tag}_out")
    builder.skip_layer_norm(f"{tag}_out", f"{tag}_attention_norm", f"{names}output", output)


class _Builder:
    """Reads weights out of the folded graph and collects the nodes and initializers of the new one."""

    def __init__(self, graph: Any, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.source_nodes = list(graph.node)
        self.producer = {output: node for node in self.source_nodes for output in node.output}
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []

    def prefix(self) -> str:
        for name in self.weights:
            if name.endswith("embeddings.word_embeddings.weight"):
                return name[: -len("embeddings.word_embeddings.weight")]
        raise FuseError("no embeddings.word_embeddings.weight initializer: not a BERT export")

    def layers(self, prefix: str) -> list[int]:
        pattern = re.compile(re.escape(prefix) + r"encoder\.layer\.(\d+)\.")
        found = sorted({int(m.group(1)) for name in self.weights if (m := pattern.match(name))})
        if not found:
            raise FuseError("no encoder.layer.N weights: not a BERT export")
        return found

    def weight_of(self, bias_name: str) -> np.ndarray:
        """The [in, out] matrix of the linear layer whose bias is `bias_name`: the MatMul feeding its Add."""
        for node in self.source_nodes:
            if node.op_type == "Add" and bias_name in node.input:
                other = next(name for name in node.input if name != bias_name)
                matmul = self.producer.get(other)
                if matmul is not None and matmul.op_type == "MatMul" and matmul.input[1] in self.weights:
                    return self.weights[matmul.input[1]]
        raise FuseError(f"no MatMul + Add with bias {bias_name}: an unexpected export")

    def epsilon(self, gamma_name: str) -> float:
        for node in self.source_nodes:
            if node.op_type == "LayerNormalization" and gamma_name in node.input:
                return next((a.f for a in node.attribute if a.name == "epsilon"), 1e-5)
        raise FuseError(f"no LayerNormalization with weight {gamma_name}: an unexpected export")

    def constant(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op_type: str, inputs: list[str], outputs: list[str], domain: str = "", **attributes: Any) -> None:
        from onnx import helper

        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=outputs[0], domain=domain, **attributes))

    def projection(self, source: str, layer: str, output: str) -> None:
        """A MatMul by the layer's weight, without its bias: the next fused node adds it."""
        self.node("MatMul", [source, self.constant(f"{output}_weight", self.weight_of(f"{layer}.bias"))], [output])

    def skip_layer_norm(self, source: str, skip: str, block: str, output: str) -> None:
        """LayerNorm(source + the block's dense bias + skip) in one node."""
        self.node(
            "SkipLayerNormalization",
            [
                source,
                skip,
                self.constant(f"{output}_gamma", self.weights[f"{block}.LayerNorm.weight"]),
                self.constant(f"{output}_beta", self.weights[f"{block}.LayerNorm.bias"]),
                self.constant(f"{output}_bias", self.weights[f"{block}.dense.bias"]),
            ],
            [output],
            domain=CONTRIB,
            epsilon=self.epsilon(f"{block}.LayerNorm.weight"),
        )
