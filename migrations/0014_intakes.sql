-- Secure intakes: people without an account send files to a workspace
-- (docs/intakes.md). An intake collects documents; each document is one
-- submission of one or more files. In `e2e_asym` mode the files are encrypted
-- by the submitter to the owner's public key and the server holds only
-- ciphertext and the wrapped content key; in `server` mode they are sealed at
-- rest like transfer files and scanned.

CREATE TABLE intakes (
  id text PRIMARY KEY CHECK (id ~ '^in_[0-9a-z]{20,40}$'),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  title text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 200),
  instructions text CHECK (length(instructions) <= 5000),
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed', 'expired', 'deleted')),
  deleted_at timestamptz,
  -- Why a closed intake closed: its owner, or max_submissions reached.
  closed_reason text CHECK (closed_reason IN ('owner', 'max_submissions')),
  encryption_mode text NOT NULL CHECK (encryption_mode IN ('server', 'e2e_asym')),
  -- e2e_asym: the owner's public key; the private key never reaches us.
  owner_kem text CHECK (owner_kem IN ('MLKEM768-X25519', 'DHKEM-X25519')),
  owner_public_key bytea,
  metadata_policy text NOT NULL DEFAULT 'deny' CHECK (metadata_policy IN ('allow', 'deny')),
  -- Hours, fractions allowed (the spec's durations are hours): at least a second, at most ten years.
  retention_hours double precision NOT NULL CHECK (retention_hours >= 1.0 / 3600 AND retention_hours <= 87600),
  max_files integer NOT NULL CHECK (max_files BETWEEN 1 AND 1000),
  max_bytes bigint NOT NULL CHECK (max_bytes > 0),
  max_submissions integer CHECK (max_submissions > 0),
  submissions_count integer NOT NULL DEFAULT 0,
  notify_emails text[] NOT NULL DEFAULT '{}',
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  updated_at timestamptz NOT NULL DEFAULT ms_now(),
  closed_at timestamptz,
  CONSTRAINT intakes_e2e_has_key CHECK (
    (encryption_mode = 'e2e_asym') = (owner_kem IS NOT NULL AND owner_public_key IS NOT NULL))
);

CREATE INDEX intakes_listing ON intakes (workspace_id, environment, created_at DESC, id DESC);

-- Publishable keys (cip_…): embedded in web pages, they may submit to their
-- intake and nothing else. Looked up by hash; sealed so the owner can read
-- them again to embed them.
CREATE TABLE intake_publishable_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  intake_id text NOT NULL REFERENCES intakes (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  label text CHECK (length(label) <= 100),
  key_hash text NOT NULL UNIQUE,
  key_sealed text NOT NULL,
  key_prefix text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);

CREATE INDEX intake_publishable_keys_by_intake ON intake_publishable_keys (intake_id, created_at DESC);

CREATE TABLE intake_documents (
  id text PRIMARY KEY CHECK (id ~ '^doc_[0-9a-z]{20,40}$'),
  intake_id text NOT NULL REFERENCES intakes (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  status text NOT NULL DEFAULT 'uploading'
    CHECK (status IN ('uploading', 'received', 'processing', 'available', 'rejected', 'deleted')),
  source text NOT NULL CHECK (source IN ('widget', 'api')),
  publishable_key_id uuid REFERENCES intake_publishable_keys (id) ON DELETE SET NULL,
  client_reference text CHECK (length(client_reference) <= 200),
  -- Kept only when the intake's metadata_policy is `allow`.
  metadata jsonb,
  -- e2e_asym: the document's content key wrapped to the owner (HPKE), and the KEM used.
  kem text CHECK (kem IN ('MLKEM768-X25519', 'DHKEM-X25519')),
  wrapped_symmetric_key text,
  -- e2e_asym: the VAL1 segment size the submitter encrypted with; null in server mode.
  chunk_size integer CHECK (chunk_size BETWEEN 4096 AND 16777216),
  -- Every file must be stored by then, or the document is deleted unfinished.
  upload_deadline timestamptz NOT NULL,
  retention_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  received_at timestamptz,
  deleted_at timestamptz
);

CREATE INDEX intake_documents_listing ON intake_documents (intake_id, created_at DESC, id DESC);
CREATE INDEX intake_documents_by_workspace ON intake_documents (workspace_id, environment, created_at DESC);

-- The files of a document: the columns every stored file has (lib/db/queries/stored-files.ts).
CREATE TABLE intake_files (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  document_id text NOT NULL REFERENCES intake_documents (id) ON DELETE CASCADE,
  position integer NOT NULL,
  name text NOT NULL,
  -- The bytes the upload carries: the plaintext in server mode, the VAL1 blob in e2e_asym mode.
  size bigint NOT NULL CHECK (size >= 0),
  -- What the submitter's file held before encryption.
  plaintext_size bigint NOT NULL CHECK (plaintext_size >= 0),
  mime_type text NOT NULL,
  -- e2e_asym: the file's VAL1 nonce prefix, chosen by the submitter (base64url).
  iv text,
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
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  CONSTRAINT intake_files_position_unique UNIQUE (document_id, position)
);
