-- MFA (docs/api-keys.md, "MFA").
--
-- RFC 6238 section 5.2: a verifier must not accept a code a second time. Each
-- user remembers the last time step accepted; only a later step passes, set
-- by one conditional UPDATE so that two requests carrying the same code cannot
-- both succeed.
ALTER TABLE users ADD COLUMN mfa_last_step bigint;

-- Wrong codes are counted per user and environment (a sandbox key's guesses
-- must not lock the live owner out). An attempt takes its slot atomically
-- before its code is checked (one INSERT … ON CONFLICT DO UPDATE … WHERE
-- under the row lock), so parallel guesses cannot exceed the limit.
CREATE TABLE mfa_failures (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  failures integer NOT NULL CHECK (failures >= 0),
  window_start timestamptz NOT NULL,
  PRIMARY KEY (user_id, environment)
);

-- The per-user counter of 0007 is replaced by the table above.
ALTER TABLE users DROP COLUMN mfa_failures, DROP COLUMN mfa_failures_since;
