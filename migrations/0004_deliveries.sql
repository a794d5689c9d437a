-- Event dispatch and webhook deliveries (docs/webhooks.md, "Delivery").
--
-- The events table is the outbox: a state change and its event commit
-- together, and the worker's dispatcher turns each undispatched event into one
-- delivery workflow per subscribed webhook (and one run per matching rule),
-- then stamps dispatched_at.

ALTER TABLE events ADD COLUMN dispatched_at timestamptz;
-- Rules whose actions led to this event, outermost first: evaluation skips
-- them, so a rule never retriggers itself through its own action's events.
ALTER TABLE events ADD COLUMN caused_by_rules uuid[] NOT NULL DEFAULT '{}';

-- Events recorded before dispatch existed had no webhook to reach.
UPDATE events SET dispatched_at = created_at;

CREATE INDEX events_undispatched ON events (created_at, id) WHERE dispatched_at IS NULL;

-- Wakes the dispatcher when events commit (NOTIFY is delivered at commit; one per transaction is enough).
CREATE FUNCTION notify_events_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('valise_events', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER events_recorded AFTER INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION notify_events_recorded();

-- One event on its way to one webhook.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  event_type text NOT NULL,
  -- pending: attempts remain; succeeded; failed: the schedule ran out;
  -- cancelled: the webhook was disabled before the event got through.
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
  attempt_count integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  completed_at timestamptz,
  UNIQUE (webhook_id, event_id)
);

-- Every HTTP attempt, scheduled, manual or test, as GET /v1/webhooks/{id}/deliveries shows it.
CREATE TABLE webhook_delivery_attempts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  -- `<workflow id>:<attempt index>`: a retried activity records its attempt once.
  attempt_key text NOT NULL UNIQUE,
  attempt integer NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('scheduled', 'manual', 'test')),
  url text NOT NULL,
  status_code integer,
  succeeded boolean NOT NULL,
  duration_ms integer NOT NULL,
  error text,
  response_body text,
  next_retry_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  UNIQUE (delivery_id, attempt)
);

CREATE INDEX webhook_delivery_attempts_listing ON webhook_delivery_attempts (webhook_id, created_at DESC, id DESC);
