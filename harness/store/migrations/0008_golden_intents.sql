-- 8: golden changes under way. `golden accept` commits its intent here before it rewrites
-- the expectation file and moves it to golden_changes after, so a kill in between leaves
-- a row the next accept completes (the file was rewritten) or drops (it was not).
CREATE TABLE golden_intents(
  id INTEGER PRIMARY KEY,
  case_id TEXT NOT NULL,
  path TEXT NOT NULL,
  old_hash TEXT NOT NULL,
  new_hash TEXT NOT NULL,
  reason TEXT NOT NULL,
  sha TEXT NOT NULL,
  user TEXT NOT NULL,
  at TEXT NOT NULL,
  from_case_result_id INTEGER
);
