import type { CommonQueryMethods, DatabaseTransactionConnection } from 'slonik';
import { createApiKeyQueries } from '../db/queries/api-keys.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createScimQueries, type ScimUserRow } from '../db/queries/scim.ts';
import { memberEventView } from '../events/member-events.ts';
import { apiKeyEventView } from '../events/views.ts';
import { erasedAddress, eraseUser } from '../gdpr/erasure.ts';
import type { Tenant } from '../tenancy.ts';
import { scimBadRequest } from './resources.ts';

// Ending a member's access (docs/scim.md, "Deprovisioning"). Both functions run on the caller's
// transaction, so the member's change and the end of their keys commit together; the keys' change
// notifies every API process (migration 0020) and the credential query also reads the member's
// `active` flag, so a request with one of their keys a moment after the commit is refused with
// 401 revoked_api_key. The caller empties its own process's credential cache after the commit.

/** The workspace's owner stays: an identity provider cannot lock the workspace out of itself. */
export function refuseOwner(member: ScimUserRow, what: string): void {
  if (member.role === 'owner') {
    throw scimBadRequest('mutability', `The workspace owner cannot be ${what} through SCIM.`, 'id');
  }
}

/** Revokes every API key of the member, in every environment, and records `api_key.revoked` for each. */
export async function revokeMemberKeys(tx: CommonQueryMethods, workspaceId: string, userId: string): Promise<number> {
  const revoked = await createScimQueries(tx).revokeUserKeys(workspaceId, userId);
  const keys = createApiKeyQueries(tx);
  const events = createEventQueries(tx);
  for (const id of revoked) {
    const key = await keys.findById(id);
    if (!key) continue;
    await events.record({ workspaceId, environment: key.environment }, 'api_key.revoked', {
      api_key: apiKeyEventView(key),
      reason: 'other',
    });
  }
  return revoked.length;
}

/**
 * Deletes a member through SCIM: their keys are revoked, then they are erased (docs/gdpr.md,
 * "Erasure": their personal fields in every family, `member.removed` included, since it is recorded
 * first in the same transaction: a receiver learns which `user_id` went, not who it was); the row
 * stays, pseudonymous, so their transfers and the audit log still name its id. `eventTenant` is
 * where member.removed is recorded.
 */
export async function deleteScimMember(
  tx: DatabaseTransactionConnection,
  eventTenant: Tenant,
  member: ScimUserRow,
): Promise<{ revokedApiKeys: number }> {
  refuseOwner(member, 'deleted');
  const revokedApiKeys = await revokeMemberKeys(tx, member.workspace_id, member.id);
  await createEventQueries(tx).record(eventTenant, 'member.removed', {
    member: memberEventView(member),
    removed_by: null,
    revoked_api_keys: revokedApiKeys,
  });
  await eraseUser(tx, member.workspace_id, member.id);
  await createScimQueries(tx).eraseUser(member.workspace_id, member.id, erasedAddress(member.id));
  return { revokedApiKeys };
}
