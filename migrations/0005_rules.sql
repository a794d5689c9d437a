-- Automation rules and their execution history (docs/rules.md). The API
-- validates definitions; the worker finds the enabled rules of an event,
-- records one execution per (rule, event) and bumps the rule's counters.

CREATE TABLE rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  description text,
  trigger_event text NOT NULL,
  -- null: no conditions, every event of trigger_event matches.
  trigger_conditions jsonb CHECK (trigger_conditions IS NULL OR jsonb_typeof(trigger_conditions) = 'object'),
  action_type text NOT NULL CHECK (action_type IN (
    'webhook', 'trigger_webhook', 'slack_notify', 'email_recipient', 'email_workspace',
    'tag_transfer', 'untag_transfer', 'extend_expiry', 'archive_transfer'
  )),
  action_config jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(action_config) = 'object'),
  -- Signing secret of webhook actions, sealed like webhooks.secret_sealed; null for other actions.
  secret_sealed text,
  is_enabled boolean NOT NULL DEFAULT true,
  trigger_count integer NOT NULL DEFAULT 0,
  last_triggered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  updated_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX rules_listing ON rules (workspace_id, environment, created_at DESC, id DESC);
-- What the worker asks for every event: the enabled rules of its tenant and type.
CREATE INDEX rules_enabled_by_trigger ON rules (workspace_id, environment, trigger_event) WHERE is_enabled;

CREATE TABLE rule_executions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  rule_id uuid NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
  error text,
  duration_ms integer,
  attempts integer NOT NULL DEFAULT 0,
  -- Set when the execution first finished as succeeded or failed and was added to the rule's
  -- trigger_count, so a retried execution finishing again does not count the event twice.
  counted boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  completed_at timestamptz,
  CONSTRAINT rule_executions_once_per_event UNIQUE (rule_id, event_id)
);

CREATE INDEX rule_executions_listing ON rule_executions (rule_id, created_at DESC, id DESC);
