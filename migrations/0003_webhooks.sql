-- Webhook endpoints. The signing secret is needed in clear to sign, so it is
-- sealed (AES-256-GCM, key derived from VALISE_SECRET) rather than hashed.

CREATE TABLE webhooks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  name text NOT NULL DEFAULT '',
  description text,
  url text NOT NULL,
  events text[] NOT NULL CHECK (cardinality(events) > 0),
  is_active boolean NOT NULL DEFAULT true,
  secret_sealed text NOT NULL,
  -- During a secret rotation the old secret keeps signing (alongside the new one) until then.
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  success_count integer NOT NULL DEFAULT 0,
  failure_count integer NOT NULL DEFAULT 0,
  last_triggered_at timestamptz,
  last_status integer,
  failing_since timestamptz,
  disabled_reason text,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX webhooks_listing ON webhooks (workspace_id, environment, created_at DESC, id DESC);
