-- 11: partial runs (`harness run --questions FILE`, a bisect step's few questions): how
-- many questions such a run evaluated; NULL for a whole run. A partial run is evidence
-- for bisect only, so the baseline, rerun, history and report queries leave it out.
ALTER TABLE runs ADD COLUMN partial_questions INTEGER CHECK (partial_questions IS NULL OR partial_questions > 0);
