"""The CLI's flags: the options every command shares, argument types that answer in the flag's own terms, and
the Settings the flags make."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from ragls.config import (
    LIMIT_PRESETS,
    MAX_HALF_LIFE_DAYS,
    Limits,
    Recency,
    Settings,
    SharedIndex,
    limit_name,
    parse_limit_assignment,
    shared_index_name_problem,
)
from ragls.rag.service import MAX_TOP_K


def add_common(command: argparse.ArgumentParser) -> None:
    command.add_argument("path", metavar="PATH", type=Path, help="the folder to index")
    add_limits(command)
    add_shared(command)
    command.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    command.add_argument(
        "--no-cache", action="store_true", help="neither load nor save the index in the user cache directory"
    )


def add_limits(command: argparse.ArgumentParser) -> None:
    defaults = ", ".join(f"{limit_name(name)} {value:,}" for name, value in vars(Limits()).items())
    command.add_argument(
        "--limits",
        choices=list(LIMIT_PRESETS),
        default="default",
        help="the limits to start from: default (a workspace of 100,000 files and 2 GB fits) or strict "
        "(the seeds' limits, for shared deployments: 4,096 files, 64 MiB decoded)",
    )
    command.add_argument(
        "--limit",
        action="append",
        default=[],
        type=_limit_assignment,
        metavar="NAME=VALUE",
        help=f"set one limit, e.g. --limit maxDecodedBytes=8GiB (repeatable; defaults: {defaults})",
    )
    command.add_argument(
        "--max-files", type=positive_int, default=None, metavar="N", help="the file limit (--limit maxFiles=N)"
    )


def add_min_score(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--min-score",
        type=_fraction,
        default=0.0,
        metavar="S",
        help="leave out results scoring less than S (scores are relevance, 0..1; default 0)",
    )


def add_recency(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--recency",
        action="store_true",
        help="rank recently changed files higher (last commit time in a git repository, else mtime); off by default",
    )
    command.add_argument(
        "--half-life-days",
        type=_half_life,
        default=Recency().half_life_days,
        metavar="DAYS",
        help="with --recency: a file's boost halves every DAYS days since its last change (default 30)",
    )


def add_shared(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--shared-index", type=shared_name, default=None, metavar="NAME", help="start from this published index"
    )
    command.add_argument(
        "--shared-url", default=None, metavar="URL", help="its database (default: libpq's PGHOST, PGSERVICE...)"
    )


def shared_name(text: str) -> str:
    problem = shared_index_name_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def _half_life(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0.0 < value <= MAX_HALF_LIFE_DAYS:
        raise argparse.ArgumentTypeError(f"expected days above 0, at most {MAX_HALF_LIFE_DAYS:,}, got {text!r}")
    return value


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The limits, and recency where the command has `--recency`."""
    recency = (
        Recency(enabled=True, half_life_days=args.half_life_days) if getattr(args, "recency", False) else Recency()
    )
    name = getattr(args, "shared_index", None)
    shared = SharedIndex(name, getattr(args, "shared_url", None)) if name else None
    return Settings(limits=limits_from_args(args), recency=recency, shared_index=shared)


def _limit_assignment(text: str) -> tuple[str, int]:
    try:
        return parse_limit_assignment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def top_k(text: str) -> int:
    """-k is checked before anything is indexed, in the flag's own terms (the engine would say `topK`)."""
    if not text.strip().isdigit() or not 1 <= int(text) <= MAX_TOP_K:
        raise argparse.ArgumentTypeError(f"expected 1..{MAX_TOP_K}, got {text!r}")
    return int(text)


def limits_from_args(args: argparse.Namespace) -> Limits:
    """`--limits`, then `--max-files` (which makes room for as many entries too), then each `--limit`."""
    limits = LIMIT_PRESETS[args.limits]
    if args.max_files is not None:
        limits = replace(limits, max_files=args.max_files, max_entries=max(limits.max_entries, 2 * args.max_files))
    for attribute, value in args.limit:
        limits = replace(limits, **{attribute: value})
    return limits
