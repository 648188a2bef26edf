-- An entity's history and trace (issue 21) find its verifications by entity: a batch's rows and the
-- sync requests that named it, and its universal KYC submissions. Without these, each read of one
-- entity's history would scan every row ever imported.
CREATE INDEX import_records_entity_idx ON import_records (entity_id) WHERE entity_id IS NOT NULL;
CREATE INDEX sync_imports_entity_idx ON sync_imports (entity_id) WHERE entity_id IS NOT NULL;
CREATE INDEX ukyc_submissions_entity_idx ON ukyc_submissions (entity_id, created_at);
