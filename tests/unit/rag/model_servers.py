"""Test doubles that are real: an HTTP model server on 127.0.0.1 in a thread, and a tiny cross-encoder in ONNX."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class ModelServer:
    """Answers every POST with `reply(path, body)` -> (status, JSON value or raw bytes), after `delay` seconds."""

    reply: Callable[[str, dict[str, Any]], tuple[int, Any]]
    delay: float = 0.0
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


@contextmanager
def model_server(reply: Callable[[str, dict[str, Any]], tuple[int, Any]], delay: float = 0.0) -> Iterator[ModelServer]:
    server = ModelServer(reply, delay)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            server.requests.append({"path": self.path, **body})
            server.headers.append(dict(self.headers))
            time.sleep(server.delay)
            status, value = server.reply(self.path, body)
            payload = value if isinstance(value, bytes) else json.dumps(value).encode()  # bytes go as they are
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up waiting (the slow-server tests)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


# The tiny cross-encoder's vocabulary: the special tokens first (ids 0-3), then words with a 3-d "topic" each.
# Its logit for a pair is <sum of the query's token vectors, sum of the document's token vectors>, so what a
# document is about (and how much) decides, as a real cross-encoder's relevance would.
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
TOPICS = {
    "settings": (1.0, 0.0, 0.0),
    "yaml": (10.0, 0.0, 0.0),
    "cache": (0.0, 1.0, 0.0),
    "evict": (0.0, 5.0, 0.0),
    "socket": (0.0, 0.0, 1.0),
}
VOCAB = SPECIAL + list(TOPICS)


def build_cross_encoder(root: Path, tokenizer: str = "json") -> Path:
    """model.onnx (inputs input_ids, attention_mask, token_type_ids; output logits [B, 1]) and a tokenizer."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    root.mkdir(parents=True, exist_ok=True)
    table = np.zeros((len(VOCAB), 3), dtype=np.float32)
    for word, vector in TOPICS.items():
        table[VOCAB.index(word)] = vector
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["embedded"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["second"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["mask", "second"], ["document_mask"]),
        helper.make_node("Sub", ["mask", "document_mask"], ["query_mask"]),
        helper.make_node("Unsqueeze", ["document_mask", "last_axis"], ["document_mask3"]),
        helper.make_node("Unsqueeze", ["query_mask", "last_axis"], ["query_mask3"]),
        helper.make_node("Mul", ["embedded", "document_mask3"], ["document_tokens"]),
        helper.make_node("Mul", ["embedded", "query_mask3"], ["query_tokens"]),
        helper.make_node("ReduceSum", ["document_tokens", "token_axis"], ["document"], keepdims=0),
        helper.make_node("ReduceSum", ["query_tokens", "token_axis"], ["query"], keepdims=0),
        helper.make_node("Mul", ["query", "document"], ["products"]),
        helper.make_node("ReduceSum", ["products", "token_axis"], ["logits"], keepdims=1),
    ]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "last_axis"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "token_axis"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(root / "model.onnx"))
    if tokenizer == "json":
        _save_tokenizer_json(root / "tokenizer.json")
    else:
        (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return root


def _save_tokenizer_json(path: Path) -> None:
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel

    tokenizer = Tokenizer(WordLevel({word: i for i, word in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer.save(str(path))
