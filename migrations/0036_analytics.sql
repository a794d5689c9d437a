-- Analytics rollups (docs/analytics.md, "Design"): counts of transfer_downloads kept by triggers on
-- that table, so they change in the same transaction as the downloads they count and are never out
-- of step. Derived data: rebuilt from transfer_downloads below, and purged with it.

-- Downloads per tenant and quarter hour (UTC instants on :00, :15, :30, :45): every zone's local
-- days and hours, half-hour and 45-minute offsets included, are whole quarters.
CREATE TABLE analytics_download_quarters (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  quarter timestamptz NOT NULL,
  downloads integer NOT NULL,
  PRIMARY KEY (workspace_id, environment, quarter)
);

-- Downloads per transfer and UTC day, for the top transfers. No foreign key to transfers: a
-- transfer's rows here are deleted by analytics_forget_transfer below, before it goes.
CREATE TABLE analytics_transfer_days (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  day timestamptz NOT NULL,
  transfer_id uuid NOT NULL,
  downloads integer NOT NULL,
  PRIMARY KEY (workspace_id, environment, day, transfer_id)
);

-- Each downloaded transfer's first download, for the time to first download and the funnel.
CREATE TABLE analytics_first_downloads (
  transfer_id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  first_download_at timestamptz NOT NULL
);
CREATE INDEX analytics_first_downloads_tenant ON analytics_first_downloads (workspace_id, environment);

-- The partial quarters and days at a window's edges are counted from the raw rows: by time first,
-- then by transfer, rather than probing every transfer of the tenant.
CREATE INDEX transfer_downloads_by_time ON transfer_downloads (created_at);

CREATE FUNCTION analytics_quarter(at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT to_timestamp(floor(extract(epoch FROM at) / 900) * 900) $$;

CREATE FUNCTION analytics_utc_day(at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT to_timestamp(floor(extract(epoch FROM at) / 86400) * 86400) $$;

-- A statement's downloads, counted in: grouped first, so that a bulk insert costs one upsert per
-- quarter and per transfer-day, not one per row.
CREATE FUNCTION analytics_count_inserted() RETURNS trigger
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
  INSERT INTO analytics_first_downloads AS f (transfer_id, workspace_id, environment, first_download_at)
  SELECT n.transfer_id, t.workspace_id, t.environment, min(n.created_at)
  FROM new_rows n JOIN transfers t ON t.id = n.transfer_id
  GROUP BY 1, 2, 3
  ON CONFLICT (transfer_id) DO UPDATE SET first_download_at = least(f.first_download_at, EXCLUDED.first_download_at);
  RETURN NULL;
END
$$;

-- Downloads deleted while their transfer stays, counted out. (Those deleted with their transfer,
-- by the cascade, were counted out before it by analytics_forget_transfer: their transfer is no
-- longer there to join here.)
CREATE FUNCTION analytics_count_deleted() RETURNS trigger
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

-- A transfer about to be deleted (the sandbox purge): its downloads are counted out while it can
-- still be joined, and its transfer-days go. When its workspace is being deleted, the rollups go
-- with the workspace.
CREATE FUNCTION analytics_forget_transfer() RETURNS trigger
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
  DELETE FROM analytics_first_downloads f WHERE f.transfer_id = OLD.id;
  RETURN OLD;
END
$$;

CREATE TRIGGER analytics_count_inserted AFTER INSERT ON transfer_downloads
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics_count_inserted();
CREATE TRIGGER analytics_count_deleted AFTER DELETE ON transfer_downloads
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics_count_deleted();
CREATE TRIGGER analytics_forget_transfer BEFORE DELETE ON transfers
  FOR EACH ROW EXECUTE FUNCTION analytics_forget_transfer();

-- The downloads recorded before these tables existed.
INSERT INTO analytics_download_quarters (workspace_id, environment, quarter, downloads)
SELECT t.workspace_id, t.environment, analytics_quarter(d.created_at), count(*)
FROM transfer_downloads d JOIN transfers t ON t.id = d.transfer_id GROUP BY 1, 2, 3;
INSERT INTO analytics_transfer_days (workspace_id, environment, day, transfer_id, downloads)
SELECT t.workspace_id, t.environment, analytics_utc_day(d.created_at), d.transfer_id, count(*)
FROM transfer_downloads d JOIN transfers t ON t.id = d.transfer_id GROUP BY 1, 2, 3, 4;
INSERT INTO analytics_first_downloads (transfer_id, workspace_id, environment, first_download_at)
SELECT d.transfer_id, t.workspace_id, t.environment, min(d.created_at)
FROM transfer_downloads d JOIN transfers t ON t.id = d.transfer_id GROUP BY 1, 2, 3;
