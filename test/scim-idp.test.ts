import { randomUUID } from 'node:crypto';
import test from 'ava';
import { issueApiKey } from '../lib/api-keys/service.ts';
import { startApi, type TestApi } from './helpers/api.ts';

// The identity providers as they really call us: the request shapes Microsoft Entra ID's and
// Okta's SCIM clients send (their published validator and connector traces), replayed in their
// order, with their quirks: "Replace" in any case, "False" as a string, PATCH without a path,
// enterprise paths with a colon, the userName probe with a random uuid, excludedAttributes=members,
// and Okta deactivating with PATCH or PUT active=false instead of DELETE.

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

async function identityProvider(name: string) {
  const ws = await api.workspace(name);
  const created = await api.call('POST', '/v1/scim/tokens', {
    key: ws.keys.live,
    body: { name, mfa_code: await ws.nextMfa() },
  });
  const token = created.body.token as string;
  const send = (method: string, path: string, body?: unknown) =>
    api.call(method, path, {
      key: token,
      ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/scim+json; charset=utf-8' } }),
    });
  /** A key of the member's own, to see deprovisioning take effect. */
  const keyOf = async (userId: string) =>
    (
      await issueApiKey(
        api.services,
        { workspaceId: ws.workspace_id, userId, environment: 'live' },
        { name: 'member key', key_type: 'full', scopes: ['*'] },
      )
    ).key;
  return { ws, send, keyOf };
}

const q = (filter: string) => encodeURIComponent(filter);

