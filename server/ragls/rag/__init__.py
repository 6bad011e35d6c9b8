"""Retrieval: sessions, generations, index runs, freshness, fusion and prompts."""
