"""What the shared index decides before any database: names, settings, masks, and the default install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragls.cli import main
from ragls.config import SharedIndex, parse_settings
from ragls.model import IndexStatus
from ragls.rag.shared.database import mask, redact
from ragls.wire import status_to_wire


@pytest.mark.parametrize("name", ["x'; DROP TABLE ragls.files; --", "a b", "", "-leading", "naïve", "x" * 64, 'q"'])
def test_a_name_with_sql_metacharacters_is_refused_before_connecting(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["publish", ".", "--to", "postgresql://u:pw@nowhere.invalid/db", f"--name={name}"])
    assert exited.value.code == 2
    assert "a shared index name is 1 to 63 letters" in capsys.readouterr().err


def test_the_setting_parses_and_a_bad_name_falls_back_to_local() -> None:
    settings, problems = parse_settings({"sharedIndex": {"url": "postgresql://reader@db/ragls", "name": "mono.repo"}})
    assert settings.shared_index == SharedIndex("mono.repo", "postgresql://reader@db/ragls")
    assert problems == []
    settings, problems = parse_settings({"sharedIndex": {"name": "mono repo", "url": "postgresql://a:secretpw@db/x"}})
    assert settings.shared_index is None
    assert len(problems) == 1 and "ragls.sharedIndex.name" in problems[0] and "secretpw" not in problems[0]
    settings, problems = parse_settings({"sharedIndex": {"name": "app"}})
    assert settings.shared_index == SharedIndex("app", None)  # libpq's environment names the database


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql://indexer:s3cr3t-pass@db:5432/ragls", "postgresql://indexer:***@db:5432/ragls"),
        (
            "postgresql://indexer@db/ragls?password=s3cr3t-pass&sslmode=require",
            "postgresql://indexer@db/ragls?password=***&sslmode=require",
        ),
        ("host=db user=indexer password='s3 cr3t' dbname=ragls", "host=db user=indexer password=*** dbname=ragls"),
        ("postgresql://indexer@db/ragls", "postgresql://indexer@db/ragls"),
    ],
)
def test_passwords_are_masked(url: str, masked: str) -> None:
    assert mask(url) == masked


def test_an_error_quoting_the_password_is_redacted() -> None:
    url = "postgresql://indexer:s3cr3t-pass@db/ragls"
    assert "s3cr3t-pass" not in redact("FATAL: bad password s3cr3t-pass for postgresql://indexer:s3cr3t-pass@db", url)


def test_the_status_carries_the_shared_source() -> None:
    shared = {
        "name": "app",
        "source": "postgresql://r@db/x",
        "commit": "abc",
        "generation": 2,
        "publishedAt": None,
        "files": 10,
        "localFiles": 2,
        "error": None,
    }
    status = IndexStatus("idle", 12, 40, 0, 1, None, "/w", {}, None, shared=shared)
    assert status_to_wire("file:///w", status)["sharedIndex"] == shared
    assert "sharedIndex" not in status_to_wire("file:///w", IndexStatus("idle", 0, 0, 0, 0, None, None, {}, None))


def test_the_default_install_never_imports_psycopg() -> None:
    code = (
        "import sys, ragls.cli, ragls.rag.service, ragls.server.app, ragls.rag.shared.reader; "
        "from ragls.rag.service import RagService; "
        "assert not [m for m in sys.modules if m.startswith('psycopg')], sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
