-- A vault member's writes (adding an item through their invitation link) honour Idempotency-Key
-- too: records may belong to a member, exactly one owner per record as before.
ALTER TABLE idempotency_records
  ADD COLUMN coffre_member_id text REFERENCES coffre_members (id) ON DELETE CASCADE,
  DROP CONSTRAINT idempotency_records_one_owner,
  ADD CONSTRAINT idempotency_records_one_owner
    CHECK (num_nonnulls(api_key_id, publishable_key_id, coffre_member_id) <= 1);

DROP INDEX idempotency_records_key;
CREATE UNIQUE INDEX idempotency_records_key
  ON idempotency_records (workspace_id, environment, idempotency_key, api_key_id, publishable_key_id, coffre_member_id)
  NULLS NOT DISTINCT;
