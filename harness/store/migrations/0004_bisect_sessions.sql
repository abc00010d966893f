-- 4: bisect sessions and their steps (the replayable log of `harness bisect`), and an
-- index so `history --suite` finds a suite's results without scanning every case result.
CREATE TABLE bisect_sessions(
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  good TEXT NOT NULL,
  bad TEXT NOT NULL,
  target TEXT NOT NULL,
  args_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'culprit', 'no-culprit', 'ambiguous', 'error')),
  culprit TEXT,
  confidence REAL,
  runs INTEGER NOT NULL DEFAULT 0,
  result_json TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE bisect_steps(
  session_id INTEGER NOT NULL REFERENCES bisect_sessions(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  sha TEXT NOT NULL,
  source TEXT NOT NULL,
  run_id INTEGER,
  exit_code INTEGER,
  evidence_json TEXT NOT NULL,
  decision_json TEXT NOT NULL,
  PRIMARY KEY(session_id, step)
);
CREATE INDEX bisect_sessions_by_culprit ON bisect_sessions(culprit);
CREATE INDEX case_results_by_suite ON case_results(suite, run_id);
