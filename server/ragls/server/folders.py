"""Workspace folders as sessions: URIs on the wire, one RagService each, chosen by a request's `folder`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pygls.uris import to_fs_path

from ragls.config import Settings
from ragls.index.embedding import EmbeddingProvider
from ragls.rag.checks import shown
from ragls.rag.service import RagService
from ragls.rag.sessions import SessionManager
from ragls.server.protocol import invalid


@dataclass
class Folder:
    """One workspace folder: its URI as the client sent it, its path and its session."""

    uri: str
    root: Path
    service: RagService
    pending_paths: set[str] = field(default_factory=set)


def folder_key(uri: str) -> str:
    """A stable key for a folder URI, so `file:///a/` and `file:///a` are one folder."""
    return str(uri_path(uri))


def uri_path(uri: str) -> Path:
    path = to_fs_path(uri)
    if not path:
        raise invalid("folder", f"not a file URI: {shown(uri)}")
    return Path(path).resolve()


class Folders:
    """The open folders, in the order the client gave them; the first is where writes go by default."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.embedding: EmbeddingProvider | None = None
        self._sessions = SessionManager(
            lambda root: RagService(root, self.settings, embedding=self.embedding, persist=True)
        )
        self._folders: dict[str, Folder] = {}

    def add(self, uri: str) -> Folder:
        key = folder_key(uri)
        existing = self._folders.get(key)
        if existing is not None:
            return existing
        root = uri_path(uri)
        folder = Folder(uri, root, self._sessions.get_rag(key, root))
        self._folders[key] = folder
        return folder

    def remove(self, uri: str) -> Folder | None:
        key = folder_key(uri)
        folder = self._folders.pop(key, None)
        service = self._sessions.remove(key)
        if service is not None:
            service.close()
        return folder

    def replace_service(self, folder: Folder, service: RagService) -> None:
        """Swap a folder's session for one built with new settings; the files open in the editor stay open."""
        service.freshness.open_files = folder.service.freshness.open_files
        folder.service = service

    def all(self) -> list[Folder]:
        return list(self._folders.values())

    def select(self, folder_uri: str | None) -> list[Folder]:
        """The folder a request names (an unknown one is InvalidParams), or every folder."""
        if folder_uri is None:
            return self.all()
        folder = self._folders.get(folder_key(folder_uri))
        if folder is None:
            known = ", ".join(f.uri for f in self._folders.values()) or "none"
            raise invalid("folder", f"unknown workspace folder {shown(folder_uri)} (open folders: {known})")
        return [folder]

    def target(self, folder_uri: str | None) -> Folder:
        """The folder a write goes to: the one named, or the first."""
        selected = self.select(folder_uri)
        if not selected:
            raise invalid("folder", "no workspace folder is open; open a folder or pass `folder`")
        return selected[0]

    def owner_of(self, path: Path) -> tuple[Folder, str] | None:
        """The innermost folder containing a path, and the path relative to it."""
        best: tuple[Folder, str] | None = None
        for folder in self._folders.values():
            try:
                rel = path.relative_to(folder.root).as_posix()
            except ValueError:
                continue
            if best is None or len(folder.root.parts) > len(best[0].root.parts):
                best = (folder, rel)
        return best
