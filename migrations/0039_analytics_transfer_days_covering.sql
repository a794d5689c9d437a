-- The top transfers sum some 150,000 transfer-day rows for a 30-day window at a million downloads
-- (bench/README.md, analytics). Through the primary key each row is a heap visit, in the random
-- order the rows were first written: 390 ms on the bench's data under load. This index carries the
-- two columns the sum reads, so the scan can be index-only once the pages are all-visible
-- (autovacuum keeps the past days so; only recent rows change).
CREATE INDEX analytics_transfer_days_covering ON analytics_transfer_days (workspace_id, environment, day)
  INCLUDE (transfer_id, downloads);
