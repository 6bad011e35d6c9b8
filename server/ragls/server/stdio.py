"""LSP over stdio (and TCP), reading on the event loop itself.

pygls reads stdin through its thread pool, so every message costs three handoffs between a pool
thread and the event loop (the header, the blank line, the body). Reading the pipe with asyncio's
own transport saved 0.25-0.3 ms a request (flask through the server, 2 cores: client p50 1.8-2.0
-> 1.5-1.8 ms, where a search itself takes under 1 ms). Where stdin is not a pipe or a socket
(a terminal, a file), pygls's reader is used as before. Either way each body goes to
`RaglsProtocol.receive`, which answers what pygls's own loop would have dropped (see `envelope.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import stat
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO

from pygls.io_ import StdinAsyncReader, StdoutWriter

if TYPE_CHECKING:
    from ragls.server.app import RaglsServer

log = logging.getLogger(__name__)


# Header lines are a few dozen bytes; a longer line is garbage (a body without headers, or the rest of one whose
# Content-Length was too short). It is dropped as it streams by, never held whole.
MAX_LINE_BYTES = 64 * 1024
# What readline returns for a skipped line: neither a Content-Length header nor the blank line that ends headers.
SKIPPED_LINE = b"X-Ragls-Skipped: an over-long line\r\n"
# A header glued to the end of garbage (a body with no newline, then the next message) starts the next message.
_TRAILING_LENGTH = re.compile(rb"Content-Length: \d+\r\n\Z")
_TAIL_BYTES = 64
_CONTENT_LENGTH = re.compile(rb"Content-Length: (\d+)\r\n")


class PipeReader:
    """pygls's reader interface over an asyncio StreamReader; at end of input it returns what it has.

    Over-long lines are skipped rather than raised, which would end the server.
    """

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        try:
            line = await self.stream.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except asyncio.LimitOverrunError as exc:
            return await self._skip_long_line(exc.consumed)
        return _resynced(line)

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self.stream.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial

    async def _skip_long_line(self, consumed: int) -> bytes:
        """Drop the line up to its newline, keeping only its tail in case a header ends it."""
        tail = b""
        while True:
            tail = (tail + await self.stream.readexactly(consumed))[-_TAIL_BYTES:]
            try:
                line = await self.stream.readuntil(b"\n")
            except asyncio.IncompleteReadError:
                return SKIPPED_LINE  # end of input: the next read returns nothing and ends the server
            except asyncio.LimitOverrunError as exc:
                consumed = exc.consumed
                continue
            match = _TRAILING_LENGTH.search((tail + line)[-_TAIL_BYTES:])
            log.warning("skipped an input line over %d bytes", MAX_LINE_BYTES)
            return match.group(0) if match else SKIPPED_LINE


def _resynced(line: bytes) -> bytes:
    """A Content-Length header at the end of a garbage line, else the line itself."""
    if line.startswith(b"Content-Length: "):
        return line
    match = _TRAILING_LENGTH.search(line[-_TAIL_BYTES:])
    return match.group(0) if match else line


def serve_stdio(server: RaglsServer) -> None:
    """What pygls's `start_io` does, with the pipe read on the loop: run until `exit` or end of input."""
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(_read_messages(server, sys.stdin.buffer))
    except BrokenPipeError:
        log.error("the client closed the connection; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass  # `exit` ends the loop with SystemExit, as under start_io
    finally:
        server.shutdown()


def serve_tcp(server: RaglsServer, host: str, port: int) -> None:
    """pygls's `start_tcp` with this module's reader and checks: one client, then `exit` or its hang-up ends it.

    pygls's own TCP loop reads with asyncio's default line limit, so one over-long line ended the server.
    """
    listening: list[asyncio.Server] = []

    async def connection(stream: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)  # what pygls's start_tcp passes too
        try:
            await read_bodies(PipeReader(stream), server.protocol.receive)
        finally:
            for listener in listening:
                listener.close()

    async def main() -> None:
        listener = await asyncio.start_server(connection, host, port, limit=MAX_LINE_BYTES)
        listening.append(listener)
        log.info("serving on %s", ", ".join(str(sock.getsockname()) for sock in listener.sockets))
        with contextlib.suppress(asyncio.CancelledError):
            await listener.serve_forever()

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, SystemExit):
        pass  # `exit` ends the loop with SystemExit, as on stdio
    finally:
        server.shutdown()


async def _read_messages(server: RaglsServer, stdin: BinaryIO) -> None:
    reader: PipeReader | StdinAsyncReader
    if _is_pipe(stdin):
        stream = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
        reader = PipeReader(stream)
    else:
        reader = StdinAsyncReader(stdin, server.thread_pool)
    await read_bodies(reader, server.protocol.receive)


async def read_bodies(reader: PipeReader | StdinAsyncReader, receive: Callable[[bytes], None]) -> None:
    """pygls's framing (header lines up to a blank one, then Content-Length bytes) until input ends.

    A body that `receive` fails on is logged, and the next one is read: one message never ends the server.
    """
    content_length = 0
    while header := await reader.readline():
        if not content_length and (match := _CONTENT_LENGTH.fullmatch(header)):
            content_length = int(match.group(1))
        if content_length and not header.strip():
            body = await reader.readexactly(content_length)
            content_length = 0
            if not body:
                return
            try:
                receive(body)
            except Exception:
                log.exception("handling a message failed")


def _is_pipe(stream: BinaryIO) -> bool:
    """A pipe or socket: asyncio can read it without blocking, and no terminal is left in non-blocking mode."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        mode = os.fstat(stream.fileno()).st_mode
        return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
    return False
