import Joi from 'joi';
import { DOCUMENT_ID_PATTERN, INTAKE_ID_PATTERN } from '../../../lib/intakes/ids.ts';
import {
  INTAKE_CLOSE_REASONS,
  INTAKE_DOCUMENT_STATUSES,
  INTAKE_ENCRYPTION_MODES,
  INTAKE_KEMS,
  INTAKE_SOURCES,
  INTAKE_STATUSES,
  METADATA_POLICIES,
} from '../../../lib/intakes/vocabulary.ts';
import { SCAN_STATUSES, UPLOAD_STATES } from '../../../lib/vocabulary.ts';
import { id, listEnvelope, text, timestamp, titleText } from '../../schemas.ts';
import { uploadUrl } from '../transfers/schemas.ts';

// Request and response schemas of the intake routes (docs/intakes.md).

export const intakeId = Joi.string().pattern(INTAKE_ID_PATTERN, 'intake id').description('`in_…`');
export const documentId = Joi.string().pattern(DOCUMENT_ID_PATTERN, 'document id').description('`doc_…`');
export const intakeParams = Joi.object<{ id: string }>({ id: intakeId.required() });
export const documentParams = Joi.object<{ id: string; docId: string }>({
  id: intakeId.required(),
  docId: documentId.required(),
});

const base64url = Joi.string().pattern(/^[A-Za-z0-9_-]+$/, 'base64url');
const email = Joi.string().email({ tlds: false }).max(254);

export const title = titleText.min(1).max(200);
export const instructions = text.max(5000).allow(null);
/** Hours, fractions allowed: at least one second. */
export const retentionHours = Joi.number()
  .min(1 / 3600)
  .max(87_600);
export const limits = Joi.object({
  max_files: Joi.number().integer().min(1).max(1000),
  max_bytes: Joi.number()
    .integer()
    .min(1)
    .max(5 * 1024 ** 4),
  max_submissions: Joi.number().integer().min(1).max(1_000_000).allow(null),
  submissions_per_hour: Joi.number()
    .integer()
    .min(1)
    .max(1_000_000)
    .allow(null)
    .description('Submissions taken per rolling hour; null: `INTAKE_SUBMISSIONS_PER_HOUR` (100).'),
  submissions_per_day: Joi.number()
    .integer()
    .min(1)
    .max(1_000_000)
    .allow(null)
    .description('Submissions taken per rolling 24 hours; null: `INTAKE_SUBMISSIONS_PER_DAY` (1000).'),
});
export const notify = Joi.array().items(email).max(10).unique();
export const expiresInHours = Joi.number()
  .min(1 / 3600)
  .max(87_600);
export const metadataPolicy = Joi.string().valid(...METADATA_POLICIES);
export const ownerPublicKey = Joi.object({
  kem: Joi.string()
    .valid(...INTAKE_KEMS)
    .default('MLKEM768-X25519'),
  public_key: base64url.max(2048).required(),
});

const ownerKeyView = Joi.object({
  kem: Joi.string()
    .valid(...INTAKE_KEMS)
    .required(),
  public_key: Joi.string().required(),
  fingerprint: Joi.string().hex().length(32).required(),
})
  .allow(null)
  .label('IntakeOwnerKey');

/** What both the owner and a submitter see of an intake's limits. */
const submissionLimits = {
  max_files: Joi.number().integer().required(),
  max_bytes: Joi.number().integer().required(),
};

/** What a submitter's form shows of an intake; the owner sees these and more. */
const formFields = {
  id: intakeId.required(),
  title: Joi.string().required(),
  instructions: Joi.string().allow(null, '').required(),
  status: Joi.string()
    .valid(...INTAKE_STATUSES)
    .required(),
  encryption_mode: Joi.string()
    .valid(...INTAKE_ENCRYPTION_MODES)
    .required(),
  owner_public_key: ownerKeyView.required(),
  metadata_policy: Joi.string()
    .valid(...METADATA_POLICIES)
    .required(),
  expires_at: timestamp.allow(null).required(),
};

export const intake = Joi.object({
  ...formFields,
  object: Joi.string().valid('intake').required(),
  closed_reason: Joi.string()
    .valid(...INTAKE_CLOSE_REASONS)
    .allow(null)
    .required(),
  retention_hours: Joi.number().required(),
  limits: Joi.object({
    ...submissionLimits,
    max_submissions: Joi.number().integer().allow(null).required(),
    submissions_per_hour: Joi.number().integer().min(1).required(),
    submissions_per_day: Joi.number().integer().min(1).required(),
  })
    .required()
    .label('IntakeLimits'),
  notify: Joi.array().items(Joi.string()).required(),
  submissions_count: Joi.number().integer().min(0).required(),
  page_url: Joi.string().uri().required(),
  created_at: timestamp.required(),
  updated_at: timestamp.required(),
  closed_at: timestamp.allow(null).required(),
}).label('Intake');

