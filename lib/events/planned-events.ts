import { z } from 'zod';
import { event } from './define.ts';
import { TransferEventView as transfer } from './views.ts';

// The spec's event families this codebase does not emit yet: their payloads are
// the shape they are planned to have, over views of resources still to come.

const MemberView = z
  .object({
    user_id: z.uuid().describe('The member user id.'),
    email: z.email().describe('The member e-mail address.'),
    role: z.string().describe('The member role, such as `owner`, `admin` or `member`.'),
  })
  .describe('The workspace member.');

const WorkspaceView = z
  .object({
    id: z.uuid().describe('The workspace id.'),
    name: z.string().describe('The workspace name.'),
    plan: z.string().describe('The current plan.'),
  })
  .describe('The workspace.');

const DomainView = z
  .object({
    id: z.string().describe('The domain id.'),
    domain: z.string().describe('The host name, such as `files.example.com`.'),
  })
  .describe('The custom domain.');

const SessionView = z
  .object({
    id: z.string().describe('The session id.'),
    user_id: z.uuid().describe('Whose session it is.'),
    ip_address: z.string().nullable().describe('Client address at sign-in.'),
    user_agent: z.string().nullable().describe('Client user agent at sign-in.'),
    expires_at: z.iso.datetime().describe('When the session ends unless renewed.'),
  })
  .describe('The dashboard session.');

export const PLANNED_EVENTS = {
  'reply.received': event('A recipient replied to a transfer with files of their own.', {
    transfer,
    reply: z.object({
      id: z.string().describe('The reply id.'),
      from: z.string().nullable().describe('E-mail address of the replier, when known.'),
      files_count: z.int().min(0).describe('Files in the reply.'),
    }),
  }),
  'signature.completed': event('Every requested signer signed.', {
    signature: z.object({
      id: z.string().describe('The signature request id.'),
      transfer_id: z.uuid().nullable().describe('The transfer it belongs to.'),
      signers: z.array(z.email().describe('E-mail address of a signer.')).describe('Who signed.'),
      completed_at: z.iso.datetime().describe('When the last signature arrived.'),
    }),
  }),
  'identity.verified': event('A recipient proved their identity before accessing a transfer.', {
    verification: z.object({
      id: z.string().describe('The verification id.'),
      transfer_id: z.uuid().nullable().describe('The transfer it unlocks.'),
      email: z.email().describe('The verified address.'),
      method: z.string().describe('How it was verified, such as `email_code`.'),
      verified_at: z.iso.datetime().describe('When it succeeded.'),
    }),
  }),

  'member.invited': event('Someone was invited to the workspace.', {
    member: MemberView,
    invited_by: z.uuid().nullable().describe('User id of the inviter.'),
  }),
  'member.joined': event('An invited person joined the workspace.', { member: MemberView }),
  'member.role_changed': event('A member role changed.', {
    member: MemberView,
    previous_role: z.string().describe('The role before the change.'),
  }),

  'workspace.updated': event('Workspace settings changed.', {
    workspace: WorkspaceView,
    changed: z.array(z.string().describe('A setting name.')).describe('The settings that changed.'),
  }),
  'workspace.plan_changed': event('The workspace moved to another plan.', {
    workspace: WorkspaceView,
    previous_plan: z.string().describe('The plan before the change.'),
  }),

  'domain.verified': event('A custom domain passed DNS verification.', { domain: DomainView }),
  'domain.failed': event('A custom domain failed DNS verification.', {
    domain: DomainView,
    reason: z.string().describe('What was wrong, such as a missing record.'),
  }),

  'session.created': event('Someone signed in to the dashboard.', { session: SessionView }),
  'session.revoked': event('A dashboard session was ended before its expiry.', {
    session: SessionView,
    reason: z.string().describe('Why, such as `signed_out` or `revoked_by_admin`.'),
  }),
};
