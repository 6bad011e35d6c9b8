"""The stdlib Python client (clients/python) against the real `ragls serve`."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.clients.conftest import REPO
from tests.sample_workspace import write_tree

from ragls_client import RaglsClient, RaglsError  # isort: skip  (importable through conftest's sys.path)
from ragls_client.errors import INDEX_FAILED, INVALID_PARAMS, SERVER_EXITED  # isort: skip

SERVER_COMMAND = [sys.executable, "-m", "ragls", "serve"]
TIMEOUT = 30.0


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("client") / "project")


@pytest.fixture(scope="module")
def client(project: Path) -> Iterator[RaglsClient]:
    with RaglsClient(project, command=SERVER_COMMAND, timeout=TIMEOUT) as ragls:
        yield ragls


def first_folder(answer: dict[str, Any]) -> dict[str, Any]:
    folders = answer["folders"]
    assert len(folders) == 1
    return folders[0]


@pytest.mark.timeout(60)
def test_start_waits_for_the_first_generation(client: RaglsClient, project: Path) -> None:
    folder = first_folder(client.status())
    assert folder["generation"] >= 1
    assert folder["state"] == "idle"
    assert folder["folder"].rstrip("/") == project.resolve().as_uri()
    assert client.server_info["name"] == "ragls"


@pytest.mark.timeout(60)
def test_search_answers_in_the_protocol_shape(client: RaglsClient, project: Path) -> None:
    answer = client.search("validate bearer token", top_k=3)
    assert set(answer) == {"results", "complete", "tookMs"}
    assert answer["complete"] is True
    best = answer["results"][0]
    assert best["metadata"]["file"] == "src/auth/middleware.py"
    assert best["metadata"]["source"] == "file"
    assert best["uri"] == (project.resolve() / "src/auth/middleware.py").as_uri()
    start, end = best["range"]["start"], best["range"]["end"]
    assert start["line"] == best["metadata"]["startLine"] - 1
    assert end["line"] == best["metadata"]["endLine"] - 1
    assert len(answer["results"]) <= 3
    assert all("swordfish" not in result["content"] for result in client.search("launch code")["results"])


@pytest.mark.timeout(60)
def test_min_score_keeps_only_results_at_least_that_relevant(client: RaglsClient) -> None:
    everything = client.search("connection pool token router", top_k=20)["results"]
    assert len(everything) >= 2
    threshold = everything[len(everything) // 2]["score"]
    kept = client.search("connection pool token router", top_k=20, min_score=threshold)["results"]
    assert kept and len(kept) < len(everything) and all(result["score"] >= threshold for result in kept)
    prompt = client.context_prompt("validate bearer token", top_k=20, min_score=1.0)
    assert all(result["score"] >= 1.0 for result in prompt["results"])
    with pytest.raises(RaglsError, match="minScore"):
        client.search("validate bearer token", min_score=2.0)


@pytest.mark.timeout(60)
def test_filters_are_exact_metadata_matches(client: RaglsClient) -> None:
    results = client.search("rate limiting quota", filters={"language": "markdown"})["results"]
    assert results
    assert {result["metadata"]["language"] for result in results} == {"markdown"}


@pytest.mark.timeout(60)
def test_context_prompt_in_both_formats(client: RaglsClient) -> None:
    fenced = client.context_prompt("How does AuthMiddleware check requests?", top_k=2)
    assert fenced["prompt"].startswith("<tnsai-memory>")
    question = "How does AuthMiddleware check requests?"
    assert fenced["prompt"].endswith(f"<tnsai-user-message>\n{question}\n</tnsai-user-message>")
    assert 1 <= len(fenced["results"]) <= 2
    plain = client.context_prompt("connection pool", format="plain")
    assert plain["prompt"].startswith("[Relevant code context]")
    assert re.search(r"--- file: src/db/pool\.py \(lines \d+-\d+\) ---", plain["prompt"])


@pytest.mark.timeout(60)
def test_reindex_answers_after_the_run(client: RaglsClient) -> None:
    before = first_folder(client.status())["generation"]
    after = first_folder(client.reindex(full=True))
    assert after["generation"] == before + 1
    assert after["state"] == "idle"


@pytest.mark.timeout(60)
def test_documents_round_trip(client: RaglsClient) -> None:
    added = client.add_document("Deploy with kubectl apply -f k8s/", {"kind": "runbook", "my-key": 1}, id="deploy")
    assert added == {"id": "deploy"}
    document = client.get_document("deploy")["document"]
    assert document["content"] == "Deploy with kubectl apply -f k8s/"
    assert document["metadata"] == {"kind": "runbook", "my-key": 1, "source": "manual"}
    listed = client.list_documents()["documents"]
    assert [(d["id"], d["contentLength"]) for d in listed] == [("deploy", 33)]
    found = client.search("kubectl deploy")["results"]
    assert found[0]["id"] == "deploy" and "uri" not in found[0]
    assert client.remove_document("deploy") == {"removed": True}
    assert client.remove_document("deploy") == {"removed": False}
    assert client.get_document("deploy") == {"document": None}


@pytest.mark.timeout(60)
def test_execute_command_takes_the_params_object(client: RaglsClient) -> None:
    found = client.execute_command("ragls.search", {"query": "connection pool", "topK": 1})
    assert found["results"][0]["metadata"]["file"] == "src/db/pool.py"
    assert first_folder(client.execute_command("ragls.status"))["generation"] >= 1
    with pytest.raises(RaglsError) as caught:
        client.execute_command("ragls.contextPrompt", {"query": ""})
    assert caught.value.code == INVALID_PARAMS


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.search(""), "query: must be a non-empty string, got ''"),
        (lambda c: c.search("token", top_k=0), "topK: must be an integer 1..100, got 0"),
        (lambda c: c.search("token", top_k=101), "topK: must be an integer 1..100, got 101"),
        (lambda c: c.context_prompt("token", format="yaml"), "format: must be one of fenced, plain, got 'yaml'"),
        (
            lambda c: c.status(folder="file:///nowhere/at/all"),
            "folder: unknown workspace folder 'file:///nowhere/at/all'",
        ),
        (lambda c: c.add_document("   "), "content: must be a non-empty string"),
    ],
)
def test_bad_params_raise_the_servers_message(client: RaglsClient, call: Any, message: str) -> None:
    with pytest.raises(RaglsError) as caught:
        call(client)
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message.startswith(message)
    assert "Traceback" not in caught.value.message
    assert first_folder(client.status())["state"] == "idle"


@pytest.mark.timeout(60)
def test_server_requests_are_answered_so_progress_flows(client: RaglsClient) -> None:
    """The server awaits window/workDoneProgress/create before reporting; progress proves we answered."""
    kinds = [params["value"]["kind"] for method, params in client.notifications if method == "$/progress"]
    assert kinds[0] == "begin" and "end" in kinds
    titles = [params["value"].get("title", "") for method, params in client.notifications if method == "$/progress"]
    assert any(title.startswith("Indexing") for title in titles)


@pytest.mark.timeout(60)
def test_changed_files_are_searchable_without_a_reindex(workspace: Path) -> None:
    with RaglsClient(workspace, command=SERVER_COMMAND, timeout=TIMEOUT) as ragls:
        (workspace / "src" / "billing.py").write_text("def compute_invoice_total(lines):\n    return sum(lines)\n")
        wait_until(lambda: "src/billing.py" in _files(ragls, "compute_invoice_total"))
        (workspace / "src" / "billing.py").unlink()
        wait_until(lambda: "src/billing.py" not in _files(ragls, "compute_invoice_total"))


@pytest.mark.timeout(60)
def test_several_folders_and_clear(tmp_path: Path) -> None:
    first = write_tree(tmp_path / "first")
    second = write_tree(tmp_path / "second", {"notes.md": "# Notes\n\nThe quarterly budget review.\n"})
    with RaglsClient([first, second], command=SERVER_COMMAND, timeout=TIMEOUT) as ragls:
        uris = [folder["folder"].rstrip("/") for folder in ragls.status()["folders"]]
        assert uris == [first.resolve().as_uri(), second.resolve().as_uri()]
        only_second = ragls.search("budget review", folder=ragls.folder_uris[1])["results"]
        assert [result["metadata"]["file"] for result in only_second] == ["notes.md"]
        cleared = first_folder(ragls.clear(folder=ragls.folder_uris[0]))
        assert (cleared["files"], cleared["chunks"], cleared["generation"]) == (0, 0, 0)
        assert ragls.search("budget review")["results"][0]["metadata"]["file"] == "notes.md"


@pytest.mark.timeout(60)
def test_a_failed_first_index_raises_with_the_folders_error(workspace: Path) -> None:
    with pytest.raises(RaglsError) as caught:
        RaglsClient(workspace, command=SERVER_COMMAND, timeout=TIMEOUT, settings={"limits": {"maxFiles": 1}}).start()
    assert caught.value.code == INDEX_FAILED
    assert caught.value.message.startswith(f"indexing {workspace.resolve().as_uri()} failed: maxFiles limit of 1")


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "command",
    [[sys.executable, "-c", "import sys; sys.stderr.write('no server here\\n')"], ["/nonexistent/ragls", "serve"]],
)
def test_a_server_that_is_not_there_raises(workspace: Path, command: list[str]) -> None:
    with pytest.raises(RaglsError) as caught:
        RaglsClient(workspace, command=command, timeout=10).start()
    assert caught.value.code == SERVER_EXITED


@pytest.mark.timeout(120)
def test_the_client_installs_on_its_own(tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(REPO / "clients" / "python"),
        ],
        check=True,
        timeout=110,
        capture_output=True,
    )
    assert (target / "ragls_client" / "py.typed").exists()
    probe = "import ragls_client, sys; print(ragls_client.__file__, ragls_client.RaglsClient.__name__)"
    output = subprocess.run(
        [sys.executable, "-s", "-c", probe],
        env={"PYTHONPATH": str(target)},
        cwd=tmp_path,
        check=True,
        timeout=30,
        capture_output=True,
        text=True,
    ).stdout
    assert output.startswith(str(target)) and "RaglsClient" in output


def _files(ragls: RaglsClient, query: str) -> list[str]:
    return [result["metadata"].get("file") for result in ragls.search(query)["results"]]


def wait_until(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
