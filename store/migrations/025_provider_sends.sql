-- The provider's cap counted on the sends themselves (issue 23). The slots of provider_pace space
-- provider calls, but a process that wakes late from its slot (a saturated machine) sent its call
-- too close to the next one's: a soak saw 11 arrivals within 985 ms. Each call now also claims a
-- place here just before it goes, and a place is given only while fewer than the cap's calls count
-- in the window: a call counts from its claim until a window after it has left (stamped once its
-- request is handed to the operating system, so never before it really went), or, if it is never
-- stamped (its process died), until a window after the longest its request could have been sent.
CREATE TABLE provider_sends (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  claimed_at timestamptz NOT NULL,
  sent_at    timestamptz,           -- null while the request is still to leave
  counts_until timestamptz NOT NULL -- when it stops counting against the cap
);

-- One claim: serialized on provider_pace's row (each statement of a PL/pgSQL function sees what
-- was committed before it, so the count after the lock includes every earlier claim). Gives a place
-- (send_id, wait_ms 0) or none (send_id null) and how long until one may free: exact when a sent
-- call's window ends first, poll_ms when only calls still leaving hold the window.
CREATE FUNCTION provider_send_claim(cap integer, window_ms float8, pending_ms float8, poll_ms float8)
  RETURNS TABLE (send_id bigint, wait_ms float8) LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz;
  held integer;
  frees timestamptz;
  frees_sent boolean;
BEGIN
  PERFORM 1 FROM provider_pace WHERE id = 1 FOR UPDATE;
  t := clock_timestamp();
  DELETE FROM provider_sends WHERE counts_until <= t;
  SELECT count(*) INTO held FROM provider_sends;
  IF held < cap THEN
    INSERT INTO provider_sends (claimed_at, counts_until)
      VALUES (t, t + make_interval(secs => (pending_ms + window_ms) / 1000))
      RETURNING id INTO send_id;
    wait_ms := 0;
    RETURN NEXT;
    RETURN;
  END IF;
  -- the place that frees first once held - cap + 1 of them have stopped counting
  SELECT s.counts_until, s.sent_at IS NOT NULL INTO frees, frees_sent
    FROM provider_sends s ORDER BY s.counts_until OFFSET held - cap LIMIT 1;
  send_id := NULL;
  wait_ms := CASE WHEN frees_sent THEN GREATEST(1, extract(epoch FROM frees - t) * 1000) ELSE poll_ms END;
  RETURN NEXT;
END $$;
