-- A batch file's columns that were ignored (unknown, or a repeat of a known one), kept so that a
-- retried upload whose answer was lost is answered with them too (issue 19).
ALTER TABLE import_batches ADD COLUMN ignored_columns text[] NOT NULL DEFAULT '{}';
