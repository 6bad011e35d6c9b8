"""Errors that cross layers: each says what was wrong and how to fix it."""

from __future__ import annotations


class RaglsError(Exception):
    """Base of every error ragls raises on purpose."""


class ConfigError(RaglsError):
    """A configuration problem (an invalid ignore file, a bad setting) that rejects a run."""


class LimitExceeded(RaglsError):
    """A walk or ingestion limit was crossed; the message names the limit and the setting that raises it."""

    def __init__(self, limit: str, setting: str, value: int, observed: str) -> None:
        self.limit = limit
        self.setting = setting
        self.value = value
        super().__init__(
            f"{limit} limit of {value:,} exceeded ({observed}); "
            f"raise it with the setting `{setting}` or ignore more files in .gitignore/.tnsignore"
        )


class InvalidArgument(RaglsError):
    """A caller passed a bad value; `field` names the parameter so the server can say which."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


class SourceError(RaglsError):
    """The folder to index is missing, not a directory or unreadable."""
