"""What a person sees on a terminal: the progress bar is redrawn in place, and what follows it starts a line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.terminal import ragls_on_terminal
from tests.cli.test_cli import CACHE_HOME

pytestmark = pytest.mark.timeout(120)
ENV = {**os.environ, "XDG_CACHE_HOME": CACHE_HOME, "RAGLS_EMBEDDING": "none"}


def test_the_bar_is_drawn_in_place_and_its_line_ended(project: Path) -> None:
    done = ragls_on_terminal("index", str(project), "--no-cache", env=ENV)
    assert done.returncode == 0, done.terminal
    assert done.terminal.startswith("\rwalking the folder: ")
    assert "] 4/4 " in done.terminal and done.terminal.endswith("\r\n")
    # The phases after the reading have their words where the bar was.
    assert done.terminal.index("\rbuilding the search index of 4 files") > done.terminal.index("] 4/4 ")
    assert "files 3, chunks 4" in done.stdout
    again = ragls_on_terminal("index", str(project), env=ENV)
    assert "\rsaving the index" in again.terminal, again.terminal
    warm = ragls_on_terminal("index", str(project), env=ENV)
    assert warm.terminal.startswith("\rloading the stored index"), warm.terminal


def test_an_error_after_the_bar_starts_a_line_of_its_own(project: Path) -> None:
    # The decoded-bytes limit is crossed by the third file, after the bar has drawn the first ones.
    done = ragls_on_terminal("index", str(project), "--no-cache", "--limit", "maxDecodedBytes=100", env=ENV)
    assert done.returncode == 1
    bar, error = done.terminal.split("ragls: error: ", 1)
    assert bar.startswith("\rwalking the folder: ") and "\r[" in bar and "/4 " in bar, done.terminal
    assert bar.endswith("\r\n"), repr(done.terminal)  # the bar's line was ended before the error
    assert error.startswith("maxDecodedBytes limit of 100 exceeded")


def test_quiet_draws_nothing(project: Path) -> None:
    done = ragls_on_terminal("search", str(project), "token", "-q", "--no-cache", env=ENV)
    assert done.returncode == 0 and done.terminal == "", repr(done.terminal)
