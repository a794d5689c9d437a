import { HttpClient, type ValiseOptions } from './client.ts';
import { Analytics } from './resources/analytics.ts';
import { ApiKeys } from './resources/api-keys.ts';
import { Audit } from './resources/audit.ts';
import { Billing } from './resources/billing.ts';
import { Coffres } from './resources/coffres.ts';
import { Collections } from './resources/collections.ts';
import { Folders } from './resources/folders.ts';
import { Gdpr } from './resources/gdpr.ts';
import { Intakes } from './resources/intakes.ts';
import { Legal } from './resources/legal.ts';
import { Mcp } from './resources/mcp.ts';
import { Meta } from './resources/meta.ts';
import { Recipients } from './resources/recipients.ts';
import { Rules } from './resources/rules.ts';
import { Scim } from './resources/scim.ts';
import { Shares } from './resources/shares.ts';
import { Transfers } from './resources/transfers.ts';
import { Uploads } from './resources/uploads.ts';
import { Webhooks } from './resources/webhooks.ts';
import { verifyWebhook } from './webhooks-verify.ts';

/**
 * The Valise API client: `new Valise({ apiKey, baseUrl })`, then one namespace per resource.
 * Runs wherever fetch, WebCrypto and web streams exist (Node 24, browsers); disk helpers are in
 * `@valise/sdk/node`.
 */
export class Valise {
  /** For webhook receivers, which need no client: `await Valise.webhooks.verify(body, headers, secret)`. */
  static readonly webhooks = { verify: verifyWebhook } as const;

  readonly transfers: Transfers;
  readonly uploads: Uploads;
  readonly shares: Shares;
  readonly apiKeys: ApiKeys;
  readonly webhooks: Webhooks;
  readonly rules: Rules;
  readonly intakes: Intakes;
  readonly folders: Folders;
  readonly audit: Audit;
  readonly analytics: Analytics;
  readonly meta: Meta;
  readonly collections: Collections;
  readonly recipients: Recipients;
  readonly coffres: Coffres;
  readonly legal: Legal;
  readonly gdpr: Gdpr;
  readonly scim: Scim;
  readonly billing: Billing;
  readonly mcp: Mcp;

  constructor(options: ValiseOptions) {
    const http = new HttpClient(options);
    this.transfers = new Transfers(http);
    this.uploads = new Uploads(http);
    this.shares = new Shares(http);
    this.apiKeys = new ApiKeys(http);
    this.webhooks = new Webhooks(http);
    this.rules = new Rules(http);
    this.intakes = new Intakes(http);
    this.folders = new Folders(http);
    this.audit = new Audit(http);
    this.analytics = new Analytics(http);
    this.meta = new Meta(http);
    this.collections = new Collections(http);
    this.recipients = new Recipients(http);
    this.coffres = new Coffres(http);
    this.legal = new Legal(http);
    this.gdpr = new Gdpr(http);
    this.scim = new Scim(http);
    this.billing = new Billing(http);
    this.mcp = new Mcp(http);
  }
}

export type { RequestOptions, ValiseOptions } from './client.ts';
export {
  CONTENT_KEY_BYTES,
  DEFAULT_INTAKE_KEM,
  ENC_BYTES,
  generateIntakeKeyPair,
  INTAKE_KEMS,
  type IntakeKem,
  type IntakeKeyPair,
  unwrapContentKey,
  type WrappedContentKey,
  wrapContentKey,
} from './crypto/intake-envelope.ts';
export {
  createDecryptStream,
  createEncryptStream,
  DEFAULT_SEGMENT_SIZE,
  decryptedSize,
  encryptedSize,
  makeHeader,
  parseHeader,
} from './crypto/val1.ts';
export type { DownloadedFile, DownloadParams, DownloadSink } from './download.ts';
export type { ZipDownload, ZipDownloadParams } from './download-zip.ts';
export {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  FileExistsError,
  InvalidArgumentError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  ValidationError,
  ValiseError,
  type ValiseErrorCode,
  type ValiseErrorInit,
} from './errors.ts';
export type { EventDataByType } from './generated/events.ts';
export { OPENAPI_VERSION, type Paths, REQUEST_ENUMS } from './generated/openapi.ts';
export { type ListEnvelope, Page, PageRequest } from './pagination.ts';
export type {
  AnalyticsFunnel,
  AnalyticsGeo,
  AnalyticsHeatmap,
  AnalyticsSummary,
  AnalyticsTopParams,
  AnalyticsTopRecipients,
  AnalyticsTopTransfers,
  AnalyticsWindowParams,
} from './resources/analytics.ts';
export { invitationToken, type PutCoffreItemParams } from './resources/coffres.ts';
export type { SendToIntakeParams } from './resources/intakes.ts';
export { EXCLUDED_OPERATIONS, ROUTES, type RouteName } from './routes.ts';
export {
  type PrepareParams,
  type ResumeParams,
  SendInterruptedError,
  type SendParams,
  type SendProgress,
  type SendResult,
  type SendSession,
} from './send.ts';
export type { FileSource, SendFileInput } from './sources.ts';
export type * from './types.ts';
export {
  type VerifyOptions,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHeaders,
  WebhookVerificationError,
} from './webhooks-verify.ts';
export {
  type Crc32,
  crc32,
  type EntryContent,
  planZip,
  safeName,
  type ZipEntry,
  type ZipInput,
  type ZipPlan,
  zipChunks,
} from './zip.ts';
