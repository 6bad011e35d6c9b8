"""`python -m ragls.mcp [PATH]`: the MCP server, also reachable without the `ragls mcp` subcommand."""

from __future__ import annotations

import sys
from pathlib import Path

from ragls.errors import RaglsError
from ragls.mcp.app import run_mcp


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        sys.stderr.write("usage: python -m ragls.mcp [PATH]  (serves MCP on stdio for PATH, default .)\n")
        return 2
    try:
        return run_mcp(Path(args[0] if args else "."))
    except RaglsError as exc:
        sys.stderr.write(f"ragls mcp: error: {exc}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
