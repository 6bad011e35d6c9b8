#!/usr/bin/env bash
# Installs everything the tests need and runs every test: ruff, mypy, import-linter, then pytest
# (unit, CLI, end-to-end over stdio, clients, and the editors: headless Neovim, batch Emacs,
# VS Code's extension code and a code-server smoke test). Editor tools install themselves from
# their pytest wrappers into ./.cache on first use. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python_bin="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$python_bin" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
if [ -f clients/python/pyproject.toml ]; then
    .venv/bin/python -m pip install --quiet -e ./clients/python
fi

echo "== ruff"
.venv/bin/ruff check server tests clients
echo "== mypy"
.venv/bin/mypy
echo "== import-linter"
.venv/bin/lint-imports --no-cache

# Sessions stay lexical unless a test asks for dense vectors (the dense tests set `embedding` themselves).
export RAGLS_EMBEDDING="${RAGLS_EMBEDDING:-none}"

echo "== pytest"
set +e
.venv/bin/python -m pytest -p no:cacheprovider "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    # pytest's "no tests collected" (e.g. a -k filter that matches nothing) is not a failure of the code.
    echo "pytest collected no tests"
    status=0
fi
exit "$status"
