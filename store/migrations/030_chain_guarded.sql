-- The chain grows only by linking (issue 37). The service's role may insert into audit_log, remove
-- from audit_pending and move audit_heads — that is how the chainer links (store/audit-chainer.ts) —
-- so these rules hold every writer to what linking does, whatever it sends:
-- * an entry enters audit_log only as it waits in audit_pending (every column as written), at the
--   next seq of its business, naming the hash of the entry before it;
-- * an entry leaves audit_pending only once audit_log holds it as written;
-- * a head moves forward only, to an entry of the chain.
-- Whoever may switch triggers off (the tables' owner, a superuser) is not held by them: signed
-- checkpoints are (migration 029).
CREATE FUNCTION audit_entry_as_written(a audit_pending, b audit_log) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT a.id = b.id AND a.business_id = b.business_id AND a.occurred_at = b.occurred_at AND a.actor_type = b.actor_type
     AND a.actor_id = b.actor_id AND a.run_id IS NOT DISTINCT FROM b.run_id AND a.request_id IS NOT DISTINCT FROM b.request_id
     AND a.action = b.action AND a.entity_id IS NOT DISTINCT FROM b.entity_id AND a.subject_type IS NOT DISTINCT FROM b.subject_type
     AND a.subject_id IS NOT DISTINCT FROM b.subject_id AND a.details = b.details AND a.outcome = b.outcome
$$;

-- Checked once per statement (the linker moves a few hundred entries at a time), on the statement's
-- rows (transition tables), not row by row.
DROP TRIGGER audit_pending_removed_once_linked ON audit_pending;
DROP FUNCTION audit_pending_removed_once_linked();
CREATE FUNCTION audit_pending_left_into_the_chain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM removed o WHERE NOT EXISTS (SELECT 1 FROM audit_log l WHERE l.id = o.id AND audit_entry_as_written(o, l))) THEN
    RAISE EXCEPTION 'audit_log is append-only: an entry waiting to be linked leaves audit_pending only into audit_log, as written'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER audit_pending_left_into_the_chain AFTER DELETE ON audit_pending REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION audit_pending_left_into_the_chain();

CREATE FUNCTION audit_log_linked_in_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM linked n WHERE NOT EXISTS (SELECT 1 FROM audit_pending p WHERE p.id = n.id AND audit_entry_as_written(p, n))) THEN
    RAISE EXCEPTION 'audit_log is append-only: only an entry waiting in audit_pending is linked, as written'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  -- each business's new entries follow on from the entry before the first of them, each naming the hash before it
  IF EXISTS (
    SELECT 1 FROM (
      SELECT n.business_id, n.seq, n.prev_hash, row_number() OVER w AS rn, lag(n.seq) OVER w AS seq_before, lag(n.hash) OVER w AS hash_before
        FROM linked n WINDOW w AS (PARTITION BY n.business_id ORDER BY n.seq)
    ) x
    LEFT JOIN LATERAL (SELECT l.seq, l.hash FROM audit_log l WHERE l.business_id = x.business_id AND l.seq < x.seq ORDER BY l.seq DESC LIMIT 1) b
      ON x.rn = 1
    WHERE CASE WHEN x.rn = 1 THEN x.seq <> COALESCE(b.seq, 0) + 1 OR x.prev_hash <> COALESCE(b.hash, repeat('0', 64))
               ELSE x.seq <> x.seq_before + 1 OR x.prev_hash <> x.hash_before END
  ) THEN
    RAISE EXCEPTION 'audit_log is append-only: an entry is linked at its business''s next seq, after the last entry''s hash'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER audit_log_linked_in_order AFTER INSERT ON audit_log REFERENCING NEW TABLE AS linked
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_linked_in_order();

CREATE FUNCTION audit_head_moves_forward() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND (NEW.business_id <> OLD.business_id OR NEW.seq < OLD.seq) THEN
    RAISE EXCEPTION 'a chain''s head moves forward only' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF NOT ((NEW.seq = 0 AND NEW.hash = repeat('0', 64))
          OR EXISTS (SELECT 1 FROM audit_log WHERE business_id = NEW.business_id AND seq = NEW.seq AND hash = NEW.hash)) THEN
    RAISE EXCEPTION 'a chain''s head names an entry of its chain' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER audit_head_moves_forward BEFORE INSERT OR UPDATE ON audit_heads FOR EACH ROW EXECUTE FUNCTION audit_head_moves_forward();
CREATE TRIGGER audit_heads_kept BEFORE DELETE OR TRUNCATE ON audit_heads FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
