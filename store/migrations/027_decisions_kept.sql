-- Every decision kept (issue 37). A KYC account held only its latest decision, and the person data
-- behind it only the latest read: a person reviewed RED, then GREEN, kept no trace of the RED one
-- but its audit entry, whose digest could never be checked again. Now:
--
-- * record_decisions holds every decision, KYC and KYB, appended and never changed: its outcome and
--   rule labels, the rule set that made it (`rules`), what it rested on (`basis`: ids and digests —
--   the person data's version, or a KYB decision's owners' decisions, profile and documents), its
--   nonce and the event that carried it. A row leaves only with its entity's record (cascade).
-- * record_kyc_persons keeps every version of a person's data as read (a read that changes nothing
--   adds none), each with its digest; `kyc_persons` shows the current one. A KYB profile keeps every
--   version as saved (record_kyb_profile_versions).
-- * `kyc_accounts` is now a view: the account (which provider applicant, from where) with its current
--   decision, the last appended. Readers are unchanged; the one writer appends (store/decisions.ts).
-- The views keep the sealed rule of migration 026.

CREATE TABLE record_decisions (
  seq                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id                 uuid        NOT NULL UNIQUE,
  business_id        uuid        NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  entity_id          uuid        NOT NULL REFERENCES entity_records(id) ON DELETE CASCADE,
  kind               text        NOT NULL CHECK (kind IN ('kyc', 'kyb')),
  path               text        NOT NULL,
  source             text        NOT NULL,
  source_ref         text        NOT NULL,
  kyc_account_id     uuid        REFERENCES record_kyc_accounts(id) ON DELETE CASCADE,
  submission_id      uuid,
  status             text        NOT NULL CHECK (status IN ('APPROVED', 'REJECTED')),
  reject_labels      jsonb       NOT NULL DEFAULT '[]',
  review_reject_type text,
  moderation_comment text,
  owners             jsonb,
  rules              text        NOT NULL,
  basis              jsonb       NOT NULL,
  nonce              text,
  event_id           uuid,
  decided_at         timestamptz NOT NULL DEFAULT now()
);
-- a decision made since this migration has its nonce: a decision inserted without one would escape the evidence check
ALTER TABLE record_decisions ADD CONSTRAINT record_decisions_nonce CHECK (rules = 'unrecorded' OR nonce IS NOT NULL);
CREATE INDEX record_decisions_entity ON record_decisions (entity_id, seq);
CREATE INDEX record_decisions_account ON record_decisions (kyc_account_id, seq) WHERE kyc_account_id IS NOT NULL;

-- Appended, never changed; removed only with the entity's record (a delete or a purge: by then the
-- record's row is gone, and the cascade takes its decisions).
CREATE FUNCTION decisions_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM entity_records WHERE id = OLD.entity_id) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'a decision is kept: never changed, and removed only with its entity''s record' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER decisions_kept BEFORE UPDATE OR DELETE ON record_decisions FOR EACH ROW EXECUTE FUNCTION decisions_kept();
CREATE TRIGGER decisions_kept_whole BEFORE TRUNCATE ON record_decisions FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- What was there: each account's latest decision, and each decided KYB submission. Their rule set
-- and basis were not recorded then.
INSERT INTO record_decisions (id, business_id, entity_id, kind, path, source, source_ref, kyc_account_id, status, reject_labels,
                              review_reject_type, moderation_comment, rules, basis, nonce, event_id, decided_at)
SELECT gen_random_uuid(), e.business_id, k.entity_id, 'kyc', CASE WHEN k.source IN ('batch', 'sync') THEN 'token-sharing' ELSE k.source END,
       k.source, k.source_ref, k.id, k.decision, k.reject_labels, k.review_reject_type, k.moderation_comment, 'unrecorded', '{}'::jsonb,
       k.decision_nonce,
       (SELECT v.id FROM events v WHERE v.entity_id = k.entity_id AND v.event_type = 'account_status_change' AND v.created_at = k.decided_at LIMIT 1),
       k.decided_at
  FROM record_kyc_accounts k JOIN entity_records e ON e.id = k.entity_id
 ORDER BY k.decided_at, k.id;
