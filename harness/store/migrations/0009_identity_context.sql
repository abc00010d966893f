-- 9: a run's identity split in two (store/identity_rule.h): config_json and config_hash
-- keep what was measured, context_json where and how it ran (endpoint URL, exec cwd,
-- env and timeout, fault switches). Stored identities of format 1 are re-keyed with the
-- same rule as new runs, by the SQL functions RegisterIdentityFunctions adds.
ALTER TABLE runs ADD COLUMN context_json TEXT NOT NULL DEFAULT '{}';
UPDATE runs SET config_hash = harness_rekeyed_hash(config_json, config_hash),
                context_json = harness_rekeyed_context(config_json),
                config_json = harness_rekeyed_measured(config_json);
