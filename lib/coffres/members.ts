import { randomBytes } from 'node:crypto';
import { signToken } from '../crypto/signed-token.ts';
import { createCoffreQueries, type MemberRow } from '../db/queries/coffres.ts';
import { DomainError, notFound } from '../errors.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { newMemberId } from './ids.ts';
import { invitationUrl, presentMember } from './present.ts';
import { findCoffre, lockActiveCoffre } from './service.ts';
import type { CoffreAccessLevel } from './vocabulary.ts';

// A vault's members, as its owner invites, changes and revokes them
// (docs/coffres.md, "Members"). The invitation link is a signed token naming the
// member and the nonce of their current invitation: a new invitation or a
// revocation replaces the nonce, so every earlier link stops working at once.

const DAY_MS = 86_400_000;
export const INVITATION_DEFAULT_DAYS = 7;

/** The invitation link of a member's current invitation; the worker that mails it signs the same one. */
export function invitationLink(linksKey: Buffer, publicBaseUrl: string, member: MemberRow): string | null {
  if (!member.invitation_nonce || !member.invitation_expires_at) return null;
  const token = signToken(
    linksKey,
    'coffre-invitation',
    { m: member.id, n: member.invitation_nonce },
    member.invitation_expires_at,
  );
  return invitationUrl(publicBaseUrl, token);
}

export type InviteMemberInput = {
  email: string;
  name?: string | null | undefined;
  access: CoffreAccessLevel;
  /** How long the link works: 7 days unless said. */
  expires_in_days?: number | undefined;
};

export async function inviteMember(services: Services, caller: Caller, coffreId: string, input: InviteMemberInput) {
  const member = await services.db.transaction(async (tx) => {
    const coffre = await lockActiveCoffre(tx, caller, coffreId);
    const queries = createCoffreQueries(tx);
    if (await queries.memberByEmail(coffre.id, input.email)) {
      throw new DomainError('validation_error', 'This address is a member of the vault already.', {
        param: 'email',
        kind: 'conflict',
      });
    }
    const created = await queries.insertMember(coffre, {
      id: newMemberId(),
      email: input.email,
      name: input.name || null,
      access: input.access,
    });
    return issueInvitation(services, queries, created, input.expires_in_days);
  });
  return withLink(services, member);
}

/** A new link for a member (the earlier ones stop working), mailed again. */
export async function resendInvitation(
  services: Services,
  caller: Caller,
  coffreId: string,
  memberId: string,
  input: { expires_in_days?: number | undefined } | null,
) {
  const member = await services.db.transaction(async (tx) => {
    await lockActiveCoffre(tx, caller, coffreId);
    const queries = createCoffreQueries(tx);
    const member = await liveMember(queries, caller, coffreId, memberId);
    return issueInvitation(services, queries, member, input?.expires_in_days);
  });
  return withLink(services, member);
}

async function issueInvitation(
  services: Services,
  queries: ReturnType<typeof createCoffreQueries>,
  member: MemberRow,
  days = INVITATION_DEFAULT_DAYS,
) {
  const nonce = randomBytes(16).toString('base64url');
  // Whole seconds: the token carries its expiry in seconds, and the row must say the same instant.
  const expiresAt = new Date(Math.floor((Date.now() + days * DAY_MS) / 1000) * 1000);
  const invited = await queries.invite(member.id, nonce, expiresAt);
  await services.workflows.coffres.sendInvitation(
    { workspaceId: member.workspace_id, environment: member.environment },
    member.id,
    nonce,
  );
  return invited;
}

function withLink(services: Services, member: MemberRow) {
  return {
    ...presentMember(member),
    invitation_url: invitationLink(services.keys.links, services.config.api.publicBaseUrl, member),
  };
}

export async function listMembers(services: Services, caller: Caller, coffreId: string, page: PageQuery) {
  await findCoffre(services, caller, coffreId);
  const filters = { coffre: coffreId };
  const window = services.paginator.open('coffre_members', filters, page);
  const rows = await createCoffreQueries(services.db).listMembers(tenantOf(caller), coffreId, window);
  return services.paginator.close('coffre_members', filters, page, rows, presentMember);
}

/** Changes a member's access; it applies to their next request, through the link they have. */
export async function updateMember(
  services: Services,
  caller: Caller,
  coffreId: string,
  memberId: string,
  input: { access: CoffreAccessLevel },
) {
  const member = await services.db.transaction(async (tx) => {
    await lockActiveCoffre(tx, caller, coffreId);
    const queries = createCoffreQueries(tx);
    await liveMember(queries, caller, coffreId, memberId);
    return queries.setAccess(memberId, input.access);
  });
  return presentMember(member);
}

/** Revokes a member: their link is refused from this moment. */
export async function revokeMember(services: Services, caller: Caller, coffreId: string, memberId: string) {
  const queries = createCoffreQueries(services.db);
  await findCoffre(services, caller, coffreId);
  await liveMember(queries, caller, coffreId, memberId);
  const revoked = await queries.revoke(memberId);
  if (!revoked) throw memberRevoked();
  return presentMember(revoked);
}

async function liveMember(
  queries: ReturnType<typeof createCoffreQueries>,
  caller: Caller,
  coffreId: string,
  memberId: string,
) {
  const member = await queries.findMember(tenantOf(caller), coffreId, memberId);
  if (!member) throw notFound('member of this vault');
  if (member.revoked_at) throw memberRevoked();
  return member;
}

const memberRevoked = () =>
  new DomainError('not_found', 'This member was revoked: invite the address again.', { kind: 'gone' });
