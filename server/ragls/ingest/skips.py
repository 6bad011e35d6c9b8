"""The default skips: directories, credential files, generated files and editor temp files that are never indexed.

Every entry of the credential lists is documented in docs/indexing.md (a test checks it); a user skips more files
with a `.tnsignore`, `.gitignore` or `.git/info/exclude` line.
"""

from __future__ import annotations

import fnmatch
import re

SKIPPED_DIRECTORY_NAMES = frozenset(
    {
        ".aws",
        ".git",
        ".gnupg",
        ".gradle",
        ".hg",
        ".idea",
        ".kube",
        ".next",
        ".ssh",
        ".svn",
        ".vscode",
        "__pycache__",
        "build",
        "coverage",
        "dist",
        "node_modules",
        "out",
        "target",
        "vendor",
        ".venv",
        "venv",
        "site-packages",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
# These also match as any component of a path, e.g. a watch event deep under node_modules.
SKIPPED_ANYWHERE = frozenset({".aws", ".git", ".gnupg", ".hg", ".kube", ".ssh", ".svn", "node_modules", "vendor"})
# Credential files by exact name, compared lowercased.
SECRET_FILE_NAMES = frozenset(
    {
        ".env",
        ".envrc",
        ".git-credentials",
        ".netrc",
        "_netrc",
        ".npmrc",
        ".pypirc",
        ".pgpass",
        ".my.cnf",
        ".htpasswd",
        ".vault-token",
        ".s3cfg",
        ".boto",
        ".dockercfg",
        ".terraformrc",
        "terraform.rc",
        "credentials",
        "credentials.json",
        "credentials.toml",
        "credentials.tfrc.json",
        "application_default_credentials.json",
        "kubeconfig",
        "secrets.json",
        "secrets.toml",
        "secrets.yaml",
        "secrets.yml",
    }
)
# Credential files by shell pattern on the lowercased name. Extensions only where the extension itself means a
# key or a secret store: `key.py` or `secrets.py` are source and stay indexed.
SECRET_FILE_PATTERNS = (
    ".env.*",
    ".env-*",
    ".env_*",
    "*.env",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.p8",
    "*.ppk",
    "*.jks",
    "*.keystore",
    "*.ovpn",
    "*.kubeconfig",
    "*.tfvars",
    "*.tfvars.json",
    "*.tfstate",
    "*.tfstate.backup",
    "service[-_]account*.json",
    "client_secret*.json",
)
# Credential files whose name is ordinary, recognized by the directory they sit in: the last two components of the
# path, lowercased.
SECRET_FILE_PATHS = frozenset({".docker/config.json", "gh/hosts.yml"})
GENERATED_FILE_NAMES = frozenset(
    {
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "cargo.lock",
        "composer.lock",
        "gemfile.lock",
        "uv.lock",
        "pipfile.lock",
        "npm-shrinkwrap.json",
    }
)
GENERATED_FILE_PATTERNS = ("*.min.js", "*.min.css", "*.map", "*.min.mjs", "*.bundle.js")
# Editor lock and swap files that appear and vanish while a user types.
EDITOR_TEMP_PATTERNS = (".#*", "*.swp", "*.swo", "*.swx", "*~", "4913", "#*#")


def _one_pattern(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """Shell patterns as one compiled regex: the walk tests every file name against them."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


_SECRET = _one_pattern(SECRET_FILE_PATTERNS)
_GENERATED = _one_pattern(GENERATED_FILE_PATTERNS)
_EDITOR_TEMP = _one_pattern(EDITOR_TEMP_PATTERNS)


def default_skip_reason(rel_path: str, is_dir: bool) -> str | None:
    """Why a file or directory is skipped by default, or None when it is not; only its name and parent count."""
    name = rel_path.rsplit("/", 1)[-1]
    lowered = name.lower()
    if is_dir:
        return "ignored" if lowered in SKIPPED_DIRECTORY_NAMES else None
    if lowered == ".git":
        return "ignored"  # a worktree's or submodule's pointer to its git directory, which git never lists
    if is_secret_file(rel_path):
        return "secret"
    if lowered in GENERATED_FILE_NAMES or _GENERATED.match(lowered):
        return "generated"
    if is_editor_temp_file(name):
        return "editorTemp"
    return None


def is_secret_file(rel_path: str) -> bool:
    """True for a credential file: by name, by a key or secret-store extension, or by name and parent directory."""
    lowered = rel_path.lower()
    name = lowered.rsplit("/", 1)[-1]
    if name in SECRET_FILE_NAMES or _SECRET.match(name):
        return True
    return "/".join(lowered.split("/")[-2:]) in SECRET_FILE_PATHS


def is_editor_temp_file(name: str) -> bool:
    """Lock and swap files editors write next to the file being edited."""
    return _EDITOR_TEMP.match(name) is not None


def skipped_anywhere(rel_path: str) -> bool:
    """True when a path runs through a directory that is never indexed at any depth."""
    return any(part.lower() in SKIPPED_ANYWHERE for part in rel_path.split("/")[:-1])
