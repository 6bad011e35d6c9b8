"""Ingestion: which files a folder holds (the walk), and what chunks each file becomes."""
