"""JSON-RPC over LSP framing on a child process's stdio, with a reader thread that routes every message."""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ragls_client.errors import INTERNAL_ERROR, SERVER_EXITED, RaglsError

STDERR_LINES_KEPT = 200

RequestHandler = Callable[[str, Any], Any]
"""Answers a server-to-client request: (method, params) -> result, or raises RaglsError."""
NotificationHandler = Callable[[str, Any], None]


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    response: dict[str, Any] | None = None


class Transport:
    """Owns the server process; `request` blocks the calling thread until the answer (or a timeout)."""

    def __init__(
        self,
        command: Sequence[str],
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._on_request = on_request
        self._on_notification = on_notification
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._pending_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = threading.Event()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_LINES_KEPT)
        try:
            self.process = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=dict(env) if env is not None else None,
            )
        except OSError as exc:
            raise RaglsError(SERVER_EXITED, f"could not start the server {list(command)!r}: {exc}") from exc
        self._reader = threading.Thread(target=self._read_loop, name="ragls-client-reader", daemon=True)
        self._stderr_reader = threading.Thread(target=self._drain_stderr, name="ragls-client-stderr", daemon=True)
        self._reader.start()
        self._stderr_reader.start()

    @property
    def alive(self) -> bool:
        return not self._closed.is_set() and self.process.poll() is None

    def request(self, method: str, params: Any, timeout: float) -> Any:
        """Send a request and wait for its result; errors raise RaglsError, a timeout TimeoutError."""
        request_id = next(self._ids)
        pending = _Pending()
        with self._pending_lock:
            if self._closed.is_set():
                raise self._exited_error(method)
            self._pending[request_id] = pending
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if not pending.done.wait(timeout):
            with self._pending_lock:
                self._pending.pop(request_id, None)
            self.notify("$/cancelRequest", {"id": request_id})
            raise TimeoutError(f"ragls: no answer to {method} within {timeout:g}s")
        response = pending.response
        if response is None:
            raise self._exited_error(method)
        if "error" in response:
            error = response["error"] or {}
            raise RaglsError(int(error.get("code", 0)), str(error.get("message", "")), error.get("data"))
        return response.get("result")

    def notify(self, method: str, params: Any) -> None:
        if self.alive:
            self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def close(self, timeout: float) -> int | None:
        """Wait for the process to end (killing it after `timeout`); its exit status."""
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        self._reader.join(timeout)
        self._stderr_reader.join(timeout)
        self._fail_pending()
        return status

    # ---------------------------------------------------------------- internals

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        header = f"Content-Length: {len(body)}\r\n\r\n".encode("ascii")
        stdin = self.process.stdin
        assert stdin is not None
        with self._write_lock:
            try:
                stdin.write(header + body)
                stdin.flush()
            except (BrokenPipeError, OSError, ValueError) as exc:
                raise self._exited_error(str(message.get("method", "a response"))) from exc

    def _read_loop(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while (message := _read_message(stdout)) is not None:
                self._dispatch(message)
        finally:
            self._closed.set()
            self._fail_pending()

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            with self._pending_lock:
                pending = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if pending is not None:
                pending.response = message
                pending.done.set()
        elif "id" in message:
            self._answer(message["id"], method, message.get("params"))
        else:
            self._on_notification(method, message.get("params"))

    def _answer(self, request_id: Any, method: str, params: Any) -> None:
        """Every server request gets an answer, so the server never waits on us."""
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        try:
            reply["result"] = self._on_request(method, params)
        except RaglsError as exc:
            reply["error"] = {"code": exc.code, "message": exc.message}
        except Exception as exc:  # A bug in a handler must still answer the server.
            reply["error"] = {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}
        with contextlib.suppress(RaglsError):  # The server is gone; nobody is waiting for the answer.
            self._send(reply)

    def _drain_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        for raw_line in iter(stderr.readline, b""):
            self.stderr_tail.append(raw_line.decode("utf-8", "replace").rstrip("\n"))

    def _fail_pending(self) -> None:
        with self._pending_lock:
            waiting, self._pending = list(self._pending.values()), {}
        for pending in waiting:
            pending.done.set()

    def _exited_error(self, method: str) -> RaglsError:
        status = self.process.poll()
        tail = "\n".join(list(self.stderr_tail)[-20:])
        detail = f"; its stderr ends:\n{tail}" if tail else ""
        return RaglsError(SERVER_EXITED, f"the ragls server exited (status {status}) before answering {method}{detail}")


def _read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """One framed message, or None at end of stream."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        return None
    body = stream.read(length)
    if len(body) < length:
        return None
    message = json.loads(body.decode("utf-8"))
    return message if isinstance(message, dict) else None