export const publishableKey = Joi.object({
  id: id.required(),
  object: Joi.string().valid('publishable_key').required(),
  intake_id: intakeId.required(),
  label: Joi.string().allow(null).required(),
  key: Joi.string()
    .pattern(/^cip_/)
    .required()
    .description('The value to embed. Safe in a web page: it can only submit to this intake.'),
  key_prefix: Joi.string().required(),
  page_url: Joi.string()
    .uri()
    .required()
    .description('The intake page with this key in its fragment (`#k=…`): the link to give submitters.'),
  created_at: timestamp.required(),
  last_used_at: timestamp.allow(null).required(),
  revoked_at: timestamp.allow(null).required(),
}).label('PublishableKey');

export const intakeWithKey = intake.keys({ publishable_key: publishableKey.required() }).label('CreatedIntake');
export const intakeList = listEnvelope(intake, 'IntakeList');
export const publishableKeyList = listEnvelope(publishableKey, 'PublishableKeyList');

export const deletedIntake = Joi.object({
  id: intakeId.required(),
  object: Joi.string().valid('intake').required(),
  deleted: Joi.boolean().valid(true).required(),
  documents_deleted: Joi.number().integer().min(0).required(),
}).label('DeletedIntake');

const documentFile = Joi.object({
  id: id.required(),
  name: Joi.string().required(),
  size_bytes: Joi.number()
    .integer()
    .min(0)
    .required()
    .description('The file as the submitter sent it, before encryption.'),
  encrypted_size_bytes: Joi.number().integer().min(0).allow(null).required(),
  iv: Joi.string().allow(null).required(),
  display_mime: Joi.string().required(),
  upload_state: Joi.string()
    .valid(...UPLOAD_STATES)
    .required(),
  scan_status: Joi.string()
    .valid(...SCAN_STATUSES)
    .allow(null)
    .required(),
  download_url: Joi.string()
    .uri()
    .allow(null)
    .required()
    .description('Fresh on each call, valid `download_expires_in` seconds; null until the file may be downloaded.'),
  download_expires_in: Joi.number().integer().allow(null).required(),
}).label('IntakeDocumentFile');

export const intakeDocument = Joi.object({
  id: documentId.required(),
  object: Joi.string().valid('intake_document').required(),
  intake_id: intakeId.required(),
  client_reference: Joi.string().allow(null).required(),
  metadata: Joi.object().unknown(true).description('Present only when the intake has `metadata_policy` `allow`.'),
  status: Joi.string()
    .valid(...INTAKE_DOCUMENT_STATUSES)
    .required(),
  files_count: Joi.number().integer().min(0).required(),
  total_size_bytes: Joi.number().integer().min(0).required().description('Sum of the encrypted blob sizes.'),
  encrypted: Joi.boolean().required(),
  source: Joi.string()
    .valid(...INTAKE_SOURCES)
    .required(),
  envelope: Joi.object({
    wrapped_symmetric_key: Joi.string().required(),
    chunk_size: Joi.number().integer().required(),
  })
    .allow(null)
    .required(),
  encryption: Joi.object({
    mode: Joi.string()
      .valid(...INTAKE_ENCRYPTION_MODES)
      .required(),
    kem: Joi.string()
      .valid(...INTAKE_KEMS)
      .allow(null)
      .required(),
    files: Joi.object()
      .pattern(Joi.string(), Joi.object({ iv: Joi.string().allow(null).required() }))
      .required(),
    chunk_size: Joi.number().integer().allow(null).required(),
    wrapped_symmetric_key: Joi.string().allow(null).required(),
  }).required(),
  files: Joi.array().items(documentFile).required(),
  scan_status: Joi.string()
    .valid('pending', 'clean', 'infected', 'not_scanned_too_large', 'not_scanned_e2e')
    .required(),
  created_at: timestamp.required(),
  received_at: timestamp.allow(null).required(),
  retention_until: timestamp.allow(null).required(),
}).label('IntakeDocument');

export const intakeDocumentList = listEnvelope(intakeDocument, 'IntakeDocumentList');

export const deletedDocument = Joi.object({
  id: documentId.required(),
  object: Joi.string().valid('intake_document').required(),
  deleted: Joi.boolean().valid(true).required(),
}).label('DeletedIntakeDocument');

export const intakeForm = Joi.object({
  ...formFields,
  object: Joi.string().valid('intake_form').required(),
  limits: Joi.object(submissionLimits).required(),
}).label('IntakeForm');

export const submission = Joi.object({
  object: Joi.string().valid('intake_submission').required(),
  document: Joi.object({
    id: documentId.required(),
    object: Joi.string().valid('intake_document').required(),
    intake_id: intakeId.required(),
    status: Joi.string()
      .valid(...INTAKE_DOCUMENT_STATUSES)
      .required(),
    client_reference: Joi.string().allow(null).required(),
    upload_deadline: timestamp.required(),
    created_at: timestamp.required(),
  }).required(),
  upload_urls: Joi.array()
    .items(
      uploadUrl
        .keys({
          size: Joi.number().integer().min(0).required().description('The bytes to PUT: the VAL1 blob in `e2e_asym`.'),
          plaintext_size: Joi.number().integer().min(0).required(),
        })
        .label('IntakeUploadUrl'),
    )
    .required(),
}).label('IntakeSubmission');
