-- The audit chain is linked after commit (issue 21, item 6). An entry is still written in the
-- transaction of the change it records, so no change commits without its entry; but it is written
-- here, unlinked, and a chainer (store/audit-chainer.ts) moves the business's committed entries
-- into audit_log, chained in the order it finds them, moments later, holding the chain's head only
-- for that. Holding the head until each business transaction's commit had serialized every commit
-- of a business. audit_log stays as it was: append-only, every entry written once, linked.

-- An entry's columns are audit_log's (LIKE: one definition), less the three that linking adds,
-- and the order entries were written in: a transaction's entries in the order it recorded them.
CREATE TABLE audit_pending (
  written bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  LIKE audit_log INCLUDING DEFAULTS
);
ALTER TABLE audit_pending DROP COLUMN seq, DROP COLUMN prev_hash, DROP COLUMN hash, ADD UNIQUE (id);
CREATE INDEX audit_pending_business ON audit_pending (business_id, written);

-- A waiting entry is as fixed as a linked one: never changed, and removed only once it is in
-- audit_log (by its id), which is what linking does.
CREATE TRIGGER audit_pending_unchanged BEFORE UPDATE OR TRUNCATE ON audit_pending
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
CREATE FUNCTION audit_pending_removed_once_linked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM audit_log WHERE id = OLD.id) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_log is append-only: an entry waiting to be linked leaves audit_pending only into audit_log'
    USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_pending_removed_once_linked BEFORE DELETE ON audit_pending
  FOR EACH ROW EXECUTE FUNCTION audit_pending_removed_once_linked();
