-- 10: what `harness bisect --auto` found in a nightly: each regression against the
-- previous nightly (its cases, how they regressed), whether a rerun of the bad commit
-- confirmed it, and the bisect session that looked for its culprit.
CREATE TABLE regressions(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  baseline_run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  suite TEXT NOT NULL,
  kind TEXT NOT NULL,
  cases_json TEXT NOT NULL,
  confirmation TEXT NOT NULL CHECK (confirmation IN ('confirmed', 'not-confirmed', 'not-tried')),
  confirm_json TEXT NOT NULL,
  session_id INTEGER REFERENCES bisect_sessions(id) ON DELETE SET NULL,
  at TEXT NOT NULL
);
CREATE INDEX regressions_by_run ON regressions(run_id);
