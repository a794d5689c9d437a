-- Spans for the analytics that count per key (docs/analytics.md, "Design"): per transfer (the top
-- transfers) and per client address (the countries and their visitors). Each download is counted
-- in one span of each length: 1, 2, 4, 8 and 16 hours, and 1, 2, 4, … 64 UTC days, each span
-- starting on a multiple of its length since the epoch. A window's whole hours split into a few
-- such spans (at most about twenty for a year), so a 30-day window reads each key a handful of
-- times rather than once a day, and only the minutes at its two ends are counted from the raw
-- rows. Kept by the triggers of migration 0036, in the same transaction as the downloads;
-- analytics_transfer_days (one row per transfer and day) is replaced.

CREATE TABLE analytics_transfer_spans (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  hours smallint NOT NULL CHECK (hours BETWEEN 1 AND 1536), -- one of analytics_span_lengths()
  start timestamptz NOT NULL,
  -- start + hours: a span is old (for the purge) only once all of it is.
  ends_at timestamptz NOT NULL,
  transfer_id uuid NOT NULL,
  downloads integer NOT NULL,
  -- The count in the key's index: a window's spans are read from the index alone (once vacuumed),
  -- not from heap pages scattered over the weeks the rows were written in. The price: an increment
  -- is never a HOT update.
  PRIMARY KEY (workspace_id, environment, hours, start, transfer_id) INCLUDE (downloads)
);

-- The address as transfer_downloads has it ('' for a download recorded without one): derived from
-- those rows and never outliving them (a span whose count falls to zero is deleted).
CREATE TABLE analytics_address_spans (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  hours smallint NOT NULL CHECK (hours BETWEEN 1 AND 1536), -- one of analytics_span_lengths()
  start timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  ip_address text NOT NULL,
  downloads integer NOT NULL,
  PRIMARY KEY (workspace_id, environment, hours, start, ip_address) INCLUDE (downloads)
);

CREATE FUNCTION analytics_span_start(at timestamptz, hours integer) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT to_timestamp(floor(extract(epoch FROM at) / (3600 * hours)) * 3600 * hours) $$;

-- The span lengths in hours, once: the API splits windows into the same ones (SPAN_HOURS in
-- lib/db/queries/analytics.ts, which a test compares with this).
CREATE FUNCTION analytics_span_lengths() RETURNS SETOF integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT unnest(ARRAY[1, 2, 4, 8, 16, 24, 48, 96, 192, 384, 768, 1536]) $$;

CREATE OR REPLACE FUNCTION analytics_count_inserted() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  INSERT INTO analytics_download_quarters AS q (workspace_id, environment, quarter, downloads)
  SELECT t.workspace_id, t.environment, analytics_quarter(n.created_at), count(*)::int
  FROM new_rows n JOIN transfers t ON t.id = n.transfer_id
  GROUP BY 1, 2, 3
  ON CONFLICT (workspace_id, environment, quarter) DO UPDATE SET downloads = q.downloads + EXCLUDED.downloads;
  INSERT INTO analytics_transfer_spans AS s (workspace_id, environment, hours, start, ends_at, transfer_id, downloads)
  SELECT t.workspace_id, t.environment, l.hours, analytics_span_start(n.created_at, l.hours),
         analytics_span_start(n.created_at, l.hours) + make_interval(secs => l.hours * 3600), n.transfer_id, count(*)::int
  FROM new_rows n JOIN transfers t ON t.id = n.transfer_id CROSS JOIN analytics_span_lengths() l (hours)
  GROUP BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (workspace_id, environment, hours, start, transfer_id) DO UPDATE SET downloads = s.downloads + EXCLUDED.downloads;
  INSERT INTO analytics_address_spans AS s (workspace_id, environment, hours, start, ends_at, ip_address, downloads)
  SELECT t.workspace_id, t.environment, l.hours, analytics_span_start(n.created_at, l.hours),
         analytics_span_start(n.created_at, l.hours) + make_interval(secs => l.hours * 3600), coalesce(n.ip_address, ''),
         count(*)::int
  FROM new_rows n JOIN transfers t ON t.id = n.transfer_id CROSS JOIN analytics_span_lengths() l (hours)
  GROUP BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (workspace_id, environment, hours, start, ip_address) DO UPDATE SET downloads = s.downloads + EXCLUDED.downloads;
  INSERT INTO analytics_first_downloads AS f (transfer_id, workspace_id, environment, first_download_at)
  SELECT n.transfer_id, t.workspace_id, t.environment, min(n.created_at)
  FROM new_rows n JOIN transfers t ON t.id = n.transfer_id
  GROUP BY 1, 2, 3
  ON CONFLICT (transfer_id) DO UPDATE SET first_download_at = least(f.first_download_at, EXCLUDED.first_download_at);
  RETURN NULL;
END
$$;

