"""Errors that cross layers: each says what was wrong and how to fix it."""

from __future__ import annotations


class RaglsError(Exception):
    """Base of every error ragls raises on purpose."""


class ConfigError(RaglsError):
    """A configuration problem (an invalid ignore file, a bad setting) that rejects a run."""


class LimitExceeded(RaglsError):
    """A walk or ingestion limit was crossed; the message says what was found and names the knob that raises it.

    The knob is the setting (`ragls.limits.maxFiles`) unless a caller speaks in other terms: the CLI names
    its flag instead, through `with_knob`.
    """

    def __init__(self, limit: str, setting: str, value: int, observed: str, knob: str | None = None) -> None:
        self.limit = limit
        self.setting = setting
        self.value = value
        self.observed = observed
        self.knob = knob or f"the setting `{setting}`"
        super().__init__(
            f"{limit} limit of {value:,} exceeded ({observed}); "
            f"raise it with {self.knob}, or ignore more files in .gitignore/.tnsignore"
        )

    def with_knob(self, knob: str) -> LimitExceeded:
        """The same breach, telling the user to raise it with `knob` (e.g. `--limit maxDepth=N`)."""
        return LimitExceeded(self.limit, self.setting, self.value, self.observed, knob)


class InvalidArgument(RaglsError):
    """A caller passed a bad value; `field` names the parameter so the server can say which."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


class SourceError(RaglsError):
    """The folder to index is missing, not a directory or unreadable."""
