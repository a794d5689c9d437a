-- Collections (docs/collections.md): transfers grouped under a title, shared
-- through one link. The link's code is null while the link is turned off.

CREATE TABLE collections (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  title text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 200),
  description text CHECK (length(description) <= 2000),
  share_code text,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  updated_at timestamptz NOT NULL DEFAULT ms_now(),
  CONSTRAINT collections_share_code_unique UNIQUE (share_code),
  -- The target of collection_transfers' tenant-bound foreign key.
  CONSTRAINT collections_tenant_unique UNIQUE (id, workspace_id, environment)
);

CREATE INDEX collections_listing ON collections (workspace_id, environment, created_at DESC, id DESC);

-- A transfer can join only a collection of its own workspace and environment:
-- both foreign keys below carry the tenant, so the database refuses any other pair.
ALTER TABLE transfers ADD CONSTRAINT transfers_tenant_unique UNIQUE (id, workspace_id, environment);

CREATE TABLE collection_transfers (
  collection_id uuid NOT NULL,
  transfer_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  environment environment NOT NULL,
  position integer NOT NULL CHECK (position >= 0),
  added_at timestamptz NOT NULL DEFAULT ms_now(),
  PRIMARY KEY (collection_id, transfer_id),
  -- Deferred: reordering rewrites every position in one statement.
  CONSTRAINT collection_transfers_position_unique UNIQUE (collection_id, position) DEFERRABLE INITIALLY DEFERRED,
  FOREIGN KEY (collection_id, workspace_id, environment)
    REFERENCES collections (id, workspace_id, environment) ON DELETE CASCADE,
  FOREIGN KEY (transfer_id, workspace_id, environment)
    REFERENCES transfers (id, workspace_id, environment) ON DELETE CASCADE
);

CREATE INDEX collection_transfers_by_transfer ON collection_transfers (transfer_id);
