-- Stray file bytes are leased, not taken out of the table, while housekeeping removes them (issue 18):
-- a pass that dies between taking keys and removing their bytes leaves the keys due again when the
-- lease runs out, instead of forgetting them. A key once taken can no longer be claimed by an upload
-- (its bytes may be half gone).
ALTER TABLE file_store_cleanup ADD COLUMN taken_at timestamptz;

-- The dispatcher's claim reads webhook_deliveries_dispatch_idx (010); this one has had no reader since.
DROP INDEX IF EXISTS webhook_deliveries_due_idx;
