-- SCIM provisions the workspace's members, who belong to no single environment: a SCIM token is
-- made with a live key only (docs/scim.md), and its audit events follow it. The database holds it,
-- so that a sandbox or test row cannot appear whatever writes it (lib/scim/family.ts declares it).
ALTER TABLE scim_tokens ADD CONSTRAINT scim_tokens_live_only CHECK (environment = 'live');
ALTER TABLE scim_audit_events ADD CONSTRAINT scim_audit_events_live_only CHECK (environment = 'live');
