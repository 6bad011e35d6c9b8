"""A team index on PostgreSQL: `publish` writes a commit's index, `reader` overlays it on a session's own."""
