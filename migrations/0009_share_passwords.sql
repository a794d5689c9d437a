-- Password guesses on a share link (docs/transfers.md, "Passwords"). One
-- counter per link, client address (an IPv6 /64) and 15-minute window, and one
-- per link and window under the address '*': checked and incremented before a
-- password is verified, so parallel guesses cannot outrun the limit. A correct
-- password gives its attempt back.
CREATE TABLE share_password_attempts (
  transfer_id uuid NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
  client_key text NOT NULL,
  window_start timestamptz NOT NULL,
  attempts integer NOT NULL CHECK (attempts >= 0),
  PRIMARY KEY (transfer_id, client_key, window_start)
);

-- Uses of download links (docs/transfers.md, "Download links"). Each
-- download-links call is a grant (its id is inside the link's token); a
-- (grant, file) row is leased while one request streams the file, counts the
-- bytes sent, and is marked completed once the file's last byte has been
-- sent: from then on only ranges that resume are served, within twice the
-- file's size in all.
CREATE TABLE download_link_uses (
  grant_id uuid NOT NULL,
  file_id uuid NOT NULL REFERENCES transfer_files (id) ON DELETE CASCADE,
  -- The link's own expiry: after it the row serves no purpose and is removed.
  expires_at timestamptz NOT NULL,
  holder uuid,
  held_until timestamptz,
  bytes_sent bigint NOT NULL DEFAULT 0,
  completed_at timestamptz,
  PRIMARY KEY (grant_id, file_id)
);

CREATE INDEX download_link_uses_expiry ON download_link_uses (expires_at);
