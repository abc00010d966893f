-- 5: the completion text of a sample (the report's per-question flips show it; bounded
-- by the writer, stored as sent) and the log of reviewed golden expectation changes.
ALTER TABLE samples ADD COLUMN completion TEXT NOT NULL DEFAULT '';
CREATE TABLE golden_changes(
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
CREATE INDEX golden_changes_by_case ON golden_changes(case_id, id);
