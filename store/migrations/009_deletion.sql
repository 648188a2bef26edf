-- What is deleted is gone (issue 18).

-- The person data behind a KYC account belongs to the entity: deleting the entity deletes it.
-- Rows are attached through the account (or the import that read the applicant); a row that no
-- entity claims belongs to a person already deleted, the defect this migration closes, and goes.
ALTER TABLE kyc_persons ADD COLUMN entity_id uuid REFERENCES entities(id) ON DELETE CASCADE;
UPDATE kyc_persons p SET entity_id = k.entity_id FROM kyc_accounts k WHERE k.provider = p.provider AND k.applicant_id = p.applicant_id;
UPDATE kyc_persons p SET entity_id = r.entity_id FROM import_records r
 WHERE p.entity_id IS NULL AND r.applicant_id = p.applicant_id AND EXISTS (SELECT 1 FROM entities e WHERE e.id = r.entity_id);
UPDATE kyc_persons p SET entity_id = s.entity_id FROM sync_imports s
 WHERE p.entity_id IS NULL AND s.applicant_id = p.applicant_id AND EXISTS (SELECT 1 FROM entities e WHERE e.id = s.entity_id);
DELETE FROM kyc_persons WHERE entity_id IS NULL;
ALTER TABLE kyc_persons ALTER COLUMN entity_id SET NOT NULL;
CREATE INDEX kyc_persons_entity_idx ON kyc_persons (entity_id);

-- Bytes in the file store that must go unless a `files` row names them by then (store/files.ts):
-- entered before an upload's bytes are written (due an hour later; the upload's transaction takes
-- them out) and by an entity's deletion (due at once). Housekeeping removes what is due.
CREATE TABLE file_store_cleanup (
  storage_key text PRIMARY KEY,
  not_before  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX file_store_cleanup_due_idx ON file_store_cleanup (not_before);

-- Files are found by their store key when a download link is used.
CREATE INDEX files_storage_key_idx ON files (storage_key);
