-- A publishable key's writes (an intake submission) honour Idempotency-Key too: an SDK or a page
-- that retries after a lost response must not start a second document. A record belongs to
-- exactly one key, an API key or a publishable key; records that name neither are the unbound
-- ones from before migration 0010, which still hold their Idempotency-Key (409 until they expire).
ALTER TABLE idempotency_records
  ADD COLUMN publishable_key_id uuid REFERENCES intake_publishable_keys (id) ON DELETE CASCADE,
  ADD CONSTRAINT idempotency_records_one_owner CHECK (num_nonnulls(api_key_id, publishable_key_id) <= 1);

DROP INDEX idempotency_records_key;
CREATE UNIQUE INDEX idempotency_records_key
  ON idempotency_records (workspace_id, environment, idempotency_key, api_key_id, publishable_key_id)
  NULLS NOT DISTINCT;
