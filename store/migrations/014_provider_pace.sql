-- The fleet's provider calls, spaced (issue 19): every call to the identity provider takes the next
-- slot here first, so however the Temporal server bursts its dispatch, no second holds more than
-- the spec's 10 calls. One row: the time the next call may go.
CREATE TABLE provider_pace (
  id      integer PRIMARY KEY CHECK (id = 1),
  next_at timestamptz NOT NULL
);
INSERT INTO provider_pace (id, next_at) VALUES (1, now());
