-- A transfer that needs approval is `pending` from its creation (it used to be
-- NULL until activation, and activation reset any earlier decision to pending).
UPDATE transfers SET approval_status = 'pending' WHERE approval_required AND approval_status IS NULL;
