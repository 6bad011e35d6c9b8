"""SessionManager: one RagService per workspace folder, created on first use, freed when it goes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from ragls.rag.service import RagService


class SessionManager:
    """Sessions keyed by a folder id (a URI on the wire); insertion order is kept, first is the default."""

    def __init__(self, factory: Callable[[Path], RagService]) -> None:
        self._factory = factory
        self._sessions: dict[str, RagService] = {}
        self._lock = threading.Lock()

    def get_rag(self, key: str, root: Path) -> RagService:
        with self._lock:
            service = self._sessions.get(key)
            if service is None:
                service = self._sessions[key] = self._factory(root)
            return service

    def get(self, key: str) -> RagService | None:
        return self._sessions.get(key)

    def remove(self, key: str) -> RagService | None:
        """Forget a session and free its index."""
        with self._lock:
            service = self._sessions.pop(key, None)
        if service is not None:
            service.clear()
        return service

    def items(self) -> list[tuple[str, RagService]]:
        with self._lock:
            return list(self._sessions.items())
