-- Webhook first attempts without a workflow each (docs/webhooks.md, "Delivery").
--
-- The dispatcher queues one delivery per (event, subscribed webhook) in the
-- transaction that stamps the events dispatched; the sender in the worker
-- process (lib/webhooks/sender.ts) leases due deliveries, POSTs them, records
-- the attempts in batches and hands a failed one to a deliverWebhook workflow
-- for its retries. Only then is the delivery off its queue.

-- When the sender should take the delivery up: its first attempt, or handing
-- its retries to a workflow. NULL once the sender has nothing left to do with
-- it, and always for deliveries made before this column (their workflows run).
ALTER TABLE webhook_deliveries ADD COLUMN sender_due_at timestamptz;
-- A sender holds the delivery until then; past it, any sender may take it
-- again (its holder died or hung), so a delivery is never stuck with a dead worker.
ALTER TABLE webhook_deliveries ADD COLUMN leased_until timestamptz;

CREATE INDEX webhook_deliveries_sender_queue ON webhook_deliveries (sender_due_at) WHERE sender_due_at IS NOT NULL;
