"""The `ragls` command: `serve` for editors, and `index`, `search`, `context`, `symbols`, `watch` without one."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from threadpoolctl import threadpool_limits

from ragls import __version__
from ragls.arguments import (
    add_common,
    add_limits,
    add_min_score,
    add_recency,
    add_shared,
    limits_from_args,
    positive_int,
    settings_from_args,
    shared_name,
    top_k,
)
from ragls.config import (
    Settings,
    limit_flag,
)
from ragls.console import StderrHandler, out, progress_bar, say
from ragls.embedders.runtime import EmbeddingError
from ragls.errors import ConfigError, LimitExceeded, RaglsError
from ragls.model import SearchResult
from ragls.rag.indexer import Cancelled
from ragls.rag.prompt import FORMATS
from ragls.rag.service import RagService, RunSummary
from ragls.wire import search_result_to_wire

if TYPE_CHECKING:
    from ragls.index.embedding import EmbeddingProvider

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.handler(args))
    except LimitExceeded as exc:
        say(f"ragls: error: {exc.with_knob(limit_flag(exc.limit))}")
        return EXIT_FAILURE
    except RaglsError as exc:
        say(f"ragls: error: {exc}")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        say("ragls: interrupted")
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
        description="Serve search_code, context_prompt, find_symbols, read_lines, index_status and reindex over "
        "MCP on stdio for the folder PATH (default: the current directory).",
    )
    mcp.add_argument("path", metavar="PATH", type=Path, nargs="?", default=Path("."), help="the folder to serve")
    add_limits(mcp)
    add_shared(mcp)
    add_recency(mcp)
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
        help="index a folder (and embed its chunks when a dense provider is active), then print what was indexed",
        description="Index PATH and report files, chunks, skips and time. With an embedding provider (ragls[dense] "
        "installed, or RAGLS_EMBEDDING naming one) every chunk without a stored vector is embedded too, so that "
        "`search` and `context` use dense vectors; RAGLS_EMBEDDING=none keeps it lexical.",
    )
    add_common(index)
    index.set_defaults(handler=_index)

    search = commands.add_parser(
        "search",
        help="index a folder, then print the chunks that answer QUERY",
        description="Index PATH, then rank its chunks for QUERY. Dense vectors join when every chunk has one "
        "stored by `ragls index`; until then the search is lexical, and says so on stderr.",
    )
    add_common(search)
    search.add_argument("query", metavar="QUERY", help="a question or keywords, in quotes")
    search.add_argument("-k", "--top-k", type=top_k, default=10, help="how many results (1..100, default 10)")
    search.add_argument("--json", action="store_true", help="print results as JSON (the protocol's RagResult)")
    search.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="exact metadata match, e.g. --filter language=python (repeatable)",
    )
    add_min_score(search)
    add_recency(search)
    search.set_defaults(handler=_search)

    context = commands.add_parser(
        "context",
        help="print a context prompt for QUERY",
        description="Index PATH, then print the context prompt for QUERY (dense vectors join as in `search`).",
    )
    add_common(context)
    context.add_argument("query", metavar="QUERY")
    context.add_argument("--format", choices=FORMATS, default="fenced", help="prompt layout (default fenced)")
    context.add_argument("-k", "--top-k", type=top_k, default=5, help="how many chunks (1..100, default 5)")
    add_min_score(context)
    add_recency(context)
    context.set_defaults(handler=_context)

    symbols = commands.add_parser(
        "symbols",
        help="find symbols (functions, classes, headings) by name",
        description="Index PATH, then list symbols matching QUERY.",
    )
    add_common(symbols)
    symbols.add_argument("query", metavar="QUERY", nargs="?", default="", help="name or part of it")
    # `--limit` sets an index limit on every command, so the number of symbols is `--count`.
    symbols.add_argument("-n", "--count", type=positive_int, default=50, help="how many symbols (default 50)")
    symbols.set_defaults(handler=_symbols)

    watch = commands.add_parser(
        "watch",
        help="index a folder, then keep its stored index fresh from file events until Ctrl-C",
        description="Index PATH, then re-index each file that changes, printing one line per change (`updated "
        "src/a.py (3 chunks)`, `removed src/b.py`). Each change is saved to the folder's store before its line "
        "is printed, so `ragls search`, `ragls mcp` and editors load it current. Ctrl-C or SIGTERM stops it "
        "(exit 0). With an embedding provider, new chunks are embedded in the background.",
    )
    add_common(watch)
    watch.set_defaults(handler=_watch)
    _add_publish(commands)
    return parser


def _add_publish(commands: Any) -> None:
    publish = commands.add_parser(
        "publish",
        help="publish a folder's index to a shared PostgreSQL index (needs ragls[postgres])",
        description="Index PATH (its git HEAD) and write it to PostgreSQL as a new generation of NAME, in one "
        "transaction: unchanged files reuse their rows, old generations are pruned. With ragls[dense] (or "
        "RAGLS_EMBEDDING naming a provider) the chunks' vectors are published too, where the database has "
        "pgvector; RAGLS_EMBEDDING=none publishes lexically. Editors and agents with the `sharedIndex` setting (or "
        "--shared-index) start from it.",
    )
    publish.add_argument("path", metavar="PATH", type=Path, help="the folder to publish (a git checkout)")
    publish.add_argument(
        "--to", default=None, metavar="URL", help="postgresql://user@host/db (default: libpq's PGHOST, PGSERVICE...)"
    )
    publish.add_argument("--name", required=True, type=shared_name, help="the shared index's name, e.g. monorepo")
    publish.add_argument("--commit", default=None, help="the commit id to record (default: git rev-parse HEAD)")
    publish.add_argument("--keep", type=positive_int, default=3, metavar="N", help="generations kept (default 3)")
    add_limits(publish)
    publish.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    publish.set_defaults(handler=_publish)


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
            out("no stores")
        for info in stores:
            gone = "" if info.exists else "  (folder gone)"
            size = f"{info.bytes / 1e6:.1f} MB"
            out(f"{info.folder}{gone}")
            out(
                f"    {info.path.parent}  {size}, generation {info.generation}, {info.files} files, "
                f"{info.chunks} chunks, saved {info.committed_at or 'never'}"
            )
        return EXIT_OK
    if args.path is not None:
        target = store_path(args.cache_dir, args.path).parent
        existed = target.exists()
        delete_store(target)
        out(f"cleared {target}" if existed else f"no store for {args.path.resolve()}")
        return EXIT_OK
    removed = remove_stale_stores(args.cache_dir)
    for info in list_stores(args.cache_dir):
        delete_store(info.path.parent)
        removed.append(info)
    out(f"cleared {len(removed)} stores")
    return EXIT_OK


def _mcp(args: argparse.Namespace) -> int:
    try:
        from ragls.mcp.app import run_mcp
    except ImportError as exc:
        raise RaglsError(f"the MCP server needs the mcp extra: pip install 'ragls[mcp]' ({exc})") from exc
    one_blas_thread()
    return run_mcp(args.path, settings_from_args(args))


@contextmanager
def _indexed_service(
    args: argparse.Namespace,
    dense: bool = False,
    cancel: threading.Event | None = None,
    background_embedding: bool = False,
) -> Iterator[tuple[RagService, RunSummary]]:
    """The indexed folder's service; closing it (after the answer is out) saves the index snapshot.

    With `dense`, the `embedding` setting's provider is attached; nothing embeds in the background (unless
    `background_embedding`, for `watch`): `index` embeds what is missing, `search` and `context` use the vectors
    when every chunk has one. `cancel` stops the index run (as Cancelled).
    """
    # Warnings (a folder with no admitted file, a store that could not be used) go to stderr.
    logging.basicConfig(level=logging.WARNING, handlers=[StderrHandler()])
    settings = settings_from_args(args)
    embedding = _embedding_provider(settings) if dense else None
    service = RagService(
        args.path, settings, embedding=embedding, persist=not args.no_cache, background_embedding=background_embedding
    )
    try:
        with progress_bar(args.quiet) as bar:
            summary = service.index_directory(progress=bar.files if bar else None, cancel=cancel)
        yield service, summary
    finally:
        try:
            sys.stdout.flush()
        finally:
            service.close()


def _embedding_provider(settings: Settings) -> EmbeddingProvider | None:
    """The provider the `embedding` setting (RAGLS_EMBEDDING) names; one that cannot load leaves the CLI lexical."""
    from ragls.embedders.settings import provider_from_setting

    try:
        return provider_from_setting(settings.embedding, settings.cache_dir)
    except ConfigError as exc:
        say(f"ragls: warning: {exc}; searching without dense vectors")
        return None


def _index(args: argparse.Namespace) -> int:
    with _indexed_service(args, dense=True) as (service, summary):
        if service.status().vectors is not None:
            _embed_missing_vectors(service, args)
        return _print_index_report(service, summary)


def _embed_missing_vectors(service: RagService, args: argparse.Namespace) -> None:
    """Embed every chunk without a stored vector, with a bar; a provider that fails is an error after the
    lexical index is saved."""
    with progress_bar(args.quiet) as bar:
        if bar:
            bar.chunks(*_coverage(service))
        try:
            service.embed_pending(bar.chunks if bar else None)
        except EmbeddingError as exc:
            raise EmbeddingError(
                f"{exc}; the lexical index is saved, and searches stay lexical until every chunk has a vector "
                "(RAGLS_EMBEDDING=none turns dense vectors off)"
            ) from exc


def _use_complete_vectors(service: RagService, args: argparse.Namespace) -> None:
    """Dense vectors join the search when every chunk has one; otherwise stderr says why they are left out."""
    if service.status().vectors is None:
        return
    embedded, total = _coverage(service)
    if total == 0:
        return
    if embedded < total:
        fix = (
            "--no-cache leaves out the stored vectors"
            if args.no_cache
            else f"`ragls index {shlex.quote(str(args.path))}` embeds the rest"
        )
        say(f"ragls: note: dense vectors cover {embedded:,} of {total:,} chunks, so this answer is lexical only; {fix}")
        return
    try:
        service.embed_pending()  # nothing is pending: this loads the model that embeds the query
    except RaglsError as exc:
        say(f"ragls: warning: {exc}; searching without dense vectors")


def _coverage(service: RagService) -> tuple[int, int]:
    vectors = service.status().vectors or {}
    return vectors.get("embedded", 0), vectors.get("total", 0)


def _print_index_report(service: RagService, summary: RunSummary) -> int:
    status = service.status()
    skipped = ", ".join(f"{reason} {count}" for reason, count in sorted(status.skipped.items())) or "none"
    out(f"indexed {status.indexed_path}")
    out(f"files {status.files}, chunks {status.chunks}, symbols {len(service.state.symbols)}")
    out(f"skipped: {skipped}")
    if status.vectors is not None:
        vectors = status.vectors
        out(f"vectors {vectors['embedded']}/{vectors['total']} chunks, {vectors['model']}")
    if status.shared is not None:
        from ragls.mcp.render import shared_text

        out(shared_text(status.shared))
    report = summary.report
    out(f"read {report.chunked_files} changed files, reused {report.reused_files}; took {summary.seconds:.2f}s")
    return EXIT_OK


def _search(args: argparse.Namespace) -> int:
    filters = dict(_parse_filter(item) for item in args.filter) or None
    with _indexed_service(args, dense=True) as (service, _):
        _use_complete_vectors(service, args)
        results = service.search(args.query, args.top_k, filters, args.min_score)
        if args.json:
            out(json.dumps([search_result_to_wire(r, service.root) for r in results], indent=2))
            return EXIT_OK
        if not results:
            out("no results")
        for rank, result in enumerate(results, start=1):
            out(_format_result(rank, result))
        return EXIT_OK


def _context(args: argparse.Namespace) -> int:
    with _indexed_service(args, dense=True) as (service, _):
        _use_complete_vectors(service, args)
        prompt, _ = service.build_context_prompt(args.query, args.top_k, args.format, args.min_score)
        out(prompt)
        return EXIT_OK


def _symbols(args: argparse.Namespace) -> int:
    with _indexed_service(args) as (service, _):
        found = service.symbols(args.query, args.count)
        if not found:
            out("no symbols")
        for symbol in found:
            out(f"{symbol.qualified_name}  {symbol.kind}  {symbol.file}:{symbol.start_line}-{symbol.end_line}")
        return EXIT_OK


def _watch(args: argparse.Namespace) -> int:
    """Index, print the report, then print each change until SIGINT or SIGTERM; exit 0 however it stops."""
    from ragls.watching import keep_fresh, stop_on_signals

    with stop_on_signals() as stop:
        try:
            with _indexed_service(args, dense=True, cancel=stop, background_embedding=True) as (service, summary):
                _print_index_report(service, summary)
                sys.stdout.flush()
                keep_fresh(service, stop)
        except Cancelled:
            pass  # stopped while the first index ran: the previous generation stays as it was
    say("ragls: watch stopped")
    return EXIT_OK


def _publish(args: argparse.Namespace) -> int:
    from ragls.rag.shared.publish import PublishOptions, publish

    logging.basicConfig(level=logging.WARNING, handlers=[StderrHandler()])
    settings = Settings(limits=limits_from_args(args))
    options = PublishOptions(args.commit, args.keep, _embedding_provider(settings))
    with progress_bar(args.quiet) as bar:
        report = publish(
            args.path,
            args.to,
            args.name,
            settings,
            options,
            bar.files if bar else None,
            bar.chunks if bar else None,
        )
    for warning in report.warnings:
        say(f"ragls: warning: {warning}")
    if report.left_out:
        say(f"ragls: note: {len(report.left_out)} files with names PostgreSQL cannot hold stay local to readers")
    out(f"published {report.name} generation {report.generation} at commit {report.commit}")
    out(
        f"files {report.files}, chunks {report.chunks}; wrote {report.written_files} files, "
        f"removed {report.removed_files}, pruned {report.pruned_generations} generations; "
        f"took {report.seconds:.2f}s"
    )
    if report.vector_model is not None:
        out(f"vectors of {report.vector_model}: wrote {report.written_vectors}")
    base = ", built on the last generation's" if report.from_snapshot else ""
    out(f"snapshot for fresh readers: {report.snapshot_bytes / 2**20:,.1f} MB{base}")
    return EXIT_OK


def _format_result(rank: int, result: SearchResult) -> str:
    metadata = result.document.metadata
    where = (
        f"{metadata['file']}:{metadata.get('startLine')}-{metadata.get('endLine')}"
        if metadata.get("file")
        else result.document.id
    )
    symbol = f"  {metadata['symbol']}" if metadata.get("symbol") else ""
    page = f"  page {metadata['page']}" if metadata.get("page") is not None else ""
    lines = [line for line in result.document.content.splitlines() if line.strip()][:3]
    body = "\n".join(f"    {line[:120]}" for line in lines)
    return f"{rank:>2}. {result.score:.4f}  {where}{page}{symbol}\n{body}"


def _parse_filter(item: str) -> tuple[str, Any]:
    key, separator, value = item.partition("=")
    if not separator or not key:
        raise RaglsError(f"--filter expects KEY=VALUE, got {item!r}")
    return key, int(value) if value.lstrip("-").isdigit() else value
