-- An Idempotency-Key's claim is held by one request at a time, and only while that request lives.
-- Before, a claim whose request never settled it (its process killed, or the database gone at the
-- moment the claim committed, so the API could not tell it had) kept the key `in_progress` for the
-- record's 24 hours: every retry waited 30 s and got 409. Now the request that claims a key names
-- its claim (`claim_id`) and holds it until `locked_until`, which it pushes forward while it runs;
-- a claim whose time has passed is abandoned and the next request with the same body takes it
-- over. Settling (complete, release) touches only the claim it names, so a late settle of an
-- abandoned claim cannot undo the claim that took it over. Records from before this migration
-- have neither column: an in-progress one is abandoned once it is older than the lock.
ALTER TABLE idempotency_records
  ADD COLUMN claim_id uuid,
  ADD COLUMN locked_until timestamptz;
