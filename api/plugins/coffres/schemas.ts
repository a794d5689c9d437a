import Joi from 'joi';
import { COFFRE_ID_PATTERN, ITEM_ID_PATTERN, MEMBER_ID_PATTERN } from '../../../lib/coffres/ids.ts';
import type { NewItemInput } from '../../../lib/coffres/items.ts';
import {
  COFFRE_ACCESS_LEVELS,
  COFFRE_ACTIONS,
  COFFRE_ACTOR_TYPES,
  COFFRE_ITEM_STATUSES,
  COFFRE_STATUSES,
} from '../../../lib/coffres/vocabulary.ts';
import { SCAN_STATUSES, UPLOAD_STATES } from '../../../lib/vocabulary.ts';
import { fileName, listEnvelope, mimeType, text, timestamp, titleText } from '../../schemas.ts';
import { linkTokenParams } from '../shares/download.ts';
import { uploadUrl } from '../transfers/schemas.ts';

// Request and response schemas of the vault routes (docs/coffres.md).

export const coffreId = Joi.string().pattern(COFFRE_ID_PATTERN, 'vault id').description('`cof_…`');
export const memberId = Joi.string().pattern(MEMBER_ID_PATTERN, 'member id').description('`cofm_…`');
export const itemId = Joi.string().pattern(ITEM_ID_PATTERN, 'item id').description('`cofi_…`');

export const coffreParams = Joi.object<{ id: string }>({ id: coffreId.required() });
export const memberParams = Joi.object<{ id: string; memberId: string }>({
  id: coffreId.required(),
  memberId: memberId.required(),
});
export const itemParams = Joi.object<{ id: string; itemId: string }>({
  id: coffreId.required(),
  itemId: itemId.required(),
});
/** An invitation link's token (`/v/{token}`, `/v1/coffre-access/{token}`). */
export const invitationParams = linkTokenParams;
export const invitationItemParams = Joi.object<{ token: string; itemId: string }>({
  token: linkTokenParams.extract('token'),
  itemId: itemId.required(),
});

export const name = titleText.min(1).max(200);
export const description = text.max(2000).allow(null, '');
export const email = Joi.string().email({ tlds: false }).max(254);
export const access = Joi.string()
  .valid(...COFFRE_ACCESS_LEVELS)
  .description('`view` lists the items, `download` also downloads them, `upload` also adds items.');
export const expiresInDays = Joi.number()
  .min(1 / 86_400)
  .max(90)
  .description(
    'How long the invitation link works, in days (fractions allowed, at least a second): 7 unless said, at most 90.',
  );

export const newItem = Joi.object<NewItemInput>({
  name: fileName.required(),
  size: Joi.number()
    .integer()
    .min(0)
    .max(5 * 1024 ** 4)
    .required(),
  mime_type: mimeType,
});

export const coffre = Joi.object({
  id: coffreId.required(),
  object: Joi.string().valid('coffre').required(),
  name: Joi.string().required(),
  description: Joi.string().allow(null, '').required(),
  status: Joi.string()
    .valid(...COFFRE_STATUSES)
    .required(),
  expires_at: timestamp.allow(null).required(),
  member_count: Joi.number().integer().min(0).required().description('Members not revoked.'),
  item_count: Joi.number().integer().min(0).required().description('Items not deleted.'),
  created_at: timestamp.required(),
  updated_at: timestamp.required(),
}).label('Coffre');

export const coffreList = listEnvelope(coffre, 'CoffreList');

export const deletedCoffre = Joi.object({
  id: coffreId.required(),
  object: Joi.string().valid('coffre').required(),
  deleted: Joi.boolean().valid(true).required(),
  items_destroyed: Joi.number().integer().min(0).required(),
}).label('DeletedCoffre');

export const member = Joi.object({
  id: memberId.required(),
  object: Joi.string().valid('coffre_member').required(),
  coffre_id: coffreId.required(),
  email: Joi.string().required(),
  name: Joi.string().allow(null).required(),
  access: access.required(),
  status: Joi.string().valid('active', 'revoked').required(),
  invited_at: timestamp.allow(null).required(),
  invitation_expires_at: timestamp.allow(null).required(),
  revoked_at: timestamp.allow(null).required(),
  created_at: timestamp.required(),
  updated_at: timestamp.required(),
}).label('CoffreMember');

