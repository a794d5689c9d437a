-- The workspace's address book, the personal links of each transfer's
-- recipients, and what those links delivered (docs/recipients.md).

CREATE TABLE recipients (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  -- As normalised by lib/recipients/email.ts (domain in lower case); unique whatever the case.
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  name text CHECK (length(name) <= 200),
  organisation text CHECK (length(organisation) <= 200),
  tags text[] NOT NULL DEFAULT '{}' CHECK (cardinality(tags) <= 20),
  -- How the entry came to be: created through the API, or from a transfer's recipients.
  source text NOT NULL CHECK (source IN ('api', 'transfer')),
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  updated_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE UNIQUE INDEX recipients_email ON recipients (workspace_id, environment, lower(email));
CREATE INDEX recipients_listing ON recipients (workspace_id, environment, created_at DESC, id DESC);
CREATE INDEX recipients_tags ON recipients USING gin (tags);

-- One row per address a transfer was sent to: its personal share code, its
-- mail, and the downloads completed through it. The address is kept here, so
-- the link and its history outlive the address-book entry (recipient_id null).
CREATE TABLE transfer_recipients (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  transfer_id uuid NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
  recipient_id uuid REFERENCES recipients (id) ON DELETE SET NULL,
  email text NOT NULL,
  position integer NOT NULL,
  share_code text NOT NULL UNIQUE,
  downloads_completed integer NOT NULL DEFAULT 0,
  last_downloaded_at timestamptz,
  mailed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  UNIQUE (transfer_id, position)
);

CREATE UNIQUE INDEX transfer_recipients_address ON transfer_recipients (transfer_id, lower(email));
CREATE INDEX transfer_recipients_recipient ON transfer_recipients (recipient_id, created_at DESC);

-- A download-links call made through a personal link (one grant): counted for
-- its recipient once every file it named was delivered whole (completed_at).
CREATE TABLE recipient_grants (
  grant_id uuid PRIMARY KEY,
  transfer_recipient_id uuid NOT NULL REFERENCES transfer_recipients (id) ON DELETE CASCADE,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);

CREATE INDEX recipient_grants_link ON recipient_grants (transfer_recipient_id);

-- Each file of a grant: `delivered_through` is the end of the prefix of the
-- file [0, delivered_through) that its link's responses have sent without a
-- gap; the file is delivered when a response that finished brought it to `size`.
CREATE TABLE recipient_deliveries (
  grant_id uuid NOT NULL REFERENCES recipient_grants (grant_id) ON DELETE CASCADE,
  file_id uuid NOT NULL REFERENCES transfer_files (id) ON DELETE CASCADE,
  size bigint NOT NULL CHECK (size >= 0),
  delivered_through bigint NOT NULL DEFAULT 0 CHECK (delivered_through >= 0),
  completed_at timestamptz,
  PRIMARY KEY (grant_id, file_id)
);
