-- Archiving (docs/transfers.md, "Archive"): an archived transfer leaves the
-- default transfer list and keeps working for its recipients until it expires.

ALTER TABLE transfers ADD COLUMN archived_at timestamptz;

CREATE INDEX transfers_tags ON transfers USING gin (tags);
