-- How many times each download link has been used (DOWNLOAD_LINK_MAX_USES): one row per link used,
-- named by the SHA-256 of its token (the link itself is never stored), kept until the link expires
-- (housekeeping then deletes it).
CREATE TABLE download_link_uses (
  link_id text PRIMARY KEY,
  uses integer NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX download_link_uses_expiry ON download_link_uses (expires_at);
