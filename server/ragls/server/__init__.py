"""The language server: the only layer that knows LSP, JSON and camelCase."""
