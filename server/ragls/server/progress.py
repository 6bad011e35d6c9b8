"""Work-done progress for index runs, sent only to clients that support it, at most every 100 ms."""

from __future__ import annotations

import asyncio
import uuid

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ragls.model import Progress, ProgressGate

REPORT_INTERVAL_SECONDS = 0.1


class IndexProgress:
    """One `$/progress` token for one index run; callbacks may come from any thread."""

    def __init__(self, server: LanguageServer, loop: asyncio.AbstractEventLoop, title: str) -> None:
        self.server = server
        self.loop = loop
        self.title = title
        self.token = f"ragls-index-{uuid.uuid4()}"
        self.enabled = False
        self._gate = ProgressGate(REPORT_INTERVAL_SECONDS)

    async def begin(self) -> None:
        capabilities = self.server.client_capabilities
        if not (capabilities.window and capabilities.window.work_done_progress):
            return
        try:
            await self.server.work_done_progress.create_async(self.token)
        except Exception:  # A client that refuses the token gets no progress, not an error.
            return
        self.enabled = True
        self.server.work_done_progress.begin(
            self.token, types.WorkDoneProgressBegin(title=self.title, percentage=0, cancellable=False)
        )

    def report(self, progress: Progress) -> None:
        """Called from the indexing thread in every phase: each new phase is reported at once, and within one
        at most every 100 ms. Only `read` has a percentage; the other phases keep the last one."""
        if not self.enabled or getattr(self.server, "shutting_down", False) or not self._gate.admit(progress):
            return
        percentage = 100 * progress.indexed_files // max(progress.total_files, 1) if progress.phase == "read" else None
        self.loop.call_soon_threadsafe(
            self.server.work_done_progress.report,
            self.token,
            types.WorkDoneProgressReport(message=progress.describe(), percentage=percentage),
        )

    def end(self, message: str) -> None:
        if self.enabled and not getattr(self.server, "shutting_down", False):
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.enabled = False