test('Microsoft Entra ID: probe, create, match, patch, disable with "False", manager, groups, delete', async (t) => {
  const entra = await identityProvider('Entra ID');
  // The connection test: a user that cannot exist, by a random uuid.
  const probe = await entra.send('GET', `/scim/Users?filter=${q(`userName eq "${randomUUID()}"`)}`);
  t.is(probe.status, 200, probe.text);
  t.like(probe.body, { totalResults: 0, Resources: [] });
  t.deepEqual(probe.body.schemas, ['urn:ietf:params:scim:api:messages:2.0:ListResponse']);

  const suffix = randomUUID();
  const userName = `Test_User_${suffix}`;
  const created = await entra.send('POST', '/scim/Users', {
    schemas: [USER, ENTERPRISE],
    externalId: randomUUID(),
    userName,
    active: true,
    emails: [{ primary: true, type: 'work', value: `Test_User_${suffix}@testuser.com` }],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: [],
  });
  t.is(created.status, 201, created.text);
  const id = created.body.id as string;
  t.is(created.body.userName, userName);
  t.is(created.body.emails[0].value, `Test_User_${suffix}@testuser.com`);

  const matched = await entra.send('GET', `/scim/Users?filter=${q(`userName eq "${userName}"`)}`);
  t.is(matched.body.totalResults, 1);
  t.is(matched.body.Resources[0].id, id);
  const byExternal = await entra.send('GET', `/scim/Users?filter=${q(`externalId eq "${created.body.externalId}"`)}`);
  t.is(byExternal.body.Resources[0].id, id);

  const patched = await entra.send('PATCH', `/scim/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: `updated_${suffix}@testuser.com` },
      { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
      { op: 'Add', path: `${ENTERPRISE}:manager`, value: '2819c223-7f76-453a-919d-413861904646' },
      { op: 'Add', path: `${ENTERPRISE}:employeeNumber`, value: '701984' },
      { op: 'Add', path: 'roles', value: [{ primary: 'False', type: 'WindowsAzureActiveDirectoryRole', value: 'x' }] },
    ],
  });
  t.is(patched.status, 200, patched.text);
  t.is(patched.body.emails[0].value, `updated_${suffix}@testuser.com`);
  t.is(patched.body.name.familyName, 'updatedFamilyName');
  t.is(patched.body[ENTERPRISE].manager.value, '2819c223-7f76-453a-919d-413861904646');
  t.is(patched.body[ENTERPRISE].employeeNumber, '701984');

  // Entra ID's older shape: no path, attribute paths as the value's keys.
  const pathless = await entra.send('PATCH', `/scim/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [
      {
        op: 'replace',
        value: { displayName: 'Updated Display', 'name.givenName': 'Updated', [`${ENTERPRISE}:department`]: 'Sales' },
      },
    ],
  });
  t.is(pathless.status, 200, pathless.text);
  t.is(pathless.body.displayName, 'Updated Display');
  t.is(pathless.body.name.givenName, 'Updated');
  t.is(pathless.body[ENTERPRISE].department, 'Sales');

  const memberKey = await entra.keyOf(id);
  t.is((await api.call('GET', '/v1/me', { key: memberKey })).status, 200);
  const disabled = await entra.send('PATCH', `/scim/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
  });
  t.is(disabled.status, 200, disabled.text);
  t.false(disabled.body.active);
  t.is((await api.call('GET', '/v1/me', { key: memberKey })).body.error.code, 'revoked_api_key');

  const removedManager = await entra.send('PATCH', `/scim/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Remove', path: `${ENTERPRISE}:manager` }],
  });
  t.is(removedManager.body[ENTERPRISE].manager, undefined);

  // Groups: created, listed by name without members, members added and removed by value.
  const group = await entra.send('POST', '/scim/Groups', {
    schemas: [GROUP, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'],
    externalId: randomUUID(),
    displayName: `Group_${suffix}`,
    meta: { resourceType: 'Group' },
  });
  t.is(group.status, 201, group.text);
  const found = await entra.send(
    'GET',
    `/scim/Groups?excludedAttributes=members&filter=${q(`displayName eq "Group_${suffix}"`)}`,
  );
  t.is(found.body.totalResults, 1);
  t.is(found.body.Resources[0].members, undefined);
  const added = await entra.send('PATCH', `/scim/Groups/${group.body.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: id }] }],
  });
  t.is(added.status, 200, added.text);
  t.deepEqual(
    added.body.members.map((m: { value: string }) => m.value),
    [id],
  );
  const removed = await entra.send('PATCH', `/scim/Groups/${group.body.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: id }] }],
  });
  t.is(removed.status, 200, removed.text);
  t.deepEqual(removed.body.members ?? [], []);
  const renamed = await entra.send('PATCH', `/scim/Groups/${group.body.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Replace', path: 'displayName', value: `Renamed_${suffix}` }],
  });
  t.is(renamed.body.displayName, `Renamed_${suffix}`);

  t.is((await entra.send('DELETE', `/scim/Groups/${group.body.id}`)).status, 204);
  t.is((await entra.send('DELETE', `/scim/Users/${id}`)).status, 204);
  const gone = await entra.send('GET', `/scim/Users/${id}`);
  t.is(gone.status, 404);
  t.is(gone.body.status, '404');
});

test('Okta: match with startIndex and count, create, PUT, deactivate by PATCH and by PUT, groups', async (t) => {
  const okta = await identityProvider('Okta');
  const userName = `test.user.${randomUUID().slice(0, 8)}@okta.local`;
  const lookup = await okta.send('GET', `/scim/Users?filter=${q(`userName eq "${userName}"`)}&startIndex=1&count=100`);
  t.is(lookup.status, 200, lookup.text);
  t.like(lookup.body, { totalResults: 0, startIndex: 1, itemsPerPage: 0 });

  const body = {
    schemas: [USER],
    userName,
    name: { givenName: 'Test', familyName: 'User' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: 'Test User',
    locale: 'en-US',
    externalId: '00ujl29u0le5T6Aj10h7',
    groups: [],
    password: '1mz050nq',
    active: true,
  };
  const created = await okta.send('POST', '/scim/Users', body);
  t.is(created.status, 201, created.text);
  t.false(created.text.includes('1mz050nq'), 'a password is never stored nor echoed');
  const id = created.body.id as string;
  const matched = await okta.send('GET', `/scim/Users?filter=${q(`userName eq "${userName}"`)}&startIndex=1&count=100`);
  t.like(matched.body, { totalResults: 1, startIndex: 1, itemsPerPage: 1 });
  // Spaces as `+`, as form-encoding clients send them.
  const plus = await okta.send('GET', `/scim/Users?filter=userName+eq+%22${encodeURIComponent(userName)}%22`);
  t.is(plus.body.totalResults, 1, plus.text);

  const put = await okta.send('PUT', `/scim/Users/${id}`, {
    ...body,
    id,
    name: { givenName: 'Another', familyName: 'User' },
    meta: { resourceType: 'User' },
  });
  t.is(put.status, 200, put.text);
  t.is(put.body.name.givenName, 'Another');

  // Okta deactivates rather than deletes: PATCH active=false (no path)…
  const key = await okta.keyOf(id);
  const deactivated = await okta.send('PATCH', `/scim/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', value: { active: false } }],
  });
  t.is(deactivated.status, 200, deactivated.text);
  t.false(deactivated.body.active);
  t.is((await api.call('GET', '/v1/me', { key })).body.error.code, 'revoked_api_key');
  const reactivated = await okta.send('PATCH', `/scim/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', value: { active: true } }],
  });
  t.true(reactivated.body.active);

  // …or, on older integrations, PUT with active=false.
  const secondKey = await okta.keyOf(id);
  t.is((await api.call('GET', '/v1/me', { key: secondKey })).status, 200);
  const putInactive = await okta.send('PUT', `/scim/Users/${id}`, { ...body, id, active: false });
  t.is(putInactive.status, 200, putInactive.text);
  t.false(putInactive.body.active);
  t.is((await api.call('GET', '/v1/me', { key: secondKey })).body.error.code, 'revoked_api_key');
  // The member is still there, inactive: Okta reactivates by the same id.
  const stillThere = await okta.send('GET', `/scim/Users/${id}`);
  t.is(stillThere.status, 200);

  const group = await okta.send('POST', '/scim/Groups', { schemas: [GROUP], displayName: 'Test SCIMv2', members: [] });
  t.is(group.status, 201, group.text);
  const groupId = group.body.id as string;
  const byName = await okta.send(
    'GET',
    `/scim/Groups?filter=${q('displayName eq "Test SCIMv2"')}&startIndex=1&count=100`,
  );
  t.is(byName.body.totalResults, 1);
  const renamed = await okta.send('PATCH', `/scim/Groups/${groupId}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', value: { id: groupId, displayName: 'Test SCIMv2 Updated' } }],
  });
  t.is(renamed.status, 200, renamed.text);
  t.is(renamed.body.displayName, 'Test SCIMv2 Updated');
  t.is(renamed.body.id, groupId);
  const withMember = await okta.send('PATCH', `/scim/Groups/${groupId}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'add', path: 'members', value: [{ value: id, display: userName }] }],
  });
  t.is(withMember.body.members[0].value, id);
  const without = await okta.send('PATCH', `/scim/Groups/${groupId}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }],
  });
  t.deepEqual(without.body.members ?? [], []);
  t.is((await okta.send('DELETE', `/scim/Groups/${groupId}`)).status, 204);
});
