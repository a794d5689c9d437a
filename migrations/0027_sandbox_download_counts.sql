-- Downloads of each vault item and intake file, counted only where a cap applies: the sandbox's
-- 5 downloads (docs/coffres.md and docs/intakes.md, "Sandbox"). A transfer counts its own
-- (transfers.total_downloads); these had no counter.
ALTER TABLE coffre_items ADD COLUMN download_count integer NOT NULL DEFAULT 0 CHECK (download_count >= 0);
ALTER TABLE intake_files ADD COLUMN download_count integer NOT NULL DEFAULT 0 CHECK (download_count >= 0);
