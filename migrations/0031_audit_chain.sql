-- A tamper-evident audit log (docs/audit.md, "Integrity"). Each entry is chained to the previous
-- entry of its workspace and environment: `seq` counts the chain, `prev_hash` is the previous
-- entry's `entry_hash`, and `entry_hash` is SHA-256 over a versioned canonical serialisation of
-- the entry. A trigger writes these columns on every insert, whoever inserts, so no writer can
-- forget to chain; it takes the chain's head row lock, so writers of one chain take turns.
--
-- Personal fields (ip_address, user_agent, country_code, the personal keys of metadata) are
-- covered through `personal_digest`, not directly: an erasure (lib/audit/retention.ts) nulls
-- them and sets `erased_at`, and the chain still verifies from the digest it kept.
--
-- The serialisation is mirrored in lib/audit/chain.ts (the offline verifier of an export):
-- change one, change the other, and bump the version.

CREATE TABLE audit_chain_heads (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  -- Where verification starts: the last entry a retention purge removed (seq 0 and 64 zeros
  -- before any purge), and its time, below which no later entry may be dated.
  anchor_seq bigint NOT NULL DEFAULT 0,
  anchor_hash text NOT NULL DEFAULT repeat('0', 64),
  anchor_created_at timestamptz,
  PRIMARY KEY (workspace_id, environment)
);

ALTER TABLE audit_log
  ADD COLUMN seq bigint,
  ADD COLUMN prev_hash text,
  ADD COLUMN entry_hash text,
  ADD COLUMN personal_digest text,
  ADD COLUMN erased_at timestamptz;

-- The metadata keys that hold personal data: hashed through the personal digest and removed by
-- an erasure. lib/audit/chain.ts declares the same list (AUDIT_PERSONAL_METADATA_KEYS).
CREATE FUNCTION audit_personal_metadata_keys() RETURNS text[]
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT ARRAY['email', 'recipient_email', 'ip_address', 'user_agent']::text[] $$;

-- The running counters of a collapsed entry (auth.failed): updated in place as occurrences add
-- up, so outside the hash. The entry itself (who, what, when it started) is covered.
CREATE FUNCTION audit_collapse_counter_keys() RETURNS text[]
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT ARRAY['count', 'last_at', 'last_request_id']::text[] $$;

CREATE FUNCTION audit_personal_digest(ip_address text, user_agent text, country_code text, metadata jsonb)
  RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$
    SELECT encode(sha256(convert_to(jsonb_build_array(
      'valise-audit-personal/1', ip_address, user_agent, country_code,
      metadata - ARRAY(SELECT k FROM jsonb_object_keys(metadata) AS k WHERE k <> ALL (audit_personal_metadata_keys()))
    )::text, 'UTF8')), 'hex')
  $$;

