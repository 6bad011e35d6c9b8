"""RagService: one session's pipeline (index a folder, search it, build prompts, manage documents)."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragls.config import Settings
from ragls.errors import InvalidArgument, RaglsError
from ragls.index.bm25 import BM25Stream
from ragls.index.embedding import EmbeddingProvider
from ragls.index.knowledge_base import InMemoryKnowledgeBase
from ragls.index.tokenize import code_text, name_text, tokenizer_for
from ragls.index.vectors import VectorStream
from ragls.ingest.chunking import CHUNKER_VERSIONS
from ragls.ingest.documents import NEEDS_EXTRA, needs_extra_notice
from ragls.ingest.fingerprint import EXTRACTOR_VERSION
from ragls.model import Document, DocumentInfo, IndexStatus, Progress, SearchResult, Symbol
from ragls.rag.checks import (
    MAX_CONTENT_CHARS,
    MAX_QUERY_CHARS,
    MAX_SYMBOL_QUERY_CHARS,
    document_id_problem,
    object_problem,
    require,
    score_problem,
    shown,
    text_problem,
)
from ragls.rag.embedding_worker import CoverageCallback, EmbeddingWorker, embed_pending
from ragls.rag.excerpt import narrow_long_results
from ragls.rag.expansion import expansion_stage, fuse_rankings
from ragls.rag.generation import Delta, IndexState
from ragls.rag.indexer import Cancelled, Indexer, ProgressCallback, RunReport
from ragls.rag.memory import collector_paused, release_free_memory
from ragls.rag.persistence import Persistence
from ragls.rag.priors import path_prior
from ragls.rag.prompt import FORMATS, build_prompt
from ragls.rag.recency import Freshness
from ragls.rag.rerank import rerank_stage
from ragls.rag.retriever import HybridRetriever, WhenComplete, normalized_scores
from ragls.rag.snapshot import release_pages
from ragls.rag.store import IndexStore, StoredIndex, StoreError, store_path

if TYPE_CHECKING:
    from ragls.rag.shared.sync import SharedSync

MAX_TOP_K = 100
log = logging.getLogger(__name__)
PREVIEW_CHARS = 100
SNAPSHOT_AFTER_RUN_SECONDS = 2.0
# Every stream hands the fusion its top 100 whatever topK is (2 x topK past 50), so the top 3 of a search
# do not depend on how many results were asked for; the fusion adds normalized scores, not reciprocal ranks
# (measured: see `normalized_scores`).
FUSION_DEPTH = 100
# The names stream's contributions are squared before its weight: partial name matches count for less
# (measured on the NL and doc2code sets of every dev corpus: 1.5 and 3 both lower; docs/benchmarks.md).
NAMES_POWER = 2.0
SNAPSHOT_QUIET_SECONDS = 30.0


@dataclass
class RunSummary:
    """The outcome of one index run, for CLIs and progress reports."""

    report: RunReport
    seconds: float
    committed: bool


class RagService:
    """Indexing and clear are serialized by one lock; searches take no such lock."""

    def __init__(
        self,
        root: Path | None = None,
        settings: Settings | None = None,
        embedding: EmbeddingProvider | None = None,
        persist: bool = False,
        background_embedding: bool = True,
    ) -> None:
        """Without `background_embedding` no thread embeds new chunks: the caller does, with `embed_pending`."""
        self.settings = settings or Settings()
        self.root = root.resolve() if root else None
        self._persist = persist
        self.notices: list[str] = []
        self.state = new_state(self.settings, embedding)
        self._index_lock = threading.Lock()
        self._persistence = Persistence(self._open_store(self.root), self.state, self._index_lock, self._report)
        self.freshness = Freshness(self.settings.recency, self.settings.open_files_boost)
        self.retriever = _new_retriever(self.state, self.settings, self.freshness)
        self.expansion = expansion_stage(self.settings.query_expansion, self._report)
        self.reranking = rerank_stage(self.settings.reranker, self._report)
        self._embedder = (
            EmbeddingWorker(self.state.vectors, self._persistence.save_vectors)
            if self.state.vectors is not None and background_embedding
            else None
        )
        self._indexer: Indexer | None = None
        self._manual_ids: set[str] = set()
        self._state_name = "idle"
        self._error: str | None = None
        self._skipped: Counter[str] = Counter()
        self._told_needs_extra = False
        self._shared: SharedSync | None = None

    # ---------------------------------------------------------------- indexing

    def index_directory(
        self,
        path: Path | None = None,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        full: bool = False,
    ) -> RunSummary:
        """Walk and index a folder; a failure leaves the previous generation searchable and is re-raised.

        Returns once the new generation is also saved (the saving runs outside the index lock).
        """
        with self._index_lock, collector_paused():
            root = path or self.root
            if root is None:
                raise InvalidArgument("path", "no folder to index: pass a path")
            root = root.resolve()
            loaded_snapshot = False
            if self._indexer is None and root == self.root:
                self._indexer = Indexer(root, self.settings)
                loaded_snapshot = self._load_stored(progress)
                loaded_snapshot = self._load_shared(root, progress) or loaded_snapshot
                threading.Thread(target=self._prepare_symbols, name="ragls-symbols", daemon=True).start()
            elif self._indexer is None or root != self._indexer.root:
                self._start_over(root, forget_files=True)
            if full:
                self.clear_hashes()
            assert self._indexer is not None
            summary = self._run(
                lambda indexer: indexer.full_run(self.state, progress, cancel), full_walk=True, progress=progress
            )
            self.freshness.refresh(root, self.state.files)
            if loaded_snapshot:
                # Searchable since the load; forward postings mapped without room (an older snapshot's) now get it.
                self.state.ensure_room()
            saved = self._persistence.last_save
        if progress is not None and not self._persistence.wait(saved, timeout=0):
            progress(Progress(0, 0, "", "save"))
        self._persistence.wait(saved)
        return summary

    def embed_pending(self, progress: CoverageCallback | None = None) -> None:
        """Load the embedding provider and embed every chunk still without a vector, now, saving each batch.

        For a session without a background embedder (the CLI's); then dense search joins, once nothing is
        pending. Raises EmbeddingError when the provider fails.
        """
        if self.state.vectors is not None:
            embed_pending(self.state.vectors, self._persistence.save_vectors, progress)

    def mark_pending(self) -> None:
        """Say `indexing` before a scheduled first run starts, so status never looks idle and empty."""
        if self.state.generation == 0 and self._state_name == "idle":
            self._state_name = "indexing"

    def update_paths(self, rel_paths: list[str]) -> RunSummary | None:
        """Re-ingest changed paths (from file events) with fingerprint reuse; None before the first index."""
        with self._index_lock:
            if self._indexer is None:
                return None
            summary = self._run(lambda indexer: indexer.paths_run(self.state, rel_paths), full_walk=False)
            self.freshness.touched(self._indexer.root, rel_paths)
            return summary

    def wait_for_saves(self, timeout: float | None = None) -> bool:
        """Until every commit so far is in the store, so another process loads it (`ragls watch` reports a change
        once it is), and a store loaded behind a snapshot is checked; False on timeout."""
        return self._persistence.wait(timeout=timeout)

    def clear_hashes(self) -> None:
        """Forget fingerprints (and which files were skipped for their content) so the next run re-reads every file."""
        with self.state.lock.writing():
            files = self.state.files
            for path, file_record in files.items():
                files[path] = replace(file_record, fingerprint="", stat_key=None)
            self.state.skipped_files.clear()

    def _start_over(self, root: Path, forget_files: bool) -> None:
        self._persistence.finish()  # the saves queued for the old store go to the old store
        if self._shared is not None:  # the shared index was the old folder's
            self._shared.stop()
            self._shared = None
        if forget_files and self.state.files:
            every_file = list(self.state.files)
            ids = [i for record in self.state.files.values() for i in record.chunk_ids]
            self.state.commit(Delta(remove_ids=ids, removed_files=every_file), count_generation=False)
        self.root = root
        self._indexer = Indexer(root, self.settings)
        self._persistence.store = self._open_store(root)
        self.clear_hashes()

    def _run(self, stage: Any, full_walk: bool, progress: ProgressCallback | None = None) -> RunSummary:
        assert self._indexer is not None
        started = time.perf_counter()
        previous_state = "failed" if self._error else "idle"
        self._state_name = "indexing"
        try:
            change, report = stage(self._indexer)
            delta = change.delta
            committed = not delta.is_empty() or full_walk
            if committed:
                if progress is not None:
                    progress(Progress(0, report.files, "", "index"))
                self.state.commit(change)
        except Cancelled:
            self._state_name = previous_state
            raise
        except RaglsError as exc:
            self._state_name, self._error = "failed", str(exc)
            raise
        except Exception as exc:
            self._state_name, self._error = "failed", f"{type(exc).__name__}: {exc}"
            raise
        self._error = None
        for warning in report.ignore_warnings:
            self._report(warning)
        if report.skipped.get(NEEDS_EXTRA) and not self._told_needs_extra:
            self._told_needs_extra = True  # once per session: each run counts them in `skipped` anyway
            self._report(needs_extra_notice(report.skipped[NEEDS_EXTRA]))
        if full_walk:
            self._skipped = report.skipped
            if report.warning is not None:
                self._report(report.warning)
        self._state_name = "idle"  # searchable and complete; the saver writes it to disk next
        if not delta.is_empty():
            delay = SNAPSHOT_AFTER_RUN_SECONDS if full_walk else SNAPSHOT_QUIET_SECONDS
            self._persistence.queue(delta, self._manual_ids, delay)
        if full_walk:
            release_free_memory()
            self._persistence.snapshot_when_quiet(SNAPSHOT_AFTER_RUN_SECONDS)
        if self._shared is not None:
            self._shared.poke()
        return RunSummary(report, time.perf_counter() - started, committed)

    def _open_store(self, root: Path | None) -> IndexStore | None:
        """The folder's store, or None when the session does not persist; a large run's documents wait on disk
        beside it (`spill.py`), or in memory without it."""
        self.state.spill_directory = None
        if not self._persist or root is None:
            return None
        path = store_path(self.settings.cache_dir, root)
        self.state.spill_directory = path.parent
        return IndexStore(path, root, _store_recipe(self.settings))

    def _load_stored(self, progress: ProgressCallback | None = None) -> bool:
        """Make the stored generation searchable at once; the walk that follows re-reads only changes.

        True when the generation came from the snapshot; the store's pages behind it are checked on the saver's
        thread, while searches already run.
        """
        store = self._persistence.store
        if store is None:
            return False
        if progress is not None and store.path.exists():
            progress(Progress(0, 0, "", "load"))
        try:
            stored = self._read_stored(store)
        except StoreError as exc:
            self._report(str(exc))
            store.discard()
            return False
        finally:
            for notice in store.notices:
                self._report(notice)
            store.notices.clear()
        if stored is None:
            return False
        if stored.delta is not None:
            self.state.restore(stored.delta, stored.generation, stored.committed_at)
        self.state.skipped_files = dict(stored.skipped)
        self._manual_ids = set(stored.manual_ids)
        if stored.image is not None:
            self._persistence.check_soon(stored, SNAPSHOT_AFTER_RUN_SECONDS)
        return stored.image is not None

    def _read_stored(self, store: IndexStore) -> StoredIndex | None:
        """The stored generation with its vectors, a snapshot's installed; raises StoreError for a damaged store."""
        stored = store.load()
        if stored is not None and self.state.vectors is not None:
            self.state.vectors.cache.update(store.load_vectors(self.state.vectors.provider.model))
        if stored is not None and stored.image is not None:
            stored = self._install_snapshot(stored)
        return stored

    def _prepare_symbols(self) -> None:
        """Build the symbol index's joined columns beside the walk that follows a load."""
        with self.state.lock.reading():
            self.state.symbols.prepare()

    def _load_shared(self, root: Path, progress: ProgressCallback | None = None) -> bool:
        """With `sharedIndex`, install the published generation (a session that holds nothing yet) or commit the
        published rows this session lacks; the walk then keeps those that match. True where an image was
        installed, whose mapped forward postings get room after the walk."""
        if self.settings.shared_index is None:
            return False
        from ragls.rag.shared.reader import load_shared  # psycopg only where a shared index is set
        from ragls.rag.shared.sync import SharedSync

        def downloaded(done: int, total: int) -> None:
            if progress is not None:
                progress(Progress(done >> 20, total >> 20, "", "shared"))

        loaded = load_shared(root, self.settings, self.state, downloaded)
        self._shared = SharedSync(
            root,
            self.settings,
            self.state,
            loaded.source,
            self._report,
            self._persistence.save_vectors,
            loaded.unreachable,
        )
        for message in (loaded.warning, *loaded.notices):
            if message is not None:
                self._report(message)
        if loaded.vectors and self.state.vectors is not None:
            # In the cache before the commit, so the published chunks take their vectors instead of waiting for them.
            self.state.vectors.cache.update(loaded.vectors)
            self._persistence.save_vectors(list(loaded.vectors.items()))
        if loaded.image is not None:
            self.state.install(loaded.image, release_pages)  # searchable at once; complete after the walk
            self._persistence.queue(loaded.image.as_delta(), self._manual_ids, SNAPSHOT_QUIET_SECONDS)
            return True
        if loaded.delta is not None and not loaded.delta.is_empty():
            self.state.commit(loaded.delta, count_generation=False)  # searchable at once; complete after the walk
            self._persistence.queue(loaded.delta, self._manual_ids, SNAPSHOT_QUIET_SECONDS)
        return False

    def _install_snapshot(self, stored: StoredIndex) -> StoredIndex:
        """Install the snapshot's image; one that does not fit together is reported, removed, and the rows used."""
        store = self._persistence.store
        assert stored.image is not None and store is not None
        try:
            self.state.install(stored.image, release_pages)
            return stored
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            self.state.clear()
            self._report(f"the index snapshot {store.snapshot_path} is unusable ({exc}); using the store instead")
            store.discard_snapshot()
            return store.load() or stored

    def close(self) -> None:
        """Stop background work (the embedder, the shared index's refresh), finish saving, write the snapshot if
        needed, close the store."""
        if self._embedder is not None:
            self._embedder.stop()
        if self._shared is not None:
            self._shared.stop()
        with self._index_lock:
            self._persistence.closing = True  # commits from here on are not saved; searches no longer wait
        self._persistence.close()

    def _report(self, message: str) -> None:
        log.warning("%s", message)
        self.notices.append(message)

    def take_notices(self) -> list[str]:
        """Problems worth telling the user once (a corrupt store, a failed save), then forgotten."""
        notices, self.notices = self.notices, []
        return notices

    @property
    def chunk_calls(self) -> int:
        """How many files were chunked since this session started (unchanged files are not)."""
        return self._indexer.chunk_calls if self._indexer else 0

    # ---------------------------------------------------------------- reading

    def search(
        self, query: str, top_k: int = 10, filters: Mapping[str, Any] | None = None, min_score: float = 0.0
    ) -> list[SearchResult]:
        """The best chunks and documents for a query, fused over every stream; scores are relevance, 0..1
        (see `_new_retriever`), and results below `min_score` are left out."""
        require("query", text_problem(query, MAX_QUERY_CHARS))
        _check_top_k(top_k)
        require("filters", object_problem(filters))
        require("minScore", score_problem(min_score))
        self._persistence.last_search_at = time.monotonic()
        # Rewrites and reranking talk to models: neither holds the read side (a commit would wait on them).
        rewrites = self.expansion.rewrites(query) if self.expansion is not None else []
        depth = self.reranking.depth(top_k) if self.reranking is not None else top_k
        with self.state.lock.reading():
            rankings = [self.retriever.retrieve(text, depth, filters) for text in (query, *rewrites)]
        results = fuse_rankings(rankings, self.settings.max_chunks_per_file, depth) if rewrites else rankings[0]
        results = narrow_long_results(results, query, self.state.knowledge_base.tokenizer, self.settings.chunk_shape)
        if self.reranking is not None:
            results = self.reranking.rerank(query, results)
        if min_score > 0.0:
            results = [result for result in results if result.score >= min_score]
        return results[:top_k]

    def build_context_prompt(
        self, query: str, top_k: int = 5, prompt_format: str = "fenced", min_score: float = 0.0
    ) -> tuple[str, list[SearchResult]]:
        """The prompt for a question, with the results it was built from (those scoring `min_score` or more)."""
        if prompt_format not in FORMATS:
            raise InvalidArgument("format", f"format must be one of {', '.join(FORMATS)}, got {prompt_format!r}")
        results = self.search(query, top_k, min_score=min_score)
        return build_prompt(query, results, prompt_format), results

    def symbols(self, query: str, limit: int = 256) -> list[Symbol]:
        return [symbol for _, symbol in self.ranked_symbols(query, limit)]

    def ranked_symbols(self, query: str, limit: int = 256) -> list[tuple[tuple[int, int], Symbol]]:
        """Symbols with their sort keys, so callers can merge several sessions' answers."""
        require("query", text_problem(query, MAX_SYMBOL_QUERY_CHARS, allow_empty=True))
        self._persistence.last_search_at = time.monotonic()
        with self.state.lock.reading():
            return self.state.symbols.ranked(query, limit)

    def status(self) -> IndexStatus:
        state = self.state
        with state.lock.reading():
            vectors = None
            if state.vectors is not None:
                provider = state.vectors.provider
                embedded, total = state.vectors.coverage()
                vectors = {"model": provider.model, "dims": provider.dims, "embedded": embedded, "total": total}
                if self._embedder is not None and self._embedder.error:
                    vectors["error"] = self._embedder.error
            return IndexStatus(
                state=self._state_name,
                files=len(state.files),
                chunks=state.chunk_count(),
                documents=len(self._manual_ids),
                generation=state.generation,
                last_indexed_at=state.last_committed_at,
                indexed_path=str(self.root) if self.root else None,
                skipped=dict(self._skipped),
                error=self._error,
                vectors=vectors,
                shared=self._shared.source.status(state.files) if self._shared is not None else None,
            )

    @property
    def complete(self) -> bool:
        """False until the first index run has committed."""
        return self.state.generation >= 1

    # ---------------------------------------------------------------- documents

    def add_document(
        self, content: str, metadata: Mapping[str, Any] | None = None, document_id: str | None = None
    ) -> str:
        """Add a manual document, searchable with the indexed chunks; returns its id.

        Its id never holds `#`, so it can never replace (or later be replaced by) a file's chunk.
        """
        require("content", text_problem(content, MAX_CONTENT_CHARS))
        require("metadata", object_problem(metadata))
        if document_id is not None:
            require("id", document_id_problem(document_id))
        document = Document(document_id or str(uuid.uuid4()), content, {**(metadata or {}), "source": "manual"})
        with self._index_lock:
            delta = Delta(add=[document])
            self.state.commit(delta, count_generation=False)
            self._manual_ids.add(document.id)
            self._persistence.queue(delta, self._manual_ids, SNAPSHOT_QUIET_SECONDS)
            saved = self._persistence.last_save
        self._persistence.wait(saved)
        return document.id

    def get_document(self, document_id: str) -> Document | None:
        return self.state.knowledge_base.get_document(document_id)

    def remove_document(self, document_id: str) -> bool:
        with self._index_lock:
            if document_id not in self._manual_ids:
                return False
            delta = Delta(remove_ids=[document_id])
            self.state.commit(delta, count_generation=False)
            self._manual_ids.discard(document_id)
            self._persistence.queue(delta, self._manual_ids, SNAPSHOT_QUIET_SECONDS)
            saved = self._persistence.last_save
        self._persistence.wait(saved)
        return True

    def list_documents(self) -> list[DocumentInfo]:
        """Only manually added documents: id, a 100-character preview, length and metadata."""
        infos = []
        for document_id in sorted(self._manual_ids):
            document = self.get_document(document_id)
            if document is not None:
                infos.append(
                    DocumentInfo(
                        document.id, document.content[:PREVIEW_CHARS], len(document.content), dict(document.metadata)
                    )
                )
        return infos

    def clear(self) -> None:
        """Empty every store, the fingerprints and the status."""
        with self._index_lock:
            self._persistence.finish()
            self.state.clear()
            self._manual_ids.clear()
            if self._persistence.store is not None:
                self._persistence.store.discard()
            self._skipped = Counter()
            self._state_name, self._error = "idle", None
            if self._indexer is not None:
                self._indexer = Indexer(self._indexer.root, self.settings)


def _store_recipe(settings: Settings) -> str:
    """Everything that makes stored chunks and term counts reusable; a change rebuilds the store."""
    shape = settings.chunk_shape
    return f"{EXTRACTOR_VERSION}|{sorted(CHUNKER_VERSIONS.items())}|{shape}|{settings.tokenizer}"


def new_state(settings: Settings, embedding: EmbeddingProvider | None) -> IndexState:
    """An empty index with the streams the settings ask for: a session's, and the one a publish snapshots."""
    tokenizer = tokenizer_for(settings.tokenizer)
    weights = settings.weights
    knowledge_base = InMemoryKnowledgeBase(tokenizer)
    vocabulary = knowledge_base.vocabulary  # one table of terms for every stream
    names = (
        BM25Stream(tokenizer, text=name_text, name="names", compounds=True, vocabulary=vocabulary)
        if weights.names > 0
        else None
    )
    code = BM25Stream(tokenizer, text=code_text, name="code", vocabulary=vocabulary) if weights.code > 0 else None
    vectors = VectorStream(embedding, background=True) if embedding is not None else None
    return IndexState(knowledge_base, BM25Stream.over(knowledge_base), names, vectors, code)


def _new_retriever(state: IndexState, settings: Settings, freshness: Freshness) -> HybridRetriever:
    """BM25, BM25 over code alone, TF-IDF and symbol names fused by normalized scores; with an embedding provider,
    dense vectors join once every chunk has one.

    Scores are relevance: the fused score over the sum of the weights of the streams that answered (each
    stream's best counts 1), times the path prior and, where recency or the open-file boost is on, the
    freshness factor; every factor is at most 1, so a score is 0..1 on every folder and query.
    """
    weights = settings.weights
    builder = HybridRetriever.builder().stream(state.bm25, weights.bm25).stream(state.knowledge_base, weights.vector)
    if state.names is not None:
        builder.stream(state.names, weights.names, NAMES_POWER)
    if state.code is not None:
        builder.stream(state.code, weights.code)
    vectors = state.vectors
    if vectors is not None:
        builder.stream(WhenComplete(vectors, lambda: vectors.complete), weights.dense)
    builder.min_depth(FUSION_DEPTH).fusion(normalized_scores).relevance()
    prior = path_prior if not freshness.active else lambda file: path_prior(file) * freshness.factor(file)
    return builder.max_per_file(settings.max_chunks_per_file).prior(prior).build()


def _check_top_k(top_k: Any) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidArgument("topK", f"topK must be 1..{MAX_TOP_K}, got {shown(top_k)}")
