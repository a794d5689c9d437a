-- Public intakes' budgets (docs/intakes.md, "Budgets"): submissions an intake takes per hour and
-- per day, null meaning the configured default (INTAKE_SUBMISSIONS_PER_HOUR, _PER_DAY); and when
-- each document's "submission received" mail went out, so an intake sends at most
-- INTAKE_NOTIFY_MAILS_PER_HOUR of them.
ALTER TABLE intakes
  ADD COLUMN submissions_per_hour integer CHECK (submissions_per_hour > 0),
  ADD COLUMN submissions_per_day integer CHECK (submissions_per_day > 0);
ALTER TABLE intake_documents ADD COLUMN notified_at timestamptz;
CREATE INDEX intake_documents_notified ON intake_documents (intake_id, notified_at) WHERE notified_at IS NOT NULL;