CREATE FUNCTION audit_entry_hash(entry audit_log) RETURNS text
  LANGUAGE sql STABLE
  AS $$
    SELECT encode(sha256(convert_to(jsonb_build_array(
      'valise-audit/1',
      entry.seq,
      entry.prev_hash,
      entry.id::text,
      entry.workspace_id::text,
      entry.environment::text,
      entry.actor_id::text,
      entry.api_key_id::text,
      entry.action,
      entry.resource_type,
      entry.resource_id,
      entry.status,
      entry.request_id,
      to_char(entry.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      entry.collapse_key IS NOT NULL,
      entry.metadata - audit_personal_metadata_keys()
        - CASE WHEN entry.collapse_key IS NOT NULL THEN audit_collapse_counter_keys() ELSE '{}'::text[] END,
      entry.personal_digest
    )::text, 'UTF8')), 'hex')
  $$;

-- Backfill: the existing entries of each chain, oldest first, become its first links.
DO $$
DECLARE
  entry audit_log;
  chain_workspace uuid;
  chain_environment environment;
  chain_seq bigint := 0;
  chain_hash text;
BEGIN
  FOR entry IN SELECT * FROM audit_log ORDER BY workspace_id, environment, created_at, id LOOP
    IF chain_workspace IS DISTINCT FROM entry.workspace_id OR chain_environment IS DISTINCT FROM entry.environment THEN
      chain_workspace := entry.workspace_id;
      chain_environment := entry.environment;
      chain_seq := 0;
      chain_hash := repeat('0', 64);
      INSERT INTO audit_chain_heads (workspace_id, environment) VALUES (entry.workspace_id, entry.environment);
    END IF;
    chain_seq := chain_seq + 1;
    entry.seq := chain_seq;
    entry.prev_hash := chain_hash;
    entry.personal_digest := audit_personal_digest(entry.ip_address, entry.user_agent, entry.country_code, entry.metadata);
    entry.entry_hash := audit_entry_hash(entry);
    chain_hash := entry.entry_hash;
    UPDATE audit_log
      SET seq = entry.seq, prev_hash = entry.prev_hash, personal_digest = entry.personal_digest, entry_hash = entry.entry_hash
      WHERE id = entry.id;
  END LOOP;
END
$$;

ALTER TABLE audit_log
  ALTER COLUMN seq SET NOT NULL,
  ALTER COLUMN prev_hash SET NOT NULL,
  ALTER COLUMN entry_hash SET NOT NULL,
  ALTER COLUMN personal_digest SET NOT NULL;

-- The chain's order, and the last link the trigger reads; a fork (two entries with one seq) is refused.
CREATE UNIQUE INDEX audit_log_chain ON audit_log (workspace_id, environment, seq);

CREATE FUNCTION audit_log_chain() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  head audit_chain_heads;
  previous record;
BEGIN
  SELECT * INTO head FROM audit_chain_heads
    WHERE workspace_id = NEW.workspace_id AND environment = NEW.environment FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO audit_chain_heads (workspace_id, environment) VALUES (NEW.workspace_id, NEW.environment)
      ON CONFLICT DO NOTHING;
    SELECT * INTO head FROM audit_chain_heads
      WHERE workspace_id = NEW.workspace_id AND environment = NEW.environment FOR UPDATE;
  END IF;

  -- A repeated occurrence of a collapsed entry turns into an update of that entry (ON CONFLICT in
  -- lib/db/queries/audit.ts): the chain does not move, and this row is discarded.
  IF NEW.collapse_key IS NOT NULL THEN
    SELECT seq, prev_hash, entry_hash, personal_digest INTO previous FROM audit_log
      WHERE workspace_id = NEW.workspace_id AND collapse_key = NEW.collapse_key;
    IF FOUND THEN
      NEW.seq := previous.seq;
      NEW.prev_hash := previous.prev_hash;
      NEW.entry_hash := previous.entry_hash;
      NEW.personal_digest := previous.personal_digest;
      RETURN NEW;
    END IF;
  END IF;

  -- Rows inserted earlier by the same statement are visible here (a row-level BEFORE trigger sees
  -- them), so one INSERT … SELECT of many entries chains them one after the other.
  SELECT seq, entry_hash, created_at INTO previous FROM audit_log
    WHERE workspace_id = NEW.workspace_id AND environment = NEW.environment
    ORDER BY seq DESC LIMIT 1;
  IF FOUND THEN
    NEW.seq := previous.seq + 1;
    NEW.prev_hash := previous.entry_hash;
    -- The default time was read before this writer's turn: an entry is never dated before the one it follows.
    NEW.created_at := greatest(NEW.created_at, previous.created_at);
  ELSE
    NEW.seq := head.anchor_seq + 1;
    NEW.prev_hash := head.anchor_hash;
    NEW.created_at := greatest(NEW.created_at, head.anchor_created_at);
  END IF;
  NEW.erased_at := NULL;
  NEW.personal_digest := audit_personal_digest(NEW.ip_address, NEW.user_agent, NEW.country_code, NEW.metadata);
  NEW.entry_hash := audit_entry_hash(NEW);
  RETURN NEW;
END
$$;

CREATE TRIGGER audit_log_chain BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_chain();
