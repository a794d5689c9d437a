import test from 'ava';
import { invitationToken, PermissionError, Valise } from '../../sdk/src/index.ts';
import { eventually } from '../helpers/api.ts';
import { uniqueAddress } from '../helpers/mail.ts';
import { content } from '../helpers/transfers.ts';
import { sdkSession } from './session.ts';

// valise.coffres against the real API: the owner's put, and a member's side
// with nothing but their invitation link (docs/coffres.md).

const sdk = sdkSession('SDK vaults');

const blob = (bytes: Buffer, name: string) => ({ blob: new Blob([new Uint8Array(bytes)]), name });

async function available(coffreId: string, itemId: string) {
  return eventually(async () => {
    const item = await sdk.valise.coffres.getItem(coffreId, itemId);
    return item.status === 'available' ? item : undefined;
  }, 60_000);
}

test('the owner puts a file; a member opens, downloads and adds one with only their link', async (t) => {
  const coffres = sdk.valise.coffres;
  const coffre = await coffres.create({ name: 'SDK room' });
  const bytes = content(70_000);
  const put = await coffres.put(coffre.id, { file: blob(bytes, 'deck.pdf') });
  const item = await available(coffre.id, put.item.id);
  const owned = await coffres.openDownload(item.download_url ?? '');
  t.true(Buffer.from(await owned.arrayBuffer()).equals(bytes));

  const viewer = await coffres.inviteMember(coffre.id, { email: uniqueAddress('sdk-view'), access: 'view' });
  const member = await coffres.inviteMember(coffre.id, { email: uniqueAddress('sdk-up'), access: 'upload' });
  t.is(invitationToken(member.invitation_url ?? ''), new URL(member.invitation_url ?? '').pathname.slice(3));

  // No API key at all: the link is the credential.
  const stranger = new Valise({ baseUrl: sdk.api.url });
  const seen = await stranger.coffres.open(member.invitation_url ?? '');
  t.deepEqual(
    seen.items.map((i) => i.name),
    ['deck.pdf'],
  );
  t.true(seen.member.can_upload);
  const link = await stranger.coffres.memberDownloadLink(member.invitation_url ?? '', item.id);
  const partial = await stranger.coffres.openDownload(link.download_url, { range: 'bytes=0-99' });
  t.is(partial.status, 206);
  t.true(Buffer.from(await partial.arrayBuffer()).equals(bytes.subarray(0, 100)));
  await t.throwsAsync(stranger.coffres.memberDownloadLink(viewer.invitation_url ?? '', item.id), {
    instanceOf: PermissionError,
  });

  const extra = content(9_000);
  const added = await stranger.coffres.memberPut(member.invitation_url ?? '', { file: blob(extra, 'notes.txt') });
  await available(coffre.id, added.item.id);
  const listed = await stranger.coffres.listVisibleItems(member.invitation_url ?? '');
  t.deepEqual(
    listed.data.map((i) => i.name),
    ['notes.txt', 'deck.pdf'],
  );

  const log = await coffres.accessLog(coffre.id, { limit: 100 });
  t.true(log.data.some((e) => e.action === 'uploaded' && e.actor === member.email && e.item_name === 'notes.txt'));
  const members = await coffres.listMembers(coffre.id);
  t.is(members.data.length, 2);
  await coffres.revokeMember(coffre.id, member.id);
  await t.throwsAsync(stranger.coffres.open(member.invitation_url ?? ''), { instanceOf: PermissionError });
});
