-- 2: raw per-sample outcomes and op rows; indexes for history and per-commit samples.
CREATE TABLE samples(
  case_result_id INTEGER NOT NULL REFERENCES case_results(id) ON DELETE CASCADE,
  sample_key TEXT NOT NULL,
  outcome TEXT NOT NULL,
  expected TEXT NOT NULL DEFAULT '',
  extracted TEXT NOT NULL DEFAULT '',
  latency_s REAL NOT NULL DEFAULT 0,
  tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(case_result_id, sample_key)
);
CREATE TABLE op_rows(
  case_result_id INTEGER NOT NULL REFERENCES case_results(id) ON DELETE CASCADE,
  op TEXT NOT NULL,
  input_shapes TEXT NOT NULL,
  calls INTEGER NOT NULL,
  est_seconds REAL NOT NULL
);
CREATE INDEX op_rows_by_case ON op_rows(case_result_id);
CREATE INDEX case_results_by_case ON case_results(case_id, run_id);
CREATE INDEX metrics_by_name ON metrics(name, case_result_id);
CREATE INDEX commits_by_ordinal ON commits(first_parent_ordinal);
