"""Ignore parity with git itself, on the edges: how an ignore file's bytes become lines; whitespace, brackets,
stars and bytes in patterns; `.git/info/exclude`; the caps. Then seeded random trees built from the same pieces.

Each tree is written as bytes (names and patterns may hold `\\r`, tabs, form feeds, non-UTF-8 bytes), then
`git init`, and two answers are compared with git's: the walk against `git ls-files --others --exclude-standard`,
and `IgnoreRules.path_reason` (what file events ask) against `git check-ignore` for every file of the tree.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from ragls.config import Limits
from ragls.ingest.ignore import IgnoreRules
from ragls.ingest.walk import walk
from tests.git_env import isolated_git_env

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"), pytest.mark.timeout(120)]

Tree = dict[bytes, bytes]
NEVER_WALKED = (b".gitignore", b".tnsignore")
GIT_TIMEOUT_S = 30
BOM = b"\xef\xbb\xbf"


def _write(root: Path, tree: Tree) -> None:
    base = os.fsencode(root)
    for rel, content in tree.items():
        path = os.path.join(base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(content)


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    home = root.parent
    env = isolated_git_env(home)
    done = subprocess.run(["git", *args], cwd=root, env=env, input=stdin, capture_output=True, timeout=GIT_TIMEOUT_S)
    assert done.returncode in (0, 1), done.stderr.decode(errors="replace")  # check-ignore: 1 is "none ignored"
    return done.stdout


def _paths(output: bytes) -> set[str]:
    """Git's NUL-separated paths as the walk names them (bytes that are not UTF-8 as surrogate escapes)."""
    return {os.fsdecode(p) for p in output.split(b"\0") if p and p.rsplit(b"/", 1)[-1] not in NEVER_WALKED}