-- Counts a set of deleted downloads (given as a query's rows) out of the address spans, deleting
-- those left at zero: an address stays in the rollup no longer than a download that carries it.
CREATE FUNCTION analytics_forget_addresses(workspace uuid, env environment, gone_at timestamptz[], gone_ip text[])
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
  UPDATE analytics_address_spans s SET downloads = s.downloads - gone.n
  FROM (SELECT l.hours, analytics_span_start(g.at, l.hours) AS start, coalesce(g.ip, '') AS ip, count(*)::int AS n
        FROM unnest(gone_at, gone_ip) g (at, ip) CROSS JOIN analytics_span_lengths() l (hours)
        GROUP BY 1, 2, 3) gone
  WHERE s.workspace_id = workspace AND s.environment = env AND s.hours = gone.hours AND s.start = gone.start
    AND s.ip_address = gone.ip;
  DELETE FROM analytics_address_spans s
  WHERE s.workspace_id = workspace AND s.environment = env AND s.downloads <= 0;
END
$$;

CREATE OR REPLACE FUNCTION analytics_count_deleted() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
  tenant record;
BEGIN
  UPDATE analytics_download_quarters q SET downloads = q.downloads - gone.n
  FROM (SELECT t.workspace_id, t.environment, analytics_quarter(o.created_at) AS quarter, count(*)::int AS n
        FROM old_rows o JOIN transfers t ON t.id = o.transfer_id GROUP BY 1, 2, 3) gone
  WHERE q.workspace_id = gone.workspace_id AND q.environment = gone.environment AND q.quarter = gone.quarter;
  UPDATE analytics_transfer_spans s SET downloads = s.downloads - gone.n
  FROM (SELECT t.workspace_id, t.environment, l.hours, analytics_span_start(o.created_at, l.hours) AS start,
               o.transfer_id, count(*)::int AS n
        FROM old_rows o JOIN transfers t ON t.id = o.transfer_id CROSS JOIN analytics_span_lengths() l (hours)
        GROUP BY 1, 2, 3, 4, 5) gone
  WHERE s.workspace_id = gone.workspace_id AND s.environment = gone.environment AND s.hours = gone.hours
    AND s.start = gone.start AND s.transfer_id = gone.transfer_id;
  DELETE FROM analytics_transfer_spans s
  WHERE s.transfer_id IN (SELECT o.transfer_id FROM old_rows o) AND s.downloads <= 0;
  FOR tenant IN
    SELECT t.workspace_id, t.environment, array_agg(o.created_at) AS ats, array_agg(o.ip_address) AS ips
    FROM old_rows o JOIN transfers t ON t.id = o.transfer_id GROUP BY 1, 2
  LOOP
    PERFORM analytics_forget_addresses(tenant.workspace_id, tenant.environment, tenant.ats, tenant.ips);
  END LOOP;
  -- The first download of a transfer that lost some: read again from what is left.
  UPDATE analytics_first_downloads f
  SET first_download_at = coalesce((SELECT min(d.created_at) FROM transfer_downloads d WHERE d.transfer_id = f.transfer_id),
                                   f.first_download_at)
  WHERE f.transfer_id IN (SELECT o.transfer_id FROM old_rows o);
  DELETE FROM analytics_first_downloads f
  WHERE f.transfer_id IN (SELECT o.transfer_id FROM old_rows o)
    AND NOT EXISTS (SELECT 1 FROM transfer_downloads d WHERE d.transfer_id = f.transfer_id);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION analytics_forget_transfer() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = OLD.workspace_id) THEN
    RETURN OLD;
  END IF;
  UPDATE analytics_download_quarters q SET downloads = q.downloads - gone.n
  FROM (SELECT analytics_quarter(d.created_at) AS quarter, count(*)::int AS n
        FROM transfer_downloads d WHERE d.transfer_id = OLD.id GROUP BY 1) gone
  WHERE q.workspace_id = OLD.workspace_id AND q.environment = OLD.environment AND q.quarter = gone.quarter;
  DELETE FROM analytics_transfer_spans s
  WHERE s.workspace_id = OLD.workspace_id AND s.environment = OLD.environment AND s.transfer_id = OLD.id;
  PERFORM analytics_forget_addresses(OLD.workspace_id, OLD.environment,
    ARRAY(SELECT d.created_at FROM transfer_downloads d WHERE d.transfer_id = OLD.id),
    ARRAY(SELECT d.ip_address FROM transfer_downloads d WHERE d.transfer_id = OLD.id));
  DELETE FROM analytics_first_downloads f WHERE f.transfer_id = OLD.id;
  RETURN OLD;
END
$$;

DROP TABLE analytics_transfer_days;
DROP FUNCTION analytics_utc_day(timestamptz);

-- The partial hours at a window's edges are read from the raw rows by time: the index carries what
-- they are grouped by, so a vacuumed table answers from the index alone.
DROP INDEX transfer_downloads_by_time;
CREATE INDEX transfer_downloads_by_time ON transfer_downloads (created_at) INCLUDE (transfer_id, ip_address);

-- The downloads recorded before these tables existed.
INSERT INTO analytics_transfer_spans (workspace_id, environment, hours, start, ends_at, transfer_id, downloads)
SELECT t.workspace_id, t.environment, l.hours, analytics_span_start(d.created_at, l.hours),
       analytics_span_start(d.created_at, l.hours) + make_interval(secs => l.hours * 3600), d.transfer_id, count(*)
FROM transfer_downloads d JOIN transfers t ON t.id = d.transfer_id CROSS JOIN analytics_span_lengths() l (hours)
GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO analytics_address_spans (workspace_id, environment, hours, start, ends_at, ip_address, downloads)
SELECT t.workspace_id, t.environment, l.hours, analytics_span_start(d.created_at, l.hours),
       analytics_span_start(d.created_at, l.hours) + make_interval(secs => l.hours * 3600), coalesce(d.ip_address, ''), count(*)
FROM transfer_downloads d JOIN transfers t ON t.id = d.transfer_id CROSS JOIN analytics_span_lengths() l (hours)
GROUP BY 1, 2, 3, 4, 5, 6;
