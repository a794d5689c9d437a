-- Downloads per transfer and UTC hour, for the top transfers' partial days at a window's edges:
-- whole hours are read here, so the raw rows counted are only those of the two partial hours, not
-- of up to two partial days (bench/README.md, analytics). Kept, like the other rollups of 0036, by
-- the triggers on transfer_downloads in the downloads' own transaction. No foreign key to
-- transfers: a transfer's rows go in analytics_forget_transfer, before it does.
CREATE TABLE analytics_transfer_hours (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  hour timestamptz NOT NULL,
  transfer_id uuid NOT NULL,
  downloads integer NOT NULL,
  PRIMARY KEY (workspace_id, environment, hour, transfer_id)
);

CREATE FUNCTION analytics_utc_hour(at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT to_timestamp(floor(extract(epoch FROM at) / 3600) * 3600) $$;

CREATE OR REPLACE FUNCTION analytics_count_inserted() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  INSERT INTO analytics_download_quarters AS q (workspace_id, environment, quarter, downloads)
  SELECT t.workspace_id, t.environment, analytics_quarter(n.created_at), count(*)::int
  FROM new_rows n JOIN transfers t ON t.id = n.transfer_id
  GROUP BY 1, 2, 3
  ON CONFLICT (workspace_id, environment, quarter) DO UPDATE SET downloads = q.downloads + EXCLUDED.downloads;
  INSERT INTO analytics_transfer_days AS d (workspace_id, environment, day, transfer_id, downloads)
  SELECT t.workspace_id, t.environment, analytics_utc_day(n.created_at), n.transfer_id, count(*)::int
  FROM new_rows n JOIN transfers t ON t.id = n.transfer_id
  GROUP BY 1, 2, 3, 4
  ON CONFLICT (workspace_id, environment, day, transfer_id) DO UPDATE SET downloads = d.downloads + EXCLUDED.downloads;
  INSERT INTO analytics_transfer_hours AS h (workspace_id, environment, hour, transfer_id, downloads)
  SELECT t.workspace_id, t.environment, analytics_utc_hour(n.created_at), n.transfer_id, count(*)::int
  FROM new_rows n JOIN transfers t ON t.id = n.transfer_id
  GROUP BY 1, 2, 3, 4
  ON CONFLICT (workspace_id, environment, hour, transfer_id) DO UPDATE SET downloads = h.downloads + EXCLUDED.downloads;
  INSERT INTO analytics_first_downloads AS f (transfer_id, workspace_id, environment, first_download_at)
  SELECT n.transfer_id, t.workspace_id, t.environment, min(n.created_at)
  FROM new_rows n JOIN transfers t ON t.id = n.transfer_id
  GROUP BY 1, 2, 3
  ON CONFLICT (transfer_id) DO UPDATE SET first_download_at = least(f.first_download_at, EXCLUDED.first_download_at);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION analytics_count_deleted() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  UPDATE analytics_download_quarters q SET downloads = q.downloads - gone.n
  FROM (SELECT t.workspace_id, t.environment, analytics_quarter(o.created_at) AS quarter, count(*)::int AS n
        FROM old_rows o JOIN transfers t ON t.id = o.transfer_id GROUP BY 1, 2, 3) gone
  WHERE q.workspace_id = gone.workspace_id AND q.environment = gone.environment AND q.quarter = gone.quarter;
  UPDATE analytics_transfer_days d SET downloads = d.downloads - gone.n
  FROM (SELECT t.workspace_id, t.environment, analytics_utc_day(o.created_at) AS day, o.transfer_id, count(*)::int AS n
        FROM old_rows o JOIN transfers t ON t.id = o.transfer_id GROUP BY 1, 2, 3, 4) gone
  WHERE d.workspace_id = gone.workspace_id AND d.environment = gone.environment AND d.day = gone.day
    AND d.transfer_id = gone.transfer_id;
  UPDATE analytics_transfer_hours h SET downloads = h.downloads - gone.n
  FROM (SELECT t.workspace_id, t.environment, analytics_utc_hour(o.created_at) AS hour, o.transfer_id, count(*)::int AS n
        FROM old_rows o JOIN transfers t ON t.id = o.transfer_id GROUP BY 1, 2, 3, 4) gone
  WHERE h.workspace_id = gone.workspace_id AND h.environment = gone.environment AND h.hour = gone.hour
    AND h.transfer_id = gone.transfer_id;
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
  DELETE FROM analytics_transfer_days d
  WHERE d.workspace_id = OLD.workspace_id AND d.environment = OLD.environment AND d.transfer_id = OLD.id;
  DELETE FROM analytics_transfer_hours h
  WHERE h.workspace_id = OLD.workspace_id AND h.environment = OLD.environment AND h.transfer_id = OLD.id;
  DELETE FROM analytics_first_downloads f WHERE f.transfer_id = OLD.id;
  RETURN OLD;
END
$$;

-- The downloads recorded before this table existed.
INSERT INTO analytics_transfer_hours (workspace_id, environment, hour, transfer_id, downloads)
SELECT t.workspace_id, t.environment, analytics_utc_hour(d.created_at), d.transfer_id, count(*)
FROM transfer_downloads d JOIN transfers t ON t.id = d.transfer_id GROUP BY 1, 2, 3, 4;
