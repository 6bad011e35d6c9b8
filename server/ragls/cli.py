"""The `ragls` command: `serve` for editors, and `index`, `search`, `context`, `symbols` without one."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from threadpoolctl import threadpool_limits

from ragls import __version__
from ragls.config import Limits, Settings
from ragls.errors import RaglsError
from ragls.model import Progress, SearchResult
from ragls.rag.prompt import FORMATS
from ragls.rag.service import RagService, RunSummary
from ragls.wire import search_result_to_wire

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.handler(args))
    except RaglsError as exc:
        _say(f"ragls: error: {exc}")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        _say("ragls: interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (`ragls search ... | head`): not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragls", description="A retrieval index for a folder of code: a language server and a CLI."
    )
    parser.add_argument("--version", action="version", version=f"ragls {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="run the language server (stdio by default)",
        description="Run the language server. stdout carries only JSON-RPC.",
    )
    serve.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (the default)")
    serve.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    serve.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    serve.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="log level on stderr (default warning)",
    )
    serve.set_defaults(handler=_serve)

    mcp = commands.add_parser(
        "mcp",
        help="run a Model Context Protocol server for AI agents (needs ragls[mcp])",
        description="Serve search_code, context_prompt, index_status and reindex over MCP on stdio "
        "for the folder PATH (default: the current directory).",
    )
    mcp.add_argument("path", metavar="PATH", type=Path, nargs="?", default=Path("."), help="the folder to serve")
    mcp.set_defaults(handler=_mcp)

    cache = commands.add_parser(
        "cache",
        help="list or clear the persisted indexes in the user cache directory",
        description="`cache list` shows every stored index and its folder; `cache clear [PATH]` deletes the "
        "store of PATH, or every store.",
    )
    cache.add_argument("action", choices=["list", "clear"])
    cache.add_argument("path", metavar="PATH", type=Path, nargs="?", default=None, help="the folder (clear only)")
    cache.add_argument("--cache-dir", default=None, help="the cache directory (default: the user cache dir)")
    cache.set_defaults(handler=_cache)

    index = commands.add_parser(
        "index",
        help="index a folder and print what was indexed",
        description="Index PATH and report files, chunks, skips and time.",
    )
    _add_common(index)
    index.set_defaults(handler=_index)

    search = commands.add_parser(
        "search",
        help="index a folder, then print the chunks that answer QUERY",
        description="Index PATH, then rank its chunks for QUERY.",
    )
    _add_common(search)
    search.add_argument("query", metavar="QUERY", help="a question or keywords, in quotes")
    search.add_argument("-k", "--top-k", type=int, default=10, help="how many results (1..100, default 10)")
    search.add_argument("--json", action="store_true", help="print results as JSON (the protocol's RagResult)")
    search.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="exact metadata match, e.g. --filter language=python (repeatable)",
    )
    search.set_defaults(handler=_search)

    context = commands.add_parser(
        "context",
        help="print a context prompt for QUERY",
        description="Index PATH, then print the context prompt for QUERY.",
    )
    _add_common(context)
    context.add_argument("query", metavar="QUERY")
    context.add_argument("--format", choices=FORMATS, default="fenced", help="prompt layout (default fenced)")
    context.add_argument("-k", "--top-k", type=int, default=5, help="how many chunks (1..100, default 5)")
    context.set_defaults(handler=_context)

    symbols = commands.add_parser(
        "symbols",
        help="find symbols (functions, classes, headings) by name",
        description="Index PATH, then list symbols matching QUERY.",
    )
    _add_common(symbols)
    symbols.add_argument("query", metavar="QUERY", nargs="?", default="", help="name or part of it")
    symbols.add_argument("-n", "--limit", type=int, default=50, help="how many symbols (default 50)")
    symbols.set_defaults(handler=_symbols)
    return parser


def _add_common(command: argparse.ArgumentParser) -> None:
    command.add_argument("path", metavar="PATH", type=Path, help="the folder to index")
    command.add_argument(
        "--max-files", type=int, default=None, help=f"raise the file limit (default {Limits().max_files})"
    )
    command.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    command.add_argument(
        "--no-cache", action="store_true", help="neither load nor save the index in the user cache directory"
    )


def one_blas_thread() -> None:
    """A server's only BLAS products are queries against the dense vectors, small enough for one thread.
    BLAS's own threads spin for a while after each product and, on 2 cores, slowed the next query's model
    run: search p50 with vectors on flask was 5.3-6.4 ms with them, 4.4-4.6 ms without."""
    threadpool_limits(1, user_api="blas")


def _serve(args: argparse.Namespace) -> int:
    from ragls.server.app import run_server

    logging.basicConfig(
        level=args.log_level.upper(), stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    one_blas_thread()
    run_server(tcp=args.tcp, host=args.host, port=args.port)
    return EXIT_OK


def _cache(args: argparse.Namespace) -> int:
    from ragls.rag.store import delete_store, list_stores, remove_stale_stores, store_path

    if args.action == "list":
        stores = list_stores(args.cache_dir)
        if not stores:
            _out("no stores")
        for info in stores:
            gone = "" if info.exists else "  (folder gone)"
            size = f"{info.bytes / 1e6:.1f} MB"
            _out(f"{info.folder}{gone}")
            _out(
                f"    {info.path.parent}  {size}, generation {info.generation}, {info.files} files, "
                f"{info.chunks} chunks, saved {info.committed_at or 'never'}"
            )
        return EXIT_OK
    if args.path is not None:
        target = store_path(args.cache_dir, args.path).parent
        existed = target.exists()
        delete_store(target)
        _out(f"cleared {target}" if existed else f"no store for {args.path.resolve()}")
        return EXIT_OK
    removed = remove_stale_stores(args.cache_dir)
    for info in list_stores(args.cache_dir):
        delete_store(info.path.parent)
        removed.append(info)
    _out(f"cleared {len(removed)} stores")
    return EXIT_OK


def _mcp(args: argparse.Namespace) -> int:
    try:
        from ragls.mcp.app import run_mcp
    except ImportError as exc:
        raise RaglsError(f"the MCP server needs the mcp extra: pip install 'ragls[mcp]' ({exc})") from exc
    one_blas_thread()
    return run_mcp(args.path)


@contextmanager
def _indexed_service(args: argparse.Namespace) -> Iterator[tuple[RagService, RunSummary]]:
    """The indexed folder's service; closing it (after the answer is out) saves the index snapshot."""
    settings = Settings()
    if args.max_files:
        from dataclasses import replace

        settings = replace(
            settings,
            limits=replace(
                settings.limits,
                max_files=args.max_files,
                max_entries=max(settings.limits.max_entries, 2 * args.max_files),
            ),
        )
    service = RagService(args.path, settings, persist=not args.no_cache)
    bar = None if args.quiet else _ProgressBar(sys.stderr)
    summary = service.index_directory(progress=bar.update if bar else None)
    if bar:
        bar.finish()
    try:
        yield service, summary
    finally:
        try:
            sys.stdout.flush()
        finally:
            service.close()