INSERT INTO record_decisions (id, business_id, entity_id, kind, path, source, source_ref, submission_id, status, reject_labels,
                              review_reject_type, moderation_comment, owners, rules, basis, nonce, event_id, decided_at)
SELECT gen_random_uuid(), s.business_id, s.entity_id, 'kyb', 'universal-kyb', 'universal-kyb', s.id::text, s.id, s.decision,
       COALESCE(v.payload->'data'->'rejectLabels', '[]'::jsonb), v.payload->'data'->>'reviewRejectType', v.payload->'data'->>'moderationComment',
       v.payload->'data'->'ubos', 'unrecorded', '{}'::jsonb, s.decision_nonce, s.event_id, COALESCE(s.settled_at, s.created_at)
  FROM record_kyb_submissions s LEFT JOIN events v ON v.id = s.event_id
 WHERE s.decision IS NOT NULL
 ORDER BY s.settled_at, s.id;

-- The account keeps who and where from; its decisions are appended above.
DROP VIEW kyc_accounts;
ALTER TABLE record_kyc_accounts DROP COLUMN decision, DROP COLUMN reject_labels, DROP COLUMN review_reject_type,
  DROP COLUMN moderation_comment, DROP COLUMN decision_nonce, DROP COLUMN decided_at;
DO $$ BEGIN
  EXECUTE format($v$CREATE VIEW kyc_accounts AS
    SELECT a.*, d.id AS decision_id, d.status AS decision, d.reject_labels, d.review_reject_type, d.moderation_comment,
           d.nonce AS decision_nonce, d.decided_at
      FROM record_kyc_accounts a
      JOIN LATERAL (SELECT * FROM record_decisions x WHERE x.kyc_account_id = a.id AND x.entity_id = a.entity_id ORDER BY x.seq DESC LIMIT 1) d ON true
     WHERE %s$v$, visible_entity('a.entity_id'));
END $$;

-- Person data: every version kept, the current one shown.
DROP VIEW kyc_persons;
ALTER TABLE record_kyc_persons DROP CONSTRAINT kyc_persons_pkey;
ALTER TABLE record_kyc_persons ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
  ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY,
  -- the SHA-256 of the data's RFC 8785 JSON, made when it is kept (null for versions kept before this)
  ADD COLUMN data_sha256 text;
CREATE INDEX record_kyc_persons_current ON record_kyc_persons (entity_id, provider, applicant_id, seq DESC);
CREATE INDEX record_kyc_persons_applicant ON record_kyc_persons (provider, applicant_id);
DO $$ BEGIN
  EXECUTE format($v$CREATE VIEW kyc_persons AS
    SELECT * FROM record_kyc_persons r
     WHERE %s
       AND NOT EXISTS (SELECT 1 FROM record_kyc_persons n
                        WHERE n.entity_id = r.entity_id AND n.provider = r.provider AND n.applicant_id = r.applicant_id AND n.seq > r.seq)$v$,
    visible_entity('r.entity_id'));
END $$;

-- A KYB profile as each save left it (kyb_profiles holds the last): what a KYB decision rested on,
-- named in its basis by its SHA-256. The profile as it stands now is its first version here.
CREATE TABLE record_kyb_profile_versions (
  seq       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  entity_id uuid        NOT NULL REFERENCES entity_records(id) ON DELETE CASCADE,
  profile   jsonb       NOT NULL,
  saved_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX record_kyb_profile_versions_entity ON record_kyb_profile_versions (entity_id, seq);
INSERT INTO record_kyb_profile_versions (entity_id, profile, saved_at) SELECT entity_id, profile, updated_at FROM record_kyb_profiles;
