-- 3: one status vocabulary (runs said passed/failed, cases pass/fail), and verdict
-- metrics carry their word beside the code. SQLite cannot change a CHECK constraint,
-- so runs is rebuilt (foreign keys are off while migrations run).
CREATE TABLE runs_v3(
  id INTEGER PRIMARY KEY,
  commit_id INTEGER NOT NULL REFERENCES commits(id),
  stack TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  config_json TEXT NOT NULL,
  host TEXT NOT NULL,
  harness_version TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL CHECK (status IN ('running','pass','fail','error')),
  shard TEXT NOT NULL DEFAULT '0/1'
);
INSERT INTO runs_v3(id, commit_id, stack, config_hash, config_json, host, harness_version, started_at, finished_at,
                    status, shard)
SELECT id, commit_id, stack, config_hash, config_json, host, harness_version, started_at, finished_at,
       CASE status WHEN 'passed' THEN 'pass' WHEN 'failed' THEN 'fail' ELSE status END, shard
FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v3 RENAME TO runs;
CREATE INDEX runs_by_commit ON runs(commit_id, config_hash);
ALTER TABLE metrics ADD COLUMN label TEXT NOT NULL DEFAULT '';
UPDATE metrics SET label = CASE CAST(value AS INTEGER) WHEN 0 THEN 'PASS' WHEN 1 THEN 'AT-RISK' ELSE 'FAIL' END
WHERE name = 'gate_verdict';
UPDATE metrics SET label = CASE CAST(value AS INTEGER) WHEN 0 THEN 'SAME' WHEN 1 THEN 'IMPROVED' ELSE 'REGRESSED' END
WHERE name = 'baseline_verdict';
