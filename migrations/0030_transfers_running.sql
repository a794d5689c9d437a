-- Transfers not yet ended, by expiry: the workers' sweeper (lib/storage/sweeper.ts) ends those
-- still running more than an interval past their expiry, whose workflow is gone.
CREATE INDEX transfers_running_by_expiry ON transfers (expires_at) WHERE status IN ('active', 'scanning');
