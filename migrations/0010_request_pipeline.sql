-- Idempotency records belong to the API key that made the request, and the
-- response they keep for replays is sealed (AES-256-GCM, api/extensions/idempotency.ts):
-- a replay may carry a once-shown secret (a key value, a whsec_ secret, upload
-- URLs), so only that key can replay it and the database never holds it in clear.
--
-- Records written before this migration name no key and their bodies may hold
-- secrets in clear: the bodies are erased (autovacuum reclaims the old row
-- versions; `VACUUM idempotency_records` does it at once). Such a record keeps
-- its key taken for the rest of its 24 hours, answering 409 idempotency_conflict,
-- so a client retrying across the upgrade never runs its request twice.
UPDATE idempotency_records SET response_body = NULL WHERE response_body IS NOT NULL;

ALTER TABLE idempotency_records
  DROP CONSTRAINT idempotency_records_pkey,
  DROP COLUMN response_body,
  ADD COLUMN api_key_id uuid REFERENCES api_keys (id) ON DELETE CASCADE,
  ADD COLUMN response_sealed text;

-- One record per API key and Idempotency-Key: two keys of a workspace never share one.
CREATE UNIQUE INDEX idempotency_records_key
  ON idempotency_records (workspace_id, environment, idempotency_key, api_key_id) NULLS NOT DISTINCT;

-- Repeated authentication failures are one audit entry per key, reason, address
-- and hour, counted in metadata.count (lib/api-keys/authenticate.ts).
ALTER TABLE audit_log ADD COLUMN collapse_key text;

CREATE UNIQUE INDEX audit_log_collapsed ON audit_log (workspace_id, collapse_key) WHERE collapse_key IS NOT NULL;
