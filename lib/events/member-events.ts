import { z } from 'zod';
import type { ScimUserRow } from '../db/queries/scim.ts';
import { EMITTED, event } from './define.ts';

// member.*: what SCIM provisioning records (docs/scim.md). Members belong to the workspace, not to
// an environment; their events are recorded in the SCIM token's environment, which is always
// `live` (SCIM tokens are created with live keys only).

const MemberEventView = z
  .object({
    user_id: z.uuid().describe('The member user id.'),
    user_name: z.string().describe('The SCIM userName, often the sign-in e-mail address.'),
    email: z.string().describe('The member e-mail address.'),
    external_id: z.string().nullable().describe("The identity provider's own id for the member, when it sent one."),
    active: z.boolean().describe('Whether the member may use Valise (their API keys authenticate).'),
    role: z.string().describe('The member role: `owner`, `admin` or `member`.'),
  })
  .describe('The workspace member.');

/** Only what identifies the member: never their other attributes. */
export function memberEventView(row: ScimUserRow): z.input<typeof MemberEventView> {
  const { id, user_name, email, external_id, active, role } = row;
  return { user_id: id, user_name, email, external_id, active, role };
}

export const MEMBER_EVENTS = {
  'member.created': event(
    'An identity provider created a member (`POST /v1/scim/Users`).',
    { member: MemberEventView },
    EMITTED,
  ),
  'member.updated': event(
    'An identity provider changed a member (`PUT` or `PATCH /v1/scim/Users/{id}`) without changing `active`.',
    { member: MemberEventView },
    EMITTED,
  ),
  'member.deactivated': event(
    'A member was deactivated (`active` false through SCIM): every API key of theirs was revoked in the same transaction.',
    {
      member: MemberEventView,
      revoked_api_keys: z.int().min(0).describe('How many of their API keys were revoked.'),
    },
    EMITTED,
  ),
  'member.reactivated': event(
    'A deactivated member was made active again through SCIM. Their revoked API keys stay revoked.',
    { member: MemberEventView },
    EMITTED,
  ),
  'member.removed': event(
    'A member was removed from the workspace: deleted by an identity provider (`DELETE /v1/scim/Users/{id}`), their API keys revoked and the member erased in the same transaction (docs/gdpr.md): `member.user_id` says who went; the other fields hold pseudonyms left by the erasure.',
    {
      member: MemberEventView,
      removed_by: z.uuid().nullable().describe('User id of whoever removed them; null when removed by provisioning.'),
      revoked_api_keys: z.int().min(0).describe('How many of their API keys were revoked.'),
    },
    EMITTED,
  ),
};
