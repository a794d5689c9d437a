-- The order in which events were recorded. created_at has millisecond precision, so events
-- recorded in the same millisecond (a collection created with several transfers records one
-- collection.item_added per transfer in one loop) tied, and a listing by created_at alone gave
-- them in any order. Rows recorded before this migration are numbered in no particular order.
ALTER TABLE events ADD COLUMN recorded bigint GENERATED ALWAYS AS IDENTITY;
