-- Wrong verification codes are counted per user, so that guessing (10^6
-- codes, three valid at any moment) is cut off long before it could succeed.
ALTER TABLE users
  ADD COLUMN mfa_failures integer NOT NULL DEFAULT 0,
  ADD COLUMN mfa_failures_since timestamptz;