def check(tmp_path: Path, tree: Tree, exclude: bytes | None = None, cut: frozenset[str] = frozenset()) -> None:
    """ragls ignores what git ignores in `tree`, except `cut`: files only patterns past a cap would ignore."""
    root = tmp_path / "tree"
    root.mkdir()
    _write(root, tree)
    _git(root, "init", "-q", "--template=")
    if exclude is not None:
        (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (root / ".git" / "info" / "exclude").write_bytes(exclude)
    listed = _paths(_git(root, "ls-files", "--others", "--exclude-standard", "-z"))
    walked = set(walk(root, Limits()).files)
    assert walked == listed | cut, _describe(tree, exclude, listed | cut, walked)

    files = sorted({os.fsdecode(p) for p in tree if p.rsplit(b"/", 1)[-1] not in NEVER_WALKED})
    stdin = b"".join(os.fsencode(p) + b"\0" for p in files)
    git_ignored = _paths(_git(root, "check-ignore", "-z", "--stdin", stdin=stdin)) - cut
    rules = IgnoreRules(root)
    ragls_ignored = {p for p in files if rules.path_reason(p) is not None}
    assert ragls_ignored == git_ignored, _describe(tree, exclude, git_ignored, ragls_ignored, "ignored")


def _describe(tree: Tree, exclude: bytes | None, expected: set[str], actual: set[str], what: str = "admitted") -> str:
    shown = sorted((rel, data) for rel, data in tree.items() if rel.endswith(NEVER_WALKED))
    ignore_files = "\n".join(f"--- {rel!r}\n{data!r}" for rel, data in shown)
    return (
        f"\nignore files:\n{ignore_files}\n--- .git/info/exclude\n{exclude!r}\n"
        f"files: {sorted(os.fsdecode(p) for p in tree if not p.endswith(NEVER_WALKED))}\n"
        f"{what} by git only: {sorted(expected - actual)}\n{what} by ragls only: {sorted(actual - expected)}"
    )


def _tree(*names: bytes, ignore: bytes, where: bytes = b"") -> Tree:
    tree = {name: name + b"\n" for name in names}
    tree[where + b".gitignore"] = ignore
    return tree


# ---- how bytes become lines -------------------------------------------------------------------------------------

# Each of these fails on a reader that splits with `str.splitlines()`, strips with `str.strip()`, or keeps a BOM.
LINE_CASES: dict[str, Tree] = {
    # The macOS template before `Icon[^!-~]`: two CRs, so one survives an LF file.
    "icon-two-crs": _tree(b"Icon\r", b"Icon", b"a.txt", ignore=b".DS_Store\nIcon\r\r\n"),
    # The template's `Icon[\r]`, with a literal CR inside the brackets.
    "icon-cr-in-brackets": _tree(b"Icon\r", b"Icon", b"Icon]", ignore=b"Icon[\r]\n"),
    "icon-cr-in-brackets-crlf-file": _tree(b"Icon\r", b"Icon", ignore=b"# macOS\r\nIcon[\r]\r\n*.log\r\n"),
    "cr-inside-a-pattern": _tree(b"a\rb", b"a", b"b", ignore=b"a\rb\n"),
    "cr-before-crlf": _tree(b"a.txt\r", b"a.txt", ignore=b"a.txt\r\r\n"),
    "cr-only-line-endings": _tree(b"a.txt", b"b.py", b"a.txt\rb.py", ignore=b"a.txt\rb.py\r"),
    "cr-only-line-endings-one-pattern": _tree(b"a.txt", b"b.py", ignore=b"*.txt\r!b.py\r"),
    "crlf-then-cr-only": _tree(b"a.txt", b"b.py", b"c.md", b"b.py\rc.md", ignore=b"a.txt\r\nb.py\rc.md\r\n"),
    "utf8-bom": _tree(b"a.txt", b"b.py", b"c.md", ignore=BOM + b"a.txt\nb.py\n"),
    "utf8-bom-only-at-the-start": _tree(b"a.txt", b"b.py", ignore=BOM + b"a.txt\n" + BOM + b"b.py\n"),
    "utf8-bom-crlf": _tree(b"a.txt", b"b.py", ignore=BOM + b"a.txt\r\n"),
    "utf8-bom-before-negation": {
        **_tree(b"sub/a.txt", b"sub/b.txt", ignore=BOM + b"!a.txt\n", where=b"sub/"),
        b".gitignore": b"*.txt\n",
    },
    "not-utf8-pattern": _tree(b"caf\xe9", b"cafe", b"caf\xc3\xa9", ignore=b"caf\xe9\n"),
    "trailing-tab-kept": _tree(b"a.txt\t", b"a.txt", ignore=b"a.txt\t\n"),
    "trailing-nbsp-kept": _tree("a.txt\u00a0".encode(), b"a.txt", ignore="a.txt\u00a0\n".encode()),
    "space-then-tab-kept": _tree(b"a \t", b"a", b"a ", ignore=b"a \t\n"),
    "escaped-space-then-spaces": _tree(b"sp ", b"sp", ignore=b"sp\\    \n"),
    "escaped-backslash-then-space": _tree(b"bs\\", b"bs\\ ", b"bs", ignore=b"bs\\\\ \n"),
    "only-a-tab": _tree(b"\t", b"a", ignore=b"\t\n"),
    "lone-backslash-at-end": _tree(b"a", b"a\\", b"b", ignore=b"a\\\nb\n"),
    "bang-alone": _tree(b"!", b"a", ignore=b"!\na\n"),
}
SEPARATORS = {
    "vertical-tab": b"\x0b",
    "form-feed": b"\x0c",
    "file-separator": b"\x1c",
    "group-separator": b"\x1d",
    "record-separator": b"\x1e",
    "next-line": "\x85".encode(),
    "line-separator": "\u2028".encode(),
    "paragraph-separator": "\u2029".encode(),
}
for _label, _separator in SEPARATORS.items():
    # Git reads one pattern that holds the separator; splitlines() read two.
    LINE_CASES[f"{_label}-is-not-a-line-break"] = _tree(
        b"a.txt", b"b.py", b"a.txt" + _separator + b"b.py", ignore=b"a.txt" + _separator + b"b.py\n"
    )


@pytest.mark.parametrize("case", sorted(LINE_CASES))
def test_an_ignore_file_is_read_as_git_reads_it(tmp_path: Path, case: str) -> None:
    check(tmp_path, LINE_CASES[case])


# ---- patterns: brackets, stars, bytes ------------------------------------------------------------------------------

PATTERN_CASES: dict[str, Tree] = {
    "escaped-bracket-is-unclosed": _tree(b"c\\", b"c]", b"c[]", b"c", ignore=b"c[\\]\n"),
    "escaped-closing-bracket-member": _tree(b"x]", b"xa", b"x\\", ignore=b"x[\\]a]\n"),
    "escaped-range-end": _tree(b"y]", b"ya", b"y\\", b"y^", ignore=b"y[Z-\\]]\n"),
    "posix-digit": _tree(b"f1.txt", b"fa.txt", b"f:.txt", ignore=b"f[[:digit:]].txt\n"),
    "posix-negated-alpha": _tree(b"g1", b"ga", b"gZ", ignore=b"g[![:alpha:]]\n"),
    "posix-space-as-git-has-it": _tree(b"s ", b"s\t", b"s\x0b", b"s\x0c", b"sa", ignore=b"s[[:space:]]\n"),
    "posix-unknown-class-never-matches": _tree(b"h1", b"ha", b"hn]", b"h:]", ignore=b"h[[:nope:]]\n"),
    "reversed-range-keeps-its-start": _tree(b"jz", b"ja", b"jb", b"jm", ignore=b"j[z-ab]\n"),
    "slash-in-brackets-anchors": _tree(b"xay", b"sub/xay", b"x/y", ignore=b"x[/a]y\n"),
    # A range over `/` does not anchor the pattern, as a `/` written in brackets does.
    "range-over-slash-does-not-anchor": _tree(b"a", b"]", b"d/a", b"\\", b"a]", ignore=b"[*-[a\\]]\n"),
    "three-stars-are-two": _tree(b"b", b"d/b", b"d/e/b", b"c", ignore=b"***/b\n"),
    "stars-glued-to-a-literal-start": _tree(b"ab", b"a/b", b"ax/y/b", b"axb", b"c/ab", ignore=b"a**/b\n"),
    "stars-glued-at-the-end-reach-below": _tree(b"b/ab/a", b"b/ab/c/d", b"x/ab/a", ignore=b"ab\n!/b***/\n"),
    "stars-after-a-glued-run": _tree(b"ab", b"a/b", b"ax/y/b", b"c/ab", ignore=b"a**/**/b\n"),
    "escaped-slash-is-a-slash": _tree(b"d/x", b"d/y", b"dx", b"e/d/x", ignore=b"d\\/x\n"),
    "escaped-slash-first-or-last-never-matches": _tree(b"a/b", b"b", b"c/d", ignore=b"\\/b\nc\\/\nd\n"),
    "negated-slash-matches-nothing": _tree(b"logs/a.txt", b"b.txt", ignore=b"logs/\n!/\n"),
    "question-mark-is-one-byte": _tree(b"cafe", b"caf\xc3\xa9", ignore=b"caf?\n"),
    "bracket-is-one-byte": _tree(b"xb", b"x\xc3\xa9", b"xa", ignore=b"x[!a]\n"),
}


@pytest.mark.parametrize("case", sorted(PATTERN_CASES))
def test_patterns_match_as_git_matches_them(tmp_path: Path, case: str) -> None:
    check(tmp_path, PATTERN_CASES[case])


# ---- .git/info/exclude ------------------------------------------------------------------------------------------

EXCLUDE_CASES: dict[str, tuple[Tree, bytes]] = {
    "exclude-alone": ({b"x.log": b"", b"src/y.log": b"", b"a.txt": b""}, b"*.log\n"),
    "gitignore-negation-beats-exclude": ({b"x.log": b"", b"keep.log": b"", b".gitignore": b"!keep.log\n"}, b"*.log\n"),
    "gitignore-beats-exclude-negation": (
        {b"a.txt": b"", b"b.txt": b"", b"c.log": b"", b".gitignore": b"*.txt\n"},
        b"c.log\n!a.txt\n",
    ),
    "exclude-is-anchored-at-the-root": ({b"src/a.txt": b"", b"a.txt": b"", b"x/src/a.txt": b""}, b"/src/a.txt\n"),
    "nested-gitignore-beats-exclude": ({b"src/x.log": b"", b"x.log": b"", b"src/.gitignore": b"!x.log\n"}, b"*.log\n"),
    "exclude-directory": ({b"tmp/a": b"", b"src/tmp/b": b"", b"tmpfile": b""}, b"tmp/\n"),
    "exclude-read-as-git-reads-it": ({b"a.txt": b"", b"b.py": b"", b"Icon\r": b""}, BOM + b"a.txt\r\nIcon[\r]\n"),
}


@pytest.mark.parametrize("case", sorted(EXCLUDE_CASES))
def test_git_info_exclude_is_read(tmp_path: Path, case: str) -> None:
    tree, exclude = EXCLUDE_CASES[case]
    check(tmp_path, tree, exclude)


def test_a_worktree_git_file_leads_to_the_shared_exclude(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    _write(main, {b"a.txt": b"a\n"})
    _git(main, "init", "-q", "--template=")
    (main / ".git" / "info").mkdir()
    (main / ".git" / "info" / "exclude").write_bytes(b"*.log\n")
    worktree_git = main / ".git" / "worktrees" / "wt"
    worktree_git.mkdir(parents=True)
    (worktree_git / "commondir").write_text("../..\n", encoding="utf-8")
    linked = tmp_path / "linked"
    _write(linked, {b"x.log": b"", b"b.txt": b""})
    (linked / ".git").write_text(f"gitdir: {worktree_git}\n", encoding="utf-8")
    assert walk(linked, Limits()).files == ["b.txt"]


# ---- the caps: a warning and the rest of that file unapplied, never a failed run ---------------------------------

MAX_PATTERNS = 1024


def _numbered_patterns(n_patterns: int) -> bytes:
    return b"".join(b"p%d\n" % index for index in range(n_patterns))


CAP_CASES: dict[str, tuple[Tree, frozenset[str], str]] = {
    "over-1024-patterns": (
        {b".gitignore": _numbered_patterns(MAX_PATTERNS + 6), b"p0": b"", b"p1023": b"", b"p1024": b"", b"q": b""},
        frozenset({"p1024"}),
        ".gitignore has more than 1,024 patterns: those from line 1,025 on are not applied",
    ),
    "over-1024-patterns-nested": (
        {b"sub/.gitignore": b"# rules\n" + _numbered_patterns(2000), b"sub/p5": b"", b"sub/p1999": b"", b"p1999": b""},
        frozenset({"sub/p1999"}),
        "sub/.gitignore has more than 1,024 patterns: those from line 1,026 on are not applied",
    ),
    "over-64-kib": (
        {b".gitignore": b"first\n" + b"#" * (64 * 1024) + b"\nlast\n", b"first": b"", b"last": b"", b"other": b""},
        frozenset({"last"}),
        ".gitignore is 65,548 bytes, over the limit of 65,536 (64 KiB): its patterns after line 1 are not applied",
    ),
    "over-64-kib-line-across-the-cap": (
        {b".gitignore": b"#" * (64 * 1024 - 3) + b"\nacross\n", b"across": b"", b"other": b""},
        frozenset({"across"}),
        ".gitignore is 65,541 bytes, over the limit of 65,536 (64 KiB): its patterns after line 1 are not applied",
    ),
}


@pytest.mark.parametrize("case", sorted(CAP_CASES))
def test_an_ignore_file_over_a_cap_warns_and_keeps_its_head(tmp_path: Path, case: str) -> None:
    tree, cut, warning = CAP_CASES[case]
    check(tmp_path, tree, cut=cut)
    rules = IgnoreRules(tmp_path / "tree")
    walk(tmp_path / "tree", Limits(), rules)
    warnings = rules.take_warnings()
    assert len(warnings) == 1 and warnings[0].startswith(warning), warnings
    assert rules.take_warnings() == []


# ---- generated trees --------------------------------------------------------------------------------------------

DIR_NAMES = (b"a", b"src", b"logs", b"deep", b"sp ace", b"br[1]")
FILE_STEMS = (b"a", b"b", b"keep", b"x", b"Icon\r", b"sp ", b"tab\t", b"c[1]", b"back\\", b"#tag", b"!bang", b"f\x0cg")
FILE_EXTS = (b"", b".txt", b".log", b".py")
LINE_ENDINGS = (b"\n", b"\n", b"\r\n", b"\r")
SEPARATOR_BYTES = tuple(SEPARATORS.values())
BRACKETS = (b"[ab]", b"[!a]", b"[^k]", b"[a-c]", b"[[:alpha:]]", b"[\\]x]", b"[]a]", b"[z-a]", b"[\r]", b"[\t ]")


def _random_tree(rng: random.Random) -> tuple[Tree, bytes | None]:
    paths: list[bytes] = []
    dirs: list[bytes] = [b""]

    def grow(prefix: bytes, depth: int) -> None:
        for _ in range(rng.randint(1, 4)):
            paths.append(prefix + rng.choice(FILE_STEMS) + rng.choice(FILE_EXTS))
        if depth < 2:
            for name in rng.sample(DIR_NAMES, rng.randint(0, 2)):
                dirs.append(prefix + name)
                grow(prefix + name + b"/", depth + 1)

    grow(b"", 0)
    tree = {p: p + b"\n" for p in paths if p not in dirs}
    for directory in dirs:
        if directory == b"" or rng.random() < 0.35:
            ignore_file = directory + b"/.gitignore" if directory else b".gitignore"
            tree[ignore_file] = _random_ignore_file(rng, paths, directory)
    exclude = _random_ignore_file(rng, paths, b"") if rng.random() < 0.3 else None
    return tree, exclude


def _random_ignore_file(rng: random.Random, paths: list[bytes], directory: bytes) -> bytes:
    lines = [_random_pattern(rng, paths, directory) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.3:
        joined = lines[:2]
        lines[:2] = [rng.choice(SEPARATOR_BYTES).join(joined)]  # one line to git, two to splitlines()
    ending = rng.choice(LINE_ENDINGS)
    data = b"".join(line + ending for line in lines)
    if rng.random() < 0.2:
        data = data[: -len(ending)]  # no final line ending
    return (BOM if rng.random() < 0.3 else b"") + data


def _escape(name: bytes) -> bytes:
    for special in (b"\\", b"[", b"*", b"?"):
        name = name.replace(special, b"\\" + special)
    if name[:1] in (b"#", b"!"):
        name = b"\\" + name
    return name[:-1] + b"\\ " if name.endswith(b" ") else name


def _random_pattern(rng: random.Random, paths: list[bytes], directory: bytes) -> bytes:
    prefix = directory + b"/" if directory else b""
    below = [p[len(prefix) :] for p in paths if p.startswith(prefix)] or [b"a.txt"]
    rel = rng.choice(below)
    parts = rel.split(b"/")
    name = parts[-1]
    dir_part = parts[0] if len(parts) > 1 else rng.choice(DIR_NAMES)
    stem, dot, ext = name.partition(b".")
    pattern = rng.choice(
        [
            _escape(name),
            name,  # unescaped: brackets, backslashes and `#`/`!` read as git reads them
            b"/" + b"/".join(_escape(part) for part in parts),
            _escape(dir_part) + b"/",
            b"/" + _escape(dir_part) + b"/",
            b"**/" + _escape(name),
            _escape(dir_part) + b"/**",
            _escape(dir_part) + b"/**/" + _escape(name),
            b"*" + dot + ext if dot else b"*",
            rng.choice(BRACKETS) + b"*" + dot + ext,
            _escape(stem[:1]) + rng.choice(BRACKETS) + b"*",
            b"?" + _escape(stem[1:]) + dot + ext if stem else _escape(name),
            b"# " + _escape(name),
            b"",
        ]
    )
    if pattern and not pattern.startswith(b"#") and rng.random() < 0.3:
        pattern = b"!" + pattern
    roll = rng.random()
    if roll < 0.1:
        pattern += b"   "  # trailing spaces, which git trims
    elif roll < 0.2:
        pattern += b"\t"  # a trailing tab, which git keeps
    elif roll < 0.25:
        pattern = b" " + pattern  # a leading space, which git keeps
    return pattern


GENERATED_SEEDS = range(100)


@pytest.mark.parametrize("seed", GENERATED_SEEDS)
def test_generated_tree_matches_git(tmp_path: Path, seed: int) -> None:
    tree, exclude = _random_tree(random.Random(seed))
    check(tmp_path, tree, exclude)
