"""The walk: default skips, secrets, generated files, symlinks, limits, capped ignore files and subtree walks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragls.config import Limits
from ragls.errors import LimitExceeded, SourceError
from ragls.ingest.ignore import IgnoreRules
from ragls.ingest.walk import walk


def _write(root: Path, tree: dict[str, str]) -> None:
    for rel, content in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def check(
    root: Path,
    tree: dict[str, str],
    files: list[str],
    skipped: dict[str, int] | None = None,
    limits: Limits | None = None,
    start: str = "",
) -> None:
    """Walking `tree` gives exactly `files` (sorted) and exactly the `skipped` counts."""
    _write(root, tree)
    result = walk(root, limits or Limits(), start=start)
    assert result.files == sorted(files)
    assert dict(result.skipped) == (skipped or {})


KEPT = {"main.py": "print(1)\n", "docs/readme.md": "# hi\n"}
KEPT_FILES = ["docs/readme.md", "main.py"]

SKIP_CASES: dict[str, tuple[dict[str, str], list[str], dict[str, int]]] = {
    "nothing-skipped": (KEPT, KEPT_FILES, {}),
    "default-directories-any-case": (
        {
            **KEPT,
            "Node_Modules/pkg/index.js": "",
            "build/out.py": "",
            "BUILD/x.py": "",
            ".venv/lib/site.py": "",
            "src/__PyCache__/m.pyc": "",
            "src/Target/x.rs": "",
            "src/.Git/config": "",
            "src/kept.py": "",
        },
        [*KEPT_FILES, "src/kept.py"],
        {"ignored": 7},
    ),
    "skipped-name-as-file-is-kept": ({**KEPT, "build": "a file named build\n"}, [*KEPT_FILES, "build"], {}),
    "secret-files": (
        {**KEPT, ".env": "", ".env.local": "", "sub/id_rsa": "", ".ENV.production": "", ".netrc": ""},
        KEPT_FILES,
        {"secret": 5},
    ),
    "generated-files": (
        {**KEPT, "package-lock.json": "", "web/x.min.js": "", "web/a.js.map": "", "Cargo.lock": ""},
        KEPT_FILES,
        {"generated": 4},
    ),
    "editor-temp-files": ({**KEPT, "main.py~": "", ".main.py.swp": "", "#main.py#": ""}, KEPT_FILES, {"editorTemp": 3}),
    "ignore-files-never-returned-nor-counted": (
        {**KEPT, ".gitignore": "\n", ".tnsignore": "\n", "docs/.gitignore": "*.log\n", "docs/x.log": ""},
        KEPT_FILES,
        {"ignored": 1},
    ),
    "mixed-reasons": (
        {**KEPT, "dist/a.js": "", ".env": "", "yarn.lock": "", ".gitignore": "*.tmp\n", "scratch.tmp": ""},
        KEPT_FILES,
        {"ignored": 2, "secret": 1, "generated": 1},
    ),
}


@pytest.mark.parametrize("case", sorted(SKIP_CASES))
def test_skips(tmp_path: Path, case: str) -> None:
    tree, files, skipped = SKIP_CASES[case]
    check(tmp_path, tree, files, skipped)


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _write(outside, {"secret.py": "x = 1\n"})
    root = tmp_path / "root"
    _write(root, {"real.py": "", "dir/inner.py": ""})
    (root / "file-link.py").symlink_to(root / "real.py")
    (root / "dir-link").symlink_to(root / "dir", target_is_directory=True)
    (root / "outside-link").symlink_to(outside, target_is_directory=True)
    (root / "dir" / "loop").symlink_to(root, target_is_directory=True)
    (root / "dangling.py").symlink_to(root / "missing.py")
    check(root, {}, ["dir/inner.py", "real.py"], {"symlink": 5})


def test_a_symlinked_ignore_file_is_not_read(tmp_path: Path) -> None:
    _write(tmp_path, {"rules.txt": "*.py\n", "a.py": ""})
    (tmp_path / ".gitignore").symlink_to(tmp_path / "rules.txt")
    check(tmp_path, {}, ["a.py", "rules.txt"], {"symlink": 1})


LIMIT_CASES: dict[str, tuple[Limits, dict[str, str], str | None]] = {
    "files-at-limit": (Limits(max_files=3), {"a": "", "b": "", "c/d": ""}, None),
    "files-over-limit": (Limits(max_files=2), {"a": "", "b": "", "c/d": ""}, "maxFiles"),
    "entries-at-limit": (Limits(max_entries=4), {"a": "", "b": "", "c/d": ""}, None),
    "entries-over-limit": (Limits(max_entries=3), {"a": "", "b": "", "c/d": ""}, "maxEntries"),
    "directories-count-as-entries": (Limits(max_entries=2), {"x/y/z": ""}, "maxEntries"),
    "depth-at-limit": (Limits(max_depth=3), {"a/b/c.txt": ""}, None),
    "depth-over-limit": (Limits(max_depth=2), {"a/b/c.txt": ""}, "maxDepth"),
    "empty-directory-too-deep": (Limits(max_depth=2), {"a/keep.txt": "", "a/b/c/.gitignore": ""}, "maxDepth"),
    "skipped-files-do-not-count": (Limits(max_files=1), {"a.py": "", ".env": "", "build/x": "", "x.min.js": ""}, None),
}
SETTINGS = {
    "maxFiles": "ragls.limits.maxFiles",
    "maxEntries": "ragls.limits.maxEntries",
    "maxDepth": "ragls.limits.maxDepth",
}


@pytest.mark.parametrize("case", sorted(LIMIT_CASES))
def test_limits(tmp_path: Path, case: str) -> None:
    limits, tree, breached = LIMIT_CASES[case]
    _write(tmp_path, tree)
    if breached is None:
        walk(tmp_path, limits)
        return
    with pytest.raises(LimitExceeded) as caught:
        walk(tmp_path, limits)
    message = str(caught.value)
    assert breached in message
    assert SETTINGS[breached] in message
    assert caught.value.limit == breached
    assert caught.value.setting == SETTINGS[breached]


# Past a cap the rest of that one file is not applied, with a warning naming the file and the line: never a failed run.
CAPPED_IGNORE_CASES: dict[str, tuple[dict[str, str], list[str], str]] = {
    "gitignore-too-large": (
        {".gitignore": "a.log\n# " + "x" * (64 * 1024) + "\nb.log\n", "a.log": "", "b.log": ""},
        ["b.log", "kept.py"],
        ".gitignore is 65,551 bytes, over the limit of 65,536 (64 KiB): its patterns after line 1 are not applied",
    ),
    "nested-tnsignore-too-large": (
        {
            "sub/.tnsignore": "# " + "x" * 40_000 + "\n*.py\n# " + "y" * 40_000 + "\n*.md\n",
            "sub/x.py": "",
            "sub/x.md": "",
        },
        ["kept.py", "sub/x.md"],
        "sub/.tnsignore is 80,016 bytes, over the limit of 65,536 (64 KiB): its patterns after line 2 are not applied",
    ),
    "too-many-patterns": (
        {".gitignore": "".join(f"p{i}\n" for i in range(1025)), "p0": "", "p1024": ""},
        ["kept.py", "p1024"],
        ".gitignore has more than 1,024 patterns: those from line 1,025 on are not applied",
    ),
    "nested-too-many-patterns": (
        {"a/b/.tnsignore": "# c\n\n" + "".join(f"p{i}\n" for i in range(1030)), "a/b/p1": "", "a/b/p1029": ""},
        ["a/b/p1029", "kept.py"],
        "a/b/.tnsignore has more than 1,024 patterns: those from line 1,027 on are not applied",
    ),
}


@pytest.mark.parametrize("case", sorted(CAPPED_IGNORE_CASES))
def test_an_ignore_file_over_a_cap_is_cut_short_with_a_warning(tmp_path: Path, case: str) -> None:
    tree, files, warning = CAPPED_IGNORE_CASES[case]
    _write(tmp_path, {"kept.py": "", **tree})
    rules = IgnoreRules(tmp_path)
    assert walk(tmp_path, Limits(), rules).files == files
    warnings = rules.take_warnings()
    assert len(warnings) == 1 and warnings[0].startswith(warning), warnings
    assert warnings[0].endswith(("shorten it", "merge or remove patterns"))


OK_IGNORE_CASES: dict[str, dict[str, str]] = {
    "exactly-1024-patterns": {".gitignore": "".join(f"p{i}\n" for i in range(1024))},
    "comments-and-blanks-do-not-count": {".gitignore": "# c\n\n" * 2000 + "p\n"},
    "1024-in-each-of-both-files": {
        ".gitignore": "".join(f"g{i}\n" for i in range(1024)),
        ".tnsignore": "".join(f"t{i}\n" for i in range(1024)),
    },
    "exactly-64-kib": {".gitignore": "#" * (64 * 1024 - 1) + "\n"},
}


@pytest.mark.parametrize("case", sorted(OK_IGNORE_CASES))
def test_ignore_files_within_limits_are_fine(tmp_path: Path, case: str) -> None:
    check(tmp_path, {"kept.py": "", **OK_IGNORE_CASES[case]}, ["kept.py"])
    rules = IgnoreRules(tmp_path)
    walk(tmp_path, Limits(), rules)
    assert rules.take_warnings() == []


def test_missing_path_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        walk(tmp_path / "missing", Limits())


def test_file_path_is_a_source_error(tmp_path: Path) -> None:
    _write(tmp_path, {"a.py": ""})
    with pytest.raises(SourceError, match="not a directory"):
        walk(tmp_path / "a.py", Limits())


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_unreadable_root_is_a_source_error(tmp_path: Path) -> None:
    root = tmp_path / "locked"
    root.mkdir()
    root.chmod(0)
    try:
        with pytest.raises(SourceError, match="not readable"):
            walk(root, Limits())
    finally:
        root.chmod(0o700)


START_TREE = {
    ".gitignore": "*.log\n/top.txt\nsub/drop/\n",
    "top.txt": "",
    "other/a.txt": "",
    "sub/a.txt": "",
    "sub/a.log": "",
    "sub/top.txt": "",
    "sub/drop/x.txt": "",
    "sub/deep/.gitignore": "!*.log\n",
    "sub/deep/b.log": "",
    "sub/.env": "",
}


def test_start_walks_only_the_subtree_with_parent_rules(tmp_path: Path) -> None:
    check(
        tmp_path,
        START_TREE,
        ["sub/a.txt", "sub/deep/b.log", "sub/top.txt"],
        {"ignored": 2, "secret": 1},
        start="sub",
    )


def test_start_deeper_subtree(tmp_path: Path) -> None:
    check(tmp_path, START_TREE, ["sub/deep/b.log"], start="sub/deep")


def test_directories_are_listed_and_entries_counted(tmp_path: Path) -> None:
    _write(tmp_path, {"a/b/c.txt": "", "a/d.txt": "", "build/x": ""})
    result = walk(tmp_path, Limits())
    assert result.directories == ["a", "a/b"]
    assert result.entries == 4
