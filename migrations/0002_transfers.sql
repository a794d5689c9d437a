-- Transfers, their files, folders and approvals. A transfer's life is owned
-- by its Temporal workflow (transfer-<id>); these rows are its record.

CREATE TABLE folders (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX folders_listing ON folders (workspace_id, environment, created_at DESC, id DESC);

CREATE TABLE transfers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  short_code text NOT NULL,
  transfer_title text,
  status text NOT NULL DEFAULT 'scanning' CHECK (status IN ('active', 'expired', 'deleted', 'scanning')),
  -- Why a transfer that is not active is not: uploading, upload_incomplete, infected, revoked, expired.
  status_reason text,
  encryption_mode text NOT NULL CHECK (encryption_mode IN ('server', 'e2e')),
  scan_status text,
  expires_at timestamptz NOT NULL,
  upload_deadline timestamptz NOT NULL,
  max_downloads integer CHECK (max_downloads > 0),
  total_downloads integer NOT NULL DEFAULT 0,
  password_hash text,
  recipient text,
  approval_required boolean NOT NULL DEFAULT false,
  approval_status text CHECK (approval_status IN ('pending', 'approved', 'rejected')),
  approved_at timestamptz,
  approved_by uuid,
  approval_note text,
  folder_id uuid REFERENCES folders (id) ON DELETE SET NULL,
  tags text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  activated_at timestamptz,
  ended_at timestamptz,
  CONSTRAINT transfers_short_code_unique UNIQUE (short_code)
);

CREATE INDEX transfers_listing ON transfers (workspace_id, environment, created_at DESC, id DESC);
CREATE INDEX transfers_by_status ON transfers (workspace_id, environment, status, created_at DESC);
-- Sandbox quota: transfers created per workspace in the last 24 hours.
CREATE INDEX transfers_by_workspace_time ON transfers (workspace_id, environment, created_at);

CREATE TABLE transfer_files (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  transfer_id uuid NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
  position integer NOT NULL,
  name text NOT NULL,
  size bigint NOT NULL CHECK (size >= 0),
  mime_type text NOT NULL,
  object_key text NOT NULL,
  -- pending: nothing yet; uploading: some parts stored; uploaded: complete.
  upload_state text NOT NULL DEFAULT 'pending' CHECK (upload_state IN ('pending', 'uploading', 'uploaded')),
  multipart_upload_id text,
  parts jsonb NOT NULL DEFAULT '[]',
  bytes_received bigint NOT NULL DEFAULT 0,
  upload_lease_until timestamptz,
  -- Server mode: the file's data key, wrapped by the master keyring. Set to
  -- NULL when the transfer ends: without it the stored bytes are noise.
  data_key_wrapped text,
  nonce_prefix bytea,
  encrypted_size bigint,
  sha256 text,
  scan_status text,
  scan_signature text,
  uploaded_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  CONSTRAINT transfer_files_position_unique UNIQUE (transfer_id, position)
);

CREATE TABLE transfer_approvals (
  transfer_id uuid PRIMARY KEY REFERENCES transfers (id) ON DELETE CASCADE,
  approver_id uuid,
  decision text CHECK (decision IN ('approved', 'rejected')),
  note text,
  requested_at timestamptz NOT NULL DEFAULT ms_now(),
  decided_at timestamptz
);

CREATE TABLE transfer_downloads (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  transfer_id uuid NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
  ip_address text,
  user_agent text,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX transfer_downloads_by_transfer ON transfer_downloads (transfer_id, created_at DESC);
