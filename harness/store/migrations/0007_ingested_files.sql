-- 7: which files `harness ingest` imported, so the same file for the same commit in the
-- same format is imported once (the run it became is kept beside it).
CREATE TABLE ingested_files(
  id INTEGER PRIMARY KEY,
  content_hash TEXT NOT NULL,
  format TEXT NOT NULL,
  commit_id INTEGER NOT NULL REFERENCES commits(id),
  path TEXT NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  at TEXT NOT NULL,
  UNIQUE(content_hash, format, commit_id)
);
