-- Foundation: workspaces, users, API keys, audit log, domain events and
-- idempotency records. Every tenant row carries workspace_id and, where data
-- is environment-scoped, environment: no query may cross either.

-- List ordering and cursors use (created_at, id). JavaScript dates hold
-- milliseconds, so timestamps are truncated to milliseconds at the source and
-- a cursor round-trips exactly.
CREATE FUNCTION ms_now() RETURNS timestamptz
  LANGUAGE sql VOLATILE
  AS $$ SELECT date_trunc('milliseconds', clock_timestamp()) $$;

CREATE TABLE workspaces (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'admin', 'member')),
  -- TOTP secret sealed with a key derived from VALISE_SECRET (AES-256-GCM).
  mfa_secret_sealed text,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  CONSTRAINT users_workspace_email_unique UNIQUE (workspace_id, email)
);

CREATE TYPE environment AS ENUM ('live', 'test', 'sandbox');

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  key_type text NOT NULL CHECK (key_type IN ('full', 'restricted')),
  scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
  is_active boolean NOT NULL DEFAULT true,
  allowed_ips text[] NOT NULL DEFAULT '{}',
  max_uses integer CHECK (max_uses > 0),
  used_count integer NOT NULL DEFAULT 0,
  last_used_at timestamptz,
  expires_at timestamptz,
  expired_at timestamptz,
  revoked_at timestamptz,
  revocation_reason text,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX api_keys_listing ON api_keys (workspace_id, environment, created_at DESC, id DESC);

-- One key can have several values at once: the current one and, during a
-- rotation's grace period, the previous one. Only a keyed hash is stored.
CREATE TABLE api_key_secrets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  api_key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  secret_hash bytea NOT NULL,
  key_prefix text NOT NULL,
  -- Set on the old value when the key rotates: the end of its grace period.
  valid_until timestamptz,
  retired_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  CONSTRAINT api_key_secrets_hash_unique UNIQUE (secret_hash)
);

CREATE INDEX api_key_secrets_by_key ON api_key_secrets (api_key_id, created_at DESC);

CREATE TABLE audit_log (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  actor_id uuid,
  api_key_id uuid,
  action text NOT NULL,
  resource_type text,
  resource_id text,
  ip_address text,
  user_agent text,
  country_code text,
  status text NOT NULL CHECK (status IN ('success', 'failure')),
  request_id text,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX audit_log_listing ON audit_log (workspace_id, environment, created_at DESC, id DESC);
CREATE INDEX audit_log_by_action ON audit_log (workspace_id, environment, action, created_at DESC);

-- The outbox: written in the same transaction as the change it describes;
-- delivery to webhooks and rules reads from here.
CREATE TABLE events (
  id text PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX events_listing ON events (workspace_id, environment, created_at DESC);

CREATE TABLE idempotency_records (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  idempotency_key text NOT NULL,
  request_fingerprint text NOT NULL,
  state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
  response_status integer,
  response_body jsonb,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  PRIMARY KEY (workspace_id, environment, idempotency_key)
);
