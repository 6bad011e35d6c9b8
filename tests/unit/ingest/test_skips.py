"""Credential files are never indexed: every entry of the default lists, by example, through the walk and through
file events; ordinary source with a similar name stays; the docs list every entry; `.tnsignore` adds more."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragls.config import Limits
from ragls.ingest.ignore import IgnoreRules
from ragls.ingest.skips import SECRET_FILE_NAMES, SECRET_FILE_PATHS, SECRET_FILE_PATTERNS, default_skip_reason
from ragls.ingest.walk import walk

DOCS = Path(__file__).resolve().parents[3] / "docs" / "indexing.md"

# Every entry of the three lists, with files it must skip (anywhere in the tree).
SECRET_EXAMPLES: dict[str, tuple[str, ...]] = {
    # exact names
    ".env": (".env", "app/.env"),
    ".envrc": (".envrc",),
    ".git-credentials": (".git-credentials",),
    ".netrc": (".netrc",),
    "_netrc": ("_netrc",),
    ".npmrc": (".npmrc", "web/.npmrc"),
    ".pypirc": (".pypirc",),
    ".pgpass": (".pgpass",),
    ".my.cnf": (".my.cnf",),
    ".htpasswd": (".htpasswd", "public/.htpasswd"),
    ".vault-token": (".vault-token",),
    ".s3cfg": (".s3cfg",),
    ".boto": (".boto",),
    ".dockercfg": (".dockercfg",),
    ".terraformrc": (".terraformrc",),
    "terraform.rc": ("terraform.rc",),
    "credentials": ("credentials", "home/.gem/credentials", "Credentials"),
    "credentials.json": ("credentials.json", "config/credentials.json"),
    "credentials.toml": ("home/.cargo/credentials.toml",),
    "credentials.tfrc.json": ("home/.terraform.d/credentials.tfrc.json",),
    "application_default_credentials.json": ("home/.config/gcloud/application_default_credentials.json",),
    "kubeconfig": ("kubeconfig", "deploy/kubeconfig"),
    "secrets.json": ("secrets.json",),
    "secrets.toml": (".streamlit/secrets.toml",),
    "secrets.yaml": ("charts/app/secrets.yaml",),
    "secrets.yml": ("config/secrets.yml",),
    # patterns on the name
    ".env.*": (".env.local", ".env.production", ".ENV.Staging"),
    ".env-*": (".env-local",),
    ".env_*": (".env_prod",),
    "*.env": ("prod.env", "deploy/docker.env"),
    "id_rsa*": ("id_rsa", "id_rsa.pub", "keys/id_rsa_deploy"),
    "id_dsa*": ("id_dsa",),
    "id_ecdsa*": ("id_ecdsa", "id_ecdsa_sk"),
    "id_ed25519*": ("id_ed25519", "id_ed25519.pub"),
    "*.pem": ("server.pem", "certs/ca.PEM"),
    "*.key": ("server.key", "config/master.key"),
    "*.p12": ("cert.p12",),
    "*.pfx": ("cert.pfx",),
    "*.p8": ("AuthKey_ABC123.p8",),
    "*.ppk": ("putty.ppk",),
    "*.jks": ("release.jks",),
    "*.keystore": ("debug.keystore",),
    "*.ovpn": ("client.ovpn",),
    "*.kubeconfig": ("staging.kubeconfig",),
    "*.tfvars": ("terraform.tfvars", "prod.auto.tfvars"),
    "*.tfvars.json": ("prod.tfvars.json",),
    "*.tfstate": ("terraform.tfstate",),
    "*.tfstate.backup": ("terraform.tfstate.backup",),
    "service[-_]account*.json": ("service-account.json", "service_account.json", "keys/service-account-key.json"),
    "client_secret*.json": ("client_secret.json", "client_secret_123.apps.googleusercontent.com.json"),
    # a name and the directory it sits in
    ".docker/config.json": (".docker/config.json", "home/.docker/config.json"),
    "gh/hosts.yml": ("home/.config/gh/hosts.yml",),
}
# Source and documents whose names come close, which must stay searchable.
ORDINARY_FILES = (
    "key.py",
    "keys.py",
    "keyboard.ts",
    "secrets.py",
    "secret.go",
    "credentials.py",
    "docs/credentials.md",
    "config.json",
    "docker/config.json",
    ".docker/Dockerfile",
    "gh/config.yml",
    "hosts.yml",
    "env.py",
    "environment.yml",
    ".envoy.yaml",
    ".environment",
    "service.py",
    "client_secret.py",
    "pem.go",
    "tfvars.md",
    "kubeconfig.go",
    "keystore.py",
    "secrets.md",
    "id.py",
)
ALL_EXAMPLES = sorted({path for paths in SECRET_EXAMPLES.values() for path in paths})


def test_every_entry_has_examples() -> None:
    entries = SECRET_FILE_NAMES | set(SECRET_FILE_PATTERNS) | SECRET_FILE_PATHS
    assert set(SECRET_EXAMPLES) == entries


@pytest.mark.parametrize(("entry", "path"), [(e, p) for e, paths in sorted(SECRET_EXAMPLES.items()) for p in paths])
def test_each_credential_file_is_a_secret(entry: str, path: str) -> None:
    assert default_skip_reason(path, is_dir=False) == "secret", entry


@pytest.mark.parametrize("path", ORDINARY_FILES)
def test_ordinary_source_with_a_close_name_is_kept(path: str) -> None:
    assert default_skip_reason(path, is_dir=False) is None


def _write(root: Path, paths: list[str] | tuple[str, ...], content: str = "token = 'x'\n") -> None:
    for rel in paths:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content, encoding="utf-8")


def test_the_walk_admits_no_credential_file(tmp_path: Path) -> None:
    _write(tmp_path, ALL_EXAMPLES)
    _write(tmp_path, ORDINARY_FILES)
    result = walk(tmp_path, Limits())
    assert result.files == sorted(ORDINARY_FILES)
    assert dict(result.skipped) == {"secret": len(ALL_EXAMPLES)}


def test_file_events_on_credential_files_are_skipped(tmp_path: Path) -> None:
    rules = IgnoreRules(tmp_path)
    assert {path: rules.path_reason(path) for path in ALL_EXAMPLES} == dict.fromkeys(ALL_EXAMPLES, "secret")
    assert [path for path in ORDINARY_FILES if rules.path_reason(path) is not None] == []


def test_a_tnsignore_skips_more_credential_files(tmp_path: Path) -> None:
    _write(tmp_path, ["vault.txt", "ops/tokens.ini", "main.py"])
    (tmp_path / ".tnsignore").write_text("vault.txt\ntokens.ini\n", encoding="utf-8")
    assert walk(tmp_path, Limits()).files == ["main.py"]


def test_every_entry_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    missing = [entry for entry in SECRET_EXAMPLES if f"`{entry}`" not in text]
    assert missing == [], f"docs/indexing.md does not list {missing}"
