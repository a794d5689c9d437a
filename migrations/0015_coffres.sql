-- Vaults (data rooms, docs/coffres.md): named rooms of files, reached by
-- members through signed, expiring invitation links, every access logged.
-- Items are stored like transfer files (lib/uploads/): sealed at rest with
-- AES-256-GCM and scanned. Deleting an item, or the vault, or the vault
-- expiring, destroys the items' keys first (crypto-shredding), then the blobs.

CREATE TABLE coffres (
  id text PRIMARY KEY CHECK (id ~ '^cof_[0-9a-v]{26}$'),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  description text CHECK (length(description) <= 2000),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'expired', 'deleted')),
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  updated_at timestamptz NOT NULL DEFAULT ms_now(),
  ended_at timestamptz
);

CREATE INDEX coffres_listing ON coffres (workspace_id, environment, created_at DESC, id DESC);

CREATE TABLE coffre_members (
  id text PRIMARY KEY CHECK (id ~ '^cofm_[0-9a-v]{26}$'),
  coffre_id text NOT NULL REFERENCES coffres (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  email text NOT NULL CHECK (length(email) <= 254),
  name text CHECK (length(name) <= 200),
  access text NOT NULL CHECK (access IN ('view', 'download', 'upload')),
  -- Named by the invitation token: a new invitation (or a revocation) replaces it, so older links stop working.
  invitation_nonce text,
  invitation_expires_at timestamptz,
  invited_at timestamptz,
  revoked_at timestamptz,
  -- The day (UTC) of the last `coffre.accessed`: one event per member and day.
  last_accessed_on date,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  updated_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX coffre_members_listing ON coffre_members (coffre_id, created_at DESC, id DESC);
-- One live membership per address and vault.
CREATE UNIQUE INDEX coffre_members_email ON coffre_members (coffre_id, lower(email)) WHERE revoked_at IS NULL;

-- The items: the columns every stored file has (lib/db/queries/stored-files.ts).
CREATE TABLE coffre_items (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  coffre_id text NOT NULL REFERENCES coffres (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  status text NOT NULL DEFAULT 'uploading'
    CHECK (status IN ('uploading', 'scanning', 'available', 'rejected', 'deleted')),
  -- Who added it: a member through their invitation, or else the owner's API key.
  uploaded_by_member_id text REFERENCES coffre_members (id) ON DELETE SET NULL,
  uploaded_by_api_key_id uuid,
  upload_deadline timestamptz NOT NULL,
  deleted_at timestamptz,
  name text NOT NULL,
  size bigint NOT NULL CHECK (size >= 0),
  mime_type text NOT NULL,
  object_key text NOT NULL,
  upload_state text NOT NULL DEFAULT 'pending' CHECK (upload_state IN ('pending', 'uploading', 'uploaded')),
  multipart_upload_id text,
  parts jsonb NOT NULL DEFAULT '[]',
  bytes_received bigint NOT NULL DEFAULT 0,
  upload_lease_until timestamptz,
  upload_lease_id uuid,
  data_key_wrapped text,
  nonce_prefix bytea,
  encrypted_size bigint,
  sha256 text,
  scan_status text CHECK (scan_status IN ('pending', 'clean', 'infected', 'not_scanned_too_large', 'not_scanned_e2e')),
  scan_signature text,
  uploaded_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX coffre_items_listing ON coffre_items (coffre_id, created_at DESC, id DESC);

CREATE TABLE coffre_access_log (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  coffre_id text NOT NULL REFERENCES coffres (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('member', 'api_key')),
  member_id text REFERENCES coffre_members (id) ON DELETE SET NULL,
  -- The member's e-mail address, or the API key's prefix: kept as it was then.
  actor text NOT NULL,
  action text NOT NULL CHECK (action IN ('opened', 'listed', 'downloaded', 'uploaded')),
  item_id uuid,
  item_name text,
  ip_address text,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX coffre_access_log_listing ON coffre_access_log (coffre_id, created_at DESC, id DESC);
