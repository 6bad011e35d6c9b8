"""In-memory indexes: BM25, TF-IDF knowledge base, vectors and symbols (numpy; no file I/O)."""
