"""One folder for the MCP server: a RagService indexed in the background and kept fresh by a watcher."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from ragls.config import Settings, limit_flag
from ragls.embedders.settings import provider_from_setting
from ragls.errors import ConfigError, LimitExceeded, RaglsError
from ragls.index.embedding import EmbeddingProvider
from ragls.ingest.watch import FolderWatcher
from ragls.model import IndexStatus, Progress, ProgressGate
from ragls.rag.freshness import FreshnessQueue
from ragls.rag.service import RagService, RunSummary

log = logging.getLogger(__name__)
PROGRESS_LOG_SECONDS = 2.0


class FolderSession:
    """The first index runs in a daemon thread; readers may wait for it with `wait_until_ready`.

    With an embedding provider, new chunks are embedded in the background, and dense vectors join the search
    once every chunk has one, as in the language server.
    """

    def __init__(
        self,
        root: Path,
        settings: Settings | None = None,
        watch: bool = True,
        embedding: EmbeddingProvider | None = None,
    ) -> None:
        self.root = root.resolve()
        self.settings = settings or Settings()
        self.service = RagService(self.root, self.settings, embedding=embedding, persist=True)
        self.first_run_done = threading.Event()
        self.first_run_error: str | None = None
        self._queue = FreshnessQueue(lambda: self.service, on_done=_log_refresh)
        self._watcher = FolderWatcher(self.root, self.settings.limits, self._queue.submit) if watch else None
        self._thread = threading.Thread(target=self._first_run, name="ragls-mcp-index", daemon=True)

    def start(self) -> None:
        """Start the first index and the folder watcher; returns at once."""
        log.info("ragls mcp: indexing %s", self.root)
        self._thread.start()
        if self._watcher is not None:
            self._watcher.start()

    def close(self) -> None:
        self._queue.close()
        if self._watcher is not None:
            self._watcher.stop()
        self.service.close()

    def wait_until_ready(self, timeout: float) -> bool:
        """True once the first index has finished (committed or failed) within `timeout` seconds."""
        return self.first_run_done.wait(timeout)

    def reindex(self, full: bool = False) -> RunSummary:
        """Re-walk the folder (every file re-read when `full`); raises RaglsError when the run fails.

        A limit is raised with a flag of `ragls mcp`, so its breach names that flag.
        """
        try:
            return self.service.index_directory(self.root, _ProgressLog(self.root).update, None, full)
        except LimitExceeded as exc:
            raise exc.with_knob(limit_flag(exc.limit)) from None

    def status(self) -> IndexStatus:
        return self.service.status()

    def is_indexed(self, rel_path: str) -> bool:
        """Whether the current generation holds the file (a folder-relative POSIX path)."""
        state = self.service.state
        with state.lock.reading():
            return rel_path in state.files

    def _first_run(self) -> None:
        try:
            summary = self.reindex()
        except RaglsError as exc:
            self.first_run_error = str(exc)
            log.warning("ragls mcp: indexing %s failed: %s", self.root, exc)
        except Exception as exc:  # A crash in one run must not leave waiting readers hanging.
            self.first_run_error = f"{type(exc).__name__}: {exc}"
            log.exception("ragls mcp: indexing %s crashed", self.root)
        else:
            status = self.service.status()
            log.info("ragls mcp: indexed %d files, %d chunks in %.1fs", status.files, status.chunks, summary.seconds)
        finally:
            self.first_run_done.set()


def embedding_provider(settings: Settings) -> EmbeddingProvider | None:
    """The provider the `embedding` setting (RAGLS_EMBEDDING) names; one that cannot load leaves the tools lexical."""
    try:
        return provider_from_setting(settings.embedding, settings.cache_dir)
    except ConfigError as exc:
        log.warning("ragls mcp: %s; searching without dense vectors", exc)
        return None


class _ProgressLog:
    """Indexing progress on stderr (through logging), at most every few seconds and at the end."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._gate = ProgressGate(PROGRESS_LOG_SECONDS)

    def update(self, progress: Progress) -> None:
        """Each phase when it starts; within the walk and the reading, every few seconds and the last file."""
        if self._gate.admit(progress):
            log.info("ragls mcp: %s", progress.describe())


def _log_refresh(summary: RunSummary | None, error: Exception | None) -> None:
    if error is not None:
        log.warning("ragls mcp: refreshing changed files failed: %s", error)
    elif summary is not None and summary.committed:
        log.info("ragls mcp: refreshed changed files in %.2fs", summary.seconds)