def _index(args: argparse.Namespace) -> int:
    with _indexed_service(args) as (service, summary):
        return _print_index_report(service, summary)


def _print_index_report(service: RagService, summary: RunSummary) -> int:
    status = service.status()
    skipped = ", ".join(f"{reason} {count}" for reason, count in sorted(status.skipped.items())) or "none"
    _out(f"indexed {status.indexed_path}")
    _out(f"files {status.files}, chunks {status.chunks}, symbols {len(service.state.symbols)}")
    _out(f"skipped: {skipped}")
    report = summary.report
    _out(f"read {report.chunked_files} changed files, reused {report.reused_files}; took {summary.seconds:.2f}s")
    return EXIT_OK


def _search(args: argparse.Namespace) -> int:
    filters = dict(_parse_filter(item) for item in args.filter) or None
    with _indexed_service(args) as (service, _):
        results = service.search(args.query, args.top_k, filters)
        if args.json:
            _out(json.dumps([search_result_to_wire(r, service.root) for r in results], indent=2))
            return EXIT_OK
        if not results:
            _out("no results")
        for rank, result in enumerate(results, start=1):
            _out(_format_result(rank, result))
        return EXIT_OK


def _context(args: argparse.Namespace) -> int:
    with _indexed_service(args) as (service, _):
        prompt, _ = service.build_context_prompt(args.query, args.top_k, args.format)
        _out(prompt)
        return EXIT_OK


def _symbols(args: argparse.Namespace) -> int:
    with _indexed_service(args) as (service, _):
        found = service.symbols(args.query, args.limit)
        if not found:
            _out("no symbols")
        for symbol in found:
            _out(f"{symbol.qualified_name}  {symbol.kind}  {symbol.file}:{symbol.start_line}-{symbol.end_line}")
        return EXIT_OK


def _format_result(rank: int, result: SearchResult) -> str:
    metadata = result.document.metadata
    where = (
        f"{metadata['file']}:{metadata.get('startLine')}-{metadata.get('endLine')}"
        if metadata.get("file")
        else result.document.id
    )
    symbol = f"  {metadata['symbol']}" if metadata.get("symbol") else ""
    lines = [line for line in result.document.content.splitlines() if line.strip()][:3]
    body = "\n".join(f"    {line[:120]}" for line in lines)
    return f"{rank:>2}. {result.score:.4f}  {where}{symbol}\n{body}"


def _parse_filter(item: str) -> tuple[str, Any]:
    key, separator, value = item.partition("=")
    if not separator or not key:
        raise RaglsError(f"--filter expects KEY=VALUE, got {item!r}")
    return key, int(value) if value.lstrip("-").isdigit() else value


class _ProgressBar:
    """Files done/total and the current file, redrawn in place on a terminal, or a final line otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.is_tty = stream.isatty()
        self.last_draw = 0.0
        self.last: Progress | None = None

    def update(self, progress: Progress) -> None:
        self.last = progress
        now = time.monotonic()
        if self.is_tty and (now - self.last_draw > 0.05 or progress.indexed_files == progress.total_files):
            self.last_draw = now
            width = 24
            filled = width * progress.indexed_files // max(progress.total_files, 1)
            bar = "#" * filled + "-" * (width - filled)
            line = f"[{bar}] {progress.indexed_files}/{progress.total_files} {progress.current_file}"
            self.stream.write("\r" + line[:100].ljust(100))
            self.stream.flush()

    def finish(self) -> None:
        if self.is_tty and self.last is not None:
            self.stream.write("\n")
            self.stream.flush()


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")


def _out(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
