-- The events feed (issue 38, item 6): each event of a business gets the next number of that business's
-- `sequence`, in its row and in its body (the body's last member), so a receiver that was down
-- reconciles by asking for the events after the last sequence it saw (GET /events?after=…).
--
-- The number is taken when the event's transaction commits (a deferred constraint trigger), under the
-- business's row of business_event_sequences, held to the end of that commit. So numbers follow the
-- order in which events become visible: an event that commits later never gets a smaller number than
-- one a reader has already seen, and a reader that pages by `after` misses nothing. Taken earlier (at
-- the INSERT), the lock would be held through the rest of a decision's transaction, and two
-- transactions of one business taking rows in different orders could deadlock; at commit it is the
-- last lock taken and held for microseconds. A rolled-back transaction takes no number.
CREATE TABLE business_event_sequences (
  business_id   uuid   PRIMARY KEY REFERENCES businesses(id) ON DELETE CASCADE,
  last_sequence bigint NOT NULL
);

ALTER TABLE events ADD COLUMN sequence bigint;
-- events recorded before this release: numbered in the order they were recorded (their bodies, already
-- delivered, stay as they were: a redelivery sends the same bytes)
UPDATE events e SET sequence = x.n
  FROM (SELECT id, row_number() OVER (PARTITION BY business_id ORDER BY created_at, id) AS n FROM events) x
 WHERE e.id = x.id;
INSERT INTO business_event_sequences (business_id, last_sequence) SELECT business_id, max(sequence) FROM events GROUP BY business_id;
CREATE UNIQUE INDEX events_business_sequence_idx ON events (business_id, sequence);

-- store/events.ts writes every body ending in `,"sequence":0}`; the number replaces that 0. A body
-- without it (written by a process of an earlier release during a rolling deploy) is left as it is:
-- the event is numbered in the feed all the same.
CREATE FUNCTION events_take_sequence() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  INSERT INTO business_event_sequences AS s (business_id, last_sequence) VALUES (NEW.business_id, 1)
    ON CONFLICT (business_id) DO UPDATE SET last_sequence = s.last_sequence + 1
    RETURNING last_sequence INTO n;
  IF right(NEW.body, 14) = ',"sequence":0}' THEN
    UPDATE events
       SET sequence = n,
           body = left(body, -2) || n::text || '}',
           payload = jsonb_set(payload, '{sequence}', to_jsonb(n))
     WHERE id = NEW.id;
  ELSE
    UPDATE events SET sequence = n WHERE id = NEW.id;
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER events_take_sequence AFTER INSERT ON events
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION events_take_sequence();
