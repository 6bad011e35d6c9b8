"""An MCP server for AI agents over the same engine and live freshness as the language server."""
