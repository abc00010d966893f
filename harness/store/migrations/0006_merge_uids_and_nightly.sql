-- 6: what `harness merge` needs. Every run and bisect session gets a random uid, so a
-- merge recognizes a run it already holds (the same input twice adds nothing); a run's
-- nightly id groups the shards of one sharded nightly into one logical run.
ALTER TABLE runs ADD COLUMN uid TEXT;
UPDATE runs SET uid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX runs_by_uid ON runs(uid);
ALTER TABLE runs ADD COLUMN nightly TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_nightly ON runs(nightly, commit_id, config_hash);
ALTER TABLE bisect_sessions ADD COLUMN uid TEXT;
UPDATE bisect_sessions SET uid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX bisect_sessions_by_uid ON bisect_sessions(uid);
