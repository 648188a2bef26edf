-- The person data behind each KYC account (what a signed payload carries), by provider applicant;
-- written when the applicant is read, before the decision, so a retried step finds it.
CREATE TABLE kyc_persons (
  provider      text NOT NULL,
  applicant_id  text NOT NULL,
  person        jsonb NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, applicant_id)
);

-- When the account's latest decision was taken (an account is re-decided after a new review round).
ALTER TABLE kyc_accounts ADD COLUMN decided_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX kyc_accounts_entity_decided_idx ON kyc_accounts (entity_id, decided_at DESC);

-- Sandbox control requests (POST /sandbox/entity/{id}/kyc/complete): the review and the test
-- person to play, kept here so the workflow that plays them carries only the request's id.
CREATE TABLE sandbox_reviews (
  id           uuid PRIMARY KEY,
  business_id  uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  entity_id    uuid NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  request      jsonb NOT NULL,
  applicant_id text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
