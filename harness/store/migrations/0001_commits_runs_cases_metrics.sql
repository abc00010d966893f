-- 1: commits, runs, case results, metrics.
CREATE TABLE commits(
  id INTEGER PRIMARY KEY,
  sha TEXT NOT NULL UNIQUE,
  parents TEXT NOT NULL DEFAULT '',
  first_parent_ordinal INTEGER,
  author_time INTEGER,
  subject TEXT NOT NULL DEFAULT ''
);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  commit_id INTEGER NOT NULL REFERENCES commits(id),
  stack TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  config_json TEXT NOT NULL,
  host TEXT NOT NULL,
  harness_version TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL CHECK (status IN ('running','passed','failed','error')),
  shard TEXT NOT NULL DEFAULT '0/1'
);
CREATE INDEX runs_by_commit ON runs(commit_id, config_hash);
CREATE TABLE case_results(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  suite TEXT NOT NULL,
  case_id TEXT NOT NULL,
  params_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running','pass','fail','error','skip')),
  duration_s REAL,
  message TEXT NOT NULL DEFAULT '',
  UNIQUE(run_id, case_id)
);
CREATE TABLE metrics(
  case_result_id INTEGER NOT NULL REFERENCES case_results(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL NOT NULL,
  n INTEGER NOT NULL DEFAULT 0,
  low REAL,
  high REAL,
  PRIMARY KEY(case_result_id, name)
);
