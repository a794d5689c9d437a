-- A transfer that needs approval is `pending` from its creation (it used to be
-- NULL until activation, and activation reset any earlier decision to pending).
UPDATE transfers SET approval_status = 'pending' WHERE approval_required AND approval_status IS NULL;

-- Content clamd could not read whole is said to be not scanned, like end-to-end
-- ciphertext; scan statuses are the vocabulary of lib/db/queries/transfers.ts.
UPDATE transfers SET scan_status = 'not_scanned_too_large' WHERE scan_status = 'too_large';
UPDATE transfer_files SET scan_status = 'not_scanned_too_large' WHERE scan_status = 'too_large';
ALTER TABLE transfers ADD CONSTRAINT transfers_scan_status_check
  CHECK (scan_status IN ('pending', 'clean', 'infected', 'not_scanned_too_large', 'not_scanned_e2e'));
ALTER TABLE transfer_files ADD CONSTRAINT transfer_files_scan_status_check
  CHECK (scan_status IN ('pending', 'clean', 'infected', 'not_scanned_too_large', 'not_scanned_e2e'));