export const invitedMember = member
  .keys({
    invitation_url: Joi.string()
      .uri()
      .allow(null)
      .required()
      .description('The link just mailed (`/v/{token}`): a credential, shown only in this answer.'),
  })
  .label('InvitedCoffreMember');

export const memberList = listEnvelope(member, 'CoffreMemberList');

export const item = Joi.object({
  id: itemId.required(),
  object: Joi.string().valid('coffre_item').required(),
  coffre_id: coffreId.required(),
  name: Joi.string().required(),
  size: Joi.number().integer().min(0).required(),
  mime_type: Joi.string().required(),
  status: Joi.string()
    .valid(...COFFRE_ITEM_STATUSES)
    .required(),
  upload_state: Joi.string()
    .valid(...UPLOAD_STATES)
    .required(),
  bytes_received: Joi.number().integer().min(0).required(),
  sha256: Joi.string().hex().length(64).allow(null).required(),
  scan_status: Joi.string()
    .valid(...SCAN_STATUSES)
    .allow(null)
    .required(),
  uploaded_by: Joi.object({
    type: Joi.string()
      .valid(...COFFRE_ACTOR_TYPES)
      .required(),
    member_id: memberId.allow(null).required(),
  }).required(),
  created_at: timestamp.required(),
  uploaded_at: timestamp.allow(null).required(),
  deleted_at: timestamp.allow(null).required(),
  download_url: Joi.string()
    .uri()
    .allow(null)
    .required()
    .description('Only from `GET …/items/{itemId}` of an `available` item: fresh on each call, valid 300 s.'),
  download_expires_in: Joi.number().integer().allow(null).required(),
}).label('CoffreItem');

export const itemList = listEnvelope(item, 'CoffreItemList');

export const coffreUploadUrl = uploadUrl.keys({ file_id: itemId.required() }).label('CoffreUploadUrl');

export const createdItem = Joi.object({
  item: item.required(),
  upload_url: coffreUploadUrl.required(),
}).label('CreatedCoffreItem');

export const deletedItem = Joi.object({
  id: itemId.required(),
  object: Joi.string().valid('coffre_item').required(),
  deleted: Joi.boolean().valid(true).required(),
}).label('DeletedCoffreItem');

export const accessEntry = Joi.object({
  id: Joi.string().guid().required(),
  object: Joi.string().valid('coffre_access').required(),
  actor_type: Joi.string()
    .valid(...COFFRE_ACTOR_TYPES)
    .required(),
  actor: Joi.string().required().description("The member's e-mail address, or the API key's id."),
  member_id: memberId.allow(null).required(),
  action: Joi.string()
    .valid(...COFFRE_ACTIONS)
    .required(),
  item_id: itemId.allow(null).required(),
  item_name: Joi.string().allow(null).required(),
  ip_address: Joi.string().allow(null).required(),
  created_at: timestamp.required(),
}).label('CoffreAccessEntry');

export const accessLog = listEnvelope(accessEntry, 'CoffreAccessLog');

// The member side

export const visibleItem = Joi.object({
  id: itemId.required(),
  object: Joi.string().valid('coffre_item').required(),
  name: Joi.string().required(),
  size: Joi.number().integer().min(0).required(),
  mime_type: Joi.string().required(),
  created_at: timestamp.required(),
}).label('CoffreVisibleItem');

export const memberView = Joi.object({
  object: Joi.string().valid('coffre_access').required(),
  coffre: Joi.object({
    name: Joi.string().required(),
    description: Joi.string().allow(null, '').required(),
    expires_at: timestamp.allow(null).required(),
  }).required(),
  member: Joi.object({
    email: Joi.string().required(),
    name: Joi.string().allow(null).required(),
    access: access.required(),
    can_download: Joi.boolean().required(),
    can_upload: Joi.boolean().required(),
    invitation_expires_at: timestamp.allow(null).required(),
  }).required(),
  items: Joi.array().items(visibleItem).required().description('Available items, newest first.'),
}).label('CoffreMemberView');

export const visibleItemList = Joi.object({
  object: Joi.string().valid('list').required(),
  data: Joi.array().items(visibleItem).required(),
}).label('CoffreVisibleItemList');

export const memberDownloadLink = Joi.object({
  object: Joi.string().valid('download_link').required(),
  item: visibleItem.required(),
  download_url: Joi.string().uri().required(),
  expires_in: Joi.number().integer().required(),
}).label('CoffreDownloadLink');
