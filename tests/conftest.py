"""Every test keeps its caches in a throwaway folder, never in the user's real ~/.cache.

Set at import, before any test module loads ragls, so in-process sessions (whose default cache is
platformdirs' user cache, which follows XDG_CACHE_HOME) and every server a test starts inherit it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

TEST_CACHE_HOME = tempfile.mkdtemp(prefix="ragls-tests-cache-")
os.environ["XDG_CACHE_HOME"] = TEST_CACHE_HOME
atexit.register(shutil.rmtree, TEST_CACHE_HOME, ignore_errors=True)
