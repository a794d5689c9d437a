-- When an ended resource's stored objects were deleted. Its workflow deletes them and sets this;
-- the workers' sweeper (lib/storage/sweeper.ts) finds ended resources still without it (a lost
-- signal, a workflow that died) and deletes their objects. Rows ended before this migration
-- start without it: the first sweeps delete whatever remains of them (a missing object is fine).
ALTER TABLE transfers ADD COLUMN objects_deleted_at timestamptz;
ALTER TABLE intake_documents ADD COLUMN objects_deleted_at timestamptz;
ALTER TABLE coffre_items ADD COLUMN objects_deleted_at timestamptz;

-- Only the rows a sweep looks for: ended, objects not yet deleted.
CREATE INDEX transfers_objects_left ON transfers (ended_at)
  WHERE objects_deleted_at IS NULL AND status IN ('expired', 'deleted');
CREATE INDEX intake_documents_objects_left ON intake_documents (deleted_at)
  WHERE objects_deleted_at IS NULL AND status IN ('deleted', 'rejected');
CREATE INDEX coffre_items_objects_left ON coffre_items (deleted_at)
  WHERE objects_deleted_at IS NULL AND status IN ('deleted', 'rejected');
