-- A decision's nonce (issue 21). The audit log names a decision by the SHA-256 of the decision as
-- stored (decision.recorded's decisionSha256, domain/digests.ts), never by its outcome. Without a
-- secret in it, that hash would give the outcome away: an APPROVED decision's stored form is the
-- same for everyone, so anyone could hash it and compare (spec 1.4: no read hints at the outcome).
-- So each decision gets 256 random bits, hashed with it and kept here, beside the decision, where no
-- API read returns them; the evidence bundle reads them to prove which decision an entry names. A
-- purge takes them with the record, leaving a hash nobody can link to an outcome.
ALTER TABLE kyc_accounts ADD COLUMN decision_nonce text;
ALTER TABLE kyb_submissions ADD COLUMN decision_nonce text;
