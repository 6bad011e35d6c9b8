"""Git parity of the walk: for many trees, the walked files equal what `git ls-files --others --exclude-standard` lists.

Each case is a tree (relative path -> content; `.gitignore` files among them). The same tree with every
`.gitignore` renamed to `.tnsignore` must walk to the same set, since ragls gives both files git's semantics.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from ragls.config import Limits
from ragls.ingest.ignore import IgnoreRules
from ragls.ingest.patterns import path_bytes
from ragls.ingest.walk import walk
from tests.git_env import isolated_git_env

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

NEVER_WALKED = {".gitignore", ".tnsignore"}
GIT_TIMEOUT_S = 30


def _write_tree(root: Path, tree: dict[str, str], ignore_name: str = ".gitignore") -> None:
    for rel, content in tree.items():
        parts = rel.split("/")
        if parts[-1] == ".gitignore":
            parts[-1] = ignore_name
        path = root.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def _git_files(root: Path, home: Path) -> set[str]:
    env = isolated_git_env(home)
    subprocess.run(["git", "init", "-q"], cwd=root, env=env, check=True, timeout=GIT_TIMEOUT_S)
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        timeout=GIT_TIMEOUT_S,
    ).stdout.decode("utf-8")
    return {p for p in listed.split("\0") if p and p.rsplit("/", 1)[-1] not in NEVER_WALKED}


def _describe(tree: dict[str, str], expected: set[str], actual: set[str]) -> str:
    ignore_files = "\n".join(
        f"--- {rel}\n{content!r}" for rel, content in sorted(tree.items()) if rel.endswith(".gitignore")
    )
    return (
        f"\nignore files:\n{ignore_files}\n"
        f"all files: {sorted(p for p in tree if not p.endswith('.gitignore'))}\n"
        f"git only: {sorted(expected - actual)}\n"
        f"ragls only: {sorted(actual - expected)}"
    )


def check(tmp_path: Path, tree: dict[str, str]) -> None:
    """The walk of `tree` matches git, with `.gitignore` files and with them renamed to `.tnsignore`."""
    git_root = tmp_path / "git"
    git_root.mkdir()
    _write_tree(git_root, tree)
    expected = _git_files(git_root, tmp_path)
    actual = set(walk(git_root, Limits()).files)
    assert actual == expected, "walk differs from git" + _describe(tree, expected, actual)

    tns_root = tmp_path / "tns"
    tns_root.mkdir()
    _write_tree(tns_root, tree, ignore_name=".tnsignore")
    renamed = set(walk(tns_root, Limits()).files)
    assert renamed == expected, "walk with .tnsignore differs from git" + _describe(tree, expected, renamed)


def _files(*paths: str, **ignores: str) -> dict[str, str]:
    """A tree of `paths` (content: the path) plus ignore files keyed by directory ('root' for the top)."""
    tree = {p: p + "\n" for p in paths}
    for directory, content in ignores.items():
        prefix = "" if directory == "root" else directory.replace("__", "/") + "/"
        tree[f"{prefix}.gitignore"] = content
    return tree


COMMON = (
    "a.txt",
    "b.py",
    "x.log",
    "keep.log",
    "src/a.txt",
    "src/x.log",
    "src/keep.log",
    "src/deep/x.log",
    "src/deep/a.txt",
    "logs/keep.txt",
    "logs/x.log",
    "docs/readme.md",
    "docs/logs/keep.txt",
)

HAND_CASES: dict[str, dict[str, str]] = {
    "no-ignore-file": _files(*COMMON),
    "anchored": _files(*COMMON, "a/a.txt", root="/a.txt\n/logs\n"),
    "unanchored-name": _files(*COMMON, root="a.txt\nlogs\n"),
    "directory-only": _files(*COMMON, "src/logs", "logs2/logs", root="logs/\n"),
    "directory-only-anchored": _files(*COMMON, root="/logs/\n"),
    "leading-double-star": _files(*COMMON, root="**/deep\n**/keep.txt\n"),
    "leading-double-star-slash-path": _files(*COMMON, "x/docs/logs/k.txt", root="**/logs/keep.txt\n"),
    "middle-double-star": _files(*COMMON, "src/a/b/c/x.log", "srcx/x.log", root="src/**/x.log\n"),
    "trailing-double-star": _files(*COMMON, root="src/**\n"),
    "trailing-double-star-then-negate": _files(*COMMON, root="src/**\n!src/deep/\n"),
    "trailing-double-star-then-keep": _files(*COMMON, root="src/**\n!src/a.txt\n"),
    "anchored-trailing-double-star-then-keep": _files(*COMMON, root="/src/**\n!/src/keep.log\n!deep/\n"),
    "double-star-dir-only": _files(*COMMON, root="src/**/\n"),
    "double-star-dir-only-then-keep": _files(*COMMON, root="src/**/\n!*.txt\n"),
    "star-double-star": _files(*COMMON, root="*/**\n!*.txt\n!*/\n"),
    "trailing-double-star-reinclude-dir-and-txt": _files(*COMMON, root="src/**\n!src/deep/\n!*.txt\n"),
    "character-class": _files(*COMMON, "c.txt", "d.txt", "ab.txt", root="[abc].txt\n"),
    "negated-character-class": _files(*COMMON, "c.txt", "d.txt", root="[!a].txt\n"),
    "caret-character-class": _files(*COMMON, "c.txt", "d.txt", root="[^a].txt\n"),
    "range-class": _files(*COMMON, "c1.txt", "c7.txt", root="c[0-5].txt\n"),
    "question-mark": _files(*COMMON, "a1.txt", "a12.txt", root="a?.txt\n"),
    "escaped-hash": _files(*COMMON, "#file", "file", root="\\#file\n"),
    "hash-is-comment": _files(*COMMON, "#file", "file", root="#file\n"),
    "escaped-bang": _files(*COMMON, "!file", "file", root="\\!file\n"),
    "trailing-space-stripped": _files(*COMMON, root="a.txt   \nx.log \n"),
    "trailing-space-escaped": _files(*COMMON, "sp ", "sp", root="sp\\ \n"),
    "comments-and-blank-lines": _files(*COMMON, root="# a comment\n\n   \n# x.log\nb.py\n"),
    "crlf-line-endings": _files(*COMMON, root="a.txt\r\nb.py\r\n"),
    "no-final-newline": _files(*COMMON, root="a.txt\nb.py"),
    "negation-reincludes": _files(*COMMON, root="*.log\n!keep.log\n"),
    "negation-order-matters": _files(*COMMON, root="!keep.log\n*.log\n"),
    "negation-under-excluded-directory": _files(*COMMON, root="logs/\n!logs/keep.txt\n"),
    "negation-under-excluded-directory-anywhere": _files(*COMMON, root="logs\n!keep.txt\n"),
    "dir-star-then-keep": _files("dir/keep", "dir/drop", "dir/sub/keep", "dir/sub/x", "top", root="dir/*\n!dir/keep\n"),
    "dir-star-reinclude-subdir": _files("dir/a", "dir/sub/a", "dir/sub/b", root="dir/*\n!dir/sub/\n"),
    "whitelist-style": _files(*COMMON, root="*\n!*/\n!*.txt\n"),
    "whitelist-style-named-dir": _files(*COMMON, root="*\n!src\n!deep\n!*.txt\n"),
    "whitelist-style-double-star": _files(*COMMON, root="**\n!*/\n!*.log\n"),
    "whitelist-style-no-dir-reinclude": _files(*COMMON, root="*\n!*.txt\n"),
    "nested-child-reincludes": _files(*COMMON, root="*.log\n", src="!*.log\n"),
    "nested-child-reincludes-deeper": _files(*COMMON, root="*.log\n", src__deep="!x.log\n"),
    "nested-child-excludes": _files(*COMMON, src="*.txt\n"),
    "nested-anchored-is-relative": _files(*COMMON, "src/src/a.txt", src="/a.txt\n"),
    "nested-middle-slash-is-relative": _files(*COMMON, "src/x/deep/a.txt", "deep/a.txt", src="deep/a.txt\n"),
    "root-middle-slash-reaches-down": _files(*COMMON, root="src/deep/a.txt\n"),
    "root-middle-slash-not-at-depth": _files(*COMMON, "other/src/deep/a.txt", root="src/deep/a.txt\n"),
    "nested-child-cannot-reinclude-excluded-dir": _files(*COMMON, root="deep/\n", src__deep="!x.log\n"),
    "nested-dir-only": _files(*COMMON, "src/logs/x", "src/logs2", src="logs/\n"),
    "parent-negation-after-child-silent": _files(*COMMON, root="*.log\n!src/x.log\n", src="a.txt\n"),
    "child-overrides-parent-negation": _files(*COMMON, root="*.log\n!keep.log\n", src="keep.log\n"),
    "star-matches-dotfiles": _files("dot/.hidden", "dot/shown", root="dot/*\n!dot/shown\n"),
    "single-star-no-slash": _files("a/b/c.txt", "a/c.txt", root="a/*.txt\n"),
    "double-star-alone": _files(*COMMON, root="**\n!*.txt\n"),
    "spaces-in-names": _files("my file.txt", "dir with space/a.txt", root="my file.txt\n"),
    "directory-pattern-names-file": _files("logs", "src/logs/x", root="logs/\n"),
}


@pytest.mark.parametrize("case", sorted(HAND_CASES))
def test_hand_written_case_matches_git(tmp_path: Path, case: str) -> None:
    check(tmp_path, HAND_CASES[case])


# ---- generated trees ---------------------------------------------------------------------------------------------

DIR_NAMES = ("a", "b", "src", "logs", "docs", "deep", "lib", "tmp1")
FILE_STEMS = ("a", "b", "keep", "x", "main", "notes", "c1", "#tag", "!bang", "sp ", "data")
FILE_EXTS = ("", ".txt", ".log", ".py", ".md")


def _random_tree(rng: random.Random) -> dict[str, str]:
    paths: list[str] = []
    dirs: list[str] = [""]

    def grow(prefix: str, depth: int) -> None:
        for _ in range(rng.randint(1, 4)):
            paths.append(prefix + rng.choice(FILE_STEMS) + rng.choice(FILE_EXTS))
        if depth < 3:
            for name in rng.sample(DIR_NAMES, rng.randint(0, 2)):
                dirs.append(prefix + name)
                grow(prefix + name + "/", depth + 1)

    grow("", 0)
    tree = {p: p + "\n" for p in paths if p not in dirs}  # a name is either a file or a directory
    for directory in dirs:
        if directory == "" or rng.random() < 0.35:
            rel = f"{directory}/.gitignore" if directory else ".gitignore"
            tree[rel] = "".join(line + "\n" for line in _random_patterns(rng, paths, directory))
    return tree


def _random_patterns(rng: random.Random, paths: list[str], directory: str) -> list[str]:
    prefix = directory + "/" if directory else ""
    below = [p[len(prefix) :] for p in paths if p.startswith(prefix)] or ["a.txt"]
    lines: list[str] = []
    for _ in range(rng.randint(1, 6)):
        rel = rng.choice(below)
        parts = rel.split("/")
        name = parts[-1]
        dir_part = parts[0] if len(parts) > 1 else rng.choice(DIR_NAMES)
        escaped = name.replace("#", "\\#").replace("!", "\\!") if name[:1] in "#!" else name
        if escaped.endswith(" "):
            escaped = escaped[:-1] + "\\ "
        stem, dot, ext = name.partition(".")
        pattern = rng.choice(
            [
                escaped,
                "/" + escaped,
                "/" + rel.replace("#", "\\#").replace("!", "\\!").replace(" ", "\\ "),
                dir_part + "/",
                "/" + dir_part + "/",
                dir_part,
                "**/" + escaped,
                "**/" + dir_part,
                dir_part + "/**",
                dir_part + "/**/" + escaped,
                dir_part + "/*",
                "*" + dot + ext if dot else "*",
                "*.log",
                "[abk]*" + dot + ext,
                "[!a]*" + dot + ext,
                "?" + stem[1:] + dot + ext if stem else escaped,
                "# " + escaped,
                "",
            ]
        )
        if pattern and not pattern.startswith("#") and rng.random() < 0.3:
            pattern = "!" + pattern
        lines.append(pattern)
    return lines


GENERATED_SEEDS = range(40)


@pytest.mark.parametrize("seed", GENERATED_SEEDS)
def test_generated_tree_matches_git(tmp_path: Path, seed: int) -> None:
    check(tmp_path, _random_tree(random.Random(seed)))


def test_an_ignore_file_is_first_asked_as_one_alternation_that_agrees_with_its_lines(tmp_path: Path) -> None:
    """The walk asks one regex of every pattern before the lines one by one: it must combine, and match exactly
    the paths some line matches (directory marks and negations included)."""
    lines = ["*.o", "build/", "!keep.o", "/top-only", "docs/**/*.tmp", "*/", "a?c", "[ab]*.log", "\\!literal"]
    (tmp_path / ".gitignore").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rules = IgnoreRules(tmp_path).rules_for("")
    assert rules is not None and rules.any_pattern is not None
    paths = [
        "x.o",
        "keep.o",
        "build/",
        "src/build/",
        "top-only",
        "sub/top-only",
        "docs/a/b.tmp",
        "src/",
        "abc",
        "b.log",
        "c.log",
        "!literal",
        "plain.txt",
        "docs/readme.md",
    ]
    for path in paths:
        each = any(pattern.regex.search(path_bytes(path)) for pattern in rules.patterns)
        assert (rules.any_pattern.search(path_bytes(path)) is not None) == each, path
