"""ragls: a language server that gives every editor workspace its own retrieval index."""

__version__ = "0.1.0"
