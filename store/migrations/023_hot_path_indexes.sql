-- Indexes the decision path was missing (issue 22, measured on a 5,000-record batch):
-- - A universal KYC submission counts its identity documents (files by submission and slug) on every
--   look at it: its readiness, its settling, and each record of a requirement batch that decides it.
--   Without an index each count scanned every file ever uploaded (1 ms at 4,000 files, growing with
--   them: the batch spent more time there than anywhere else), and deleting a submission (ON DELETE
--   SET NULL) scanned them too.
-- - A verification's stage is recorded once (store/lifecycle-events.ts stageRecorded): the check
--   looks for the entry among those not yet linked into the chain too, which it found by scanning
--   every one of the business's (thousands while a batch decides its people).
CREATE INDEX files_submission_idx ON files (submission_id, slug) WHERE submission_id IS NOT NULL;
CREATE INDEX audit_pending_subject ON audit_pending (subject_id);
