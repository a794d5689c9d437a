-- The upload lease names the request that holds it, so that only that request
-- renews, uses or releases it: one whose lease lapsed can no longer write
-- beside its successor, nor free the successor's lease when it ends.
ALTER TABLE transfer_files ADD COLUMN upload_lease_id uuid;
