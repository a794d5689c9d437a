import { ApplicationFailure } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { uploaderRefusal } from '../lib/coffres/access.ts';
import { coffreItemObjects } from '../lib/coffres/family.ts';
import { invitationLink } from '../lib/coffres/members.ts';
import type { Config } from '../lib/config.ts';
import type { Keyring } from '../lib/crypto/key-wrap.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createCoffreQueries, type ItemRow } from '../lib/db/queries/coffres.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { createLeftoverObjectQueries } from '../lib/db/queries/leftover-objects.ts';
import { coffreView, itemView } from '../lib/events/coffre-events.ts';
import type { Semaphore } from '../lib/in-parallel.ts';
import type { Mailer } from '../lib/mail/mailer.ts';
import { coffreInvitationMail } from '../lib/mail/templates.ts';
import type { Scanner } from '../lib/scan/clamd.ts';
import type { ObjectStore } from '../lib/storage/object-store.ts';
import { lifecycleActivities } from './lifecycles.ts';
import { removeBlob, scanAndRecord } from './stored-files.ts';

export type CoffreActivityDeps = {
  config: Config;
  db: DatabasePool;
  objects: ObjectStore;
  keyring: Keyring;
  scanner: Scanner;
  /** Absent: scans are not queued for clamd (tests with a clamd of their own). */
  scanSlots?: Semaphore;
  mailer: Mailer;
};

/** What an item's workflow needs to know at its start. */
export type ItemPlan = { status: ItemRow['status']; uploaded: boolean; uploadDeadline: string };

// Every activity is idempotent: transitions are guarded UPDATEs that match
// once, object removals succeed on missing objects, a rescan gives the same
// answer. Temporal may retry any of them at any point.
export function createCoffreActivities(deps: CoffreActivityDeps) {
  const { db, objects } = deps;
  const coffres = createCoffreQueries(db);
  const linksKey = deriveKey(deps.config.secret, 'link-token');

  async function mustLoadItem(itemId: string, firstLook = false) {
    const item = await coffres.itemById(itemId);
    if (!item) {
      throw firstLook
        ? ApplicationFailure.retryable(`item ${itemId} is not visible yet`, 'NotVisibleYet')
        : ApplicationFailure.nonRetryable(`item ${itemId} does not exist`, 'NotFound');
    }
    return item;
  }

  /**
   * Shreds an item its member uploaded if they may no longer upload (lib/coffres/access.ts,
   * uploaderRefusal), holding the member's row until the transaction ends. True when it did.
   */
  async function shredIfUploaderLostAccess(queries: ReturnType<typeof createCoffreQueries>, itemId: string) {
    const item = await queries.itemById(itemId);
    if (!item?.uploaded_by_member_id) return false;
    if (uploaderRefusal(await queries.memberById(item.uploaded_by_member_id, true)) === null) return false;
    await queries.destroyItem(itemId);
    return true;
  }

  // The names the vault workflows started before `ownerExpiry` and `fileLifecycle` call (their
  // wrappers in workflows/coffreLifecycle.ts, coffreItemLifecycle.ts): remove with them.
  const legacy = {
    async loadItemPlan(itemId: string): Promise<ItemPlan> {
      const item = await mustLoadItem(itemId, true);
      return {
        status: item.status,
        uploaded: item.upload_state === 'uploaded',
        uploadDeadline: item.upload_deadline.toISOString(),
      };
    },

    /**
     * The last byte is stored: `scanning`, and `coffre.item_uploaded` and the access log's
     * `uploaded` entry are recorded, once. False when the item was shredded meanwhile.
     */
    async receiveItem(itemId: string): Promise<boolean> {
      return db.transaction(async (tx) => {
        const queries = createCoffreQueries(tx);
        // A member revoked or downgraded while their last request was still streaming: the item
        // is shredded, never logged as uploaded nor announced.
        if (await shredIfUploaderLostAccess(queries, itemId)) return false;
        const moved = await queries.moveItem(itemId, ['uploading'], 'scanning');
        if (!moved) return (await queries.itemById(itemId))?.status === 'scanning';
        const coffre = await queries.findById(moved.coffre_id);
        if (!coffre) return false;
        const member = moved.uploaded_by_member_id ? await queries.memberById(moved.uploaded_by_member_id) : null;
        await queries.logAccess({
          coffre,
          actorType: member ? 'member' : 'api_key',
          memberId: member?.id ?? null,
          actor: member?.email ?? moved.uploaded_by_api_key_id ?? 'api_key',
          action: 'uploaded',
          item: { id: moved.id, name: moved.name },
          ip: null,
        });
        await createEventQueries(tx).record(
          { workspaceId: coffre.workspace_id, environment: coffre.environment },
          'coffre.item_uploaded',
          { coffre: coffreView(coffre), item: itemView(moved), uploaded_by: member?.email ?? null },
        );
        return true;
      });
    },

    async scanCoffreItem(itemId: string): Promise<string> {
      const item = await mustLoadItem(itemId);
      if (item.scan_status && item.scan_status !== 'pending') return item.scan_status;
      if (!item.data_key_wrapped) return 'destroyed';
      return scanAndRecord(deps, item, (scan) => coffres.recordScan(item.id, scan));
    },

    /**
     * Infected content is shredded (`rejected`); so is (`deleted`) an item whose uploading member was
     * revoked or lost `upload` access since: other members see an item only once its uploader's
     * access is checked again here, with the member's row held so that a revocation committing
     * meanwhile waits and finds the item already shown. Anything else becomes `available`.
     * Answers the status after.
     */
    async settleItemScan(itemId: string): Promise<ItemRow['status']> {
      return db.transaction(async (tx) => {
        const queries = createCoffreQueries(tx);
        const item = await queries.itemById(itemId);
        if (!item) throw ApplicationFailure.nonRetryable(`item ${itemId} does not exist`, 'NotFound');
        if (item.scan_status === 'infected') await queries.destroyItem(itemId, 'rejected');
        else if (!(await shredIfUploaderLostAccess(queries, itemId))) {
          await queries.moveItem(itemId, ['scanning'], 'available');
        }
        return (await queries.itemById(itemId))?.status ?? 'deleted';
      });
    },

    /**
     * Its content cannot be verified, ever (the scan failed for good: it no longer matches its
     * upload): the item is `rejected` and shredded, as infected content is.
     */
    async rejectUnverifiedItem(itemId: string): Promise<void> {
      await coffres.destroyItem(itemId, 'rejected');
    },

    /** The upload never finished: the item is shredded, its row kept as a tombstone. */
    async destroyItem(itemId: string): Promise<void> {
      await coffres.destroyItem(itemId);
    },

    /** Removes an item's blob and any unfinished multipart upload; missing objects are fine. */
    async purgeItemBlob(itemId: string): Promise<void> {
      await removeBlob(objects, await mustLoadItem(itemId));
      // Done: the sweeper (lib/storage/sweeper.ts) need not come back for it.
      await createLeftoverObjectQueries(db).markDeleted(coffreItemObjects, itemId);
    },

    async loadCoffreExpiry(coffreId: string): Promise<{ status: string; expiresAt: string | null }> {
      // Started or signalled inside the creating (or updating) transaction: not found yet is
      // retryable, and a change not yet committed is waited for, not read past.
      const coffre = await coffres.findCommitted(coffreId);
      if (!coffre) throw ApplicationFailure.retryable(`vault ${coffreId} is not visible yet`, 'NotVisibleYet');
      return { status: coffre.status, expiresAt: coffre.expires_at?.toISOString() ?? null };
    },

    /** An active vault past its expiry ends: members lose access, every item's key is destroyed. Answers the items. */
    async expireCoffre(coffreId: string): Promise<string[]> {
      return db.transaction(async (tx) => {
        const queries = createCoffreQueries(tx);
        const coffre = await queries.findById(coffreId, true);
        if (coffre?.status !== 'active' || !coffre.expires_at || coffre.expires_at.getTime() > Date.now()) {
          // Expired already by an earlier try: its items still need their blobs removed.
          if (coffre?.status !== 'expired') return [];
          return (await queries.itemsOf(coffreId, ['deleted'])).map((item) => item.id);
        }
        return [...((await queries.end(coffreId, 'expired')) ?? [])];
      });
    },
  };

  return {
    ...legacy,
    /** Mails a member their current invitation, unless it was replaced or revoked since. */
    async sendCoffreInvitation(memberId: string, nonce: string): Promise<void> {
      const member = await coffres.memberById(memberId);
      if (!member || member.revoked_at || member.invitation_nonce !== nonce || !member.invitation_expires_at) return;
      const coffre = await coffres.findById(member.coffre_id);
      if (coffre?.status !== 'active') return;
      const url = invitationLink(linksKey, deps.config.api.publicBaseUrl, member);
      if (!url) return;
      await deps.mailer.send(
        coffreInvitationMail({
          to: member.email,
          name: member.name,
          coffreName: coffre.name,
          access: member.access,
          url,
          expiresAt: member.invitation_expires_at,
        }),
      );
    },
    ...lifecycleActivities('coffres', {
      loadExpiry: async (coffreId: string) => {
        const { status, expiresAt } = await legacy.loadCoffreExpiry(coffreId);
        const state = status === 'deleted' || status === 'expired' ? status : ('live' as const);
        return { state, expiresAt };
      },
      // An expired vault stays ended; its items go with it.
      expire: async (coffreId: string) => ({ final: true, fileOwnerIds: await legacy.expireCoffre(coffreId) }),
      // The item is its own (single) file.
      plan: async (itemId: string) => {
        const plan = await legacy.loadItemPlan(itemId);
        return {
          ended: plan.status === 'deleted' || plan.status === 'rejected',
          fileIds: [itemId],
          uploadedFileIds: plan.uploaded ? [itemId] : [],
          uploadDeadline: plan.uploadDeadline,
          uploadRecheckMs: deps.config.transfers.uploads.recheckMs,
          scanned: true,
        };
      },
      uploadedFileIds: async (itemId: string) => ((await legacy.loadItemPlan(itemId)).uploaded ? [itemId] : []),
      receive: async (itemId: string) => ({ kept: await legacy.receiveItem(itemId), retentionUntil: null }),
      // Members see a new item in the vault and its access log: no one is mailed.
      notifyReceived: async (_itemId: string) => {},
      // Receiving it made it `scanning` already.
      beginScan: async (_itemId: string) => {},
      scanFile: legacy.scanCoffreItem,
      settleScan: legacy.settleItemScan,
      rejectUnverified: legacy.rejectUnverifiedItem,
      destroy: legacy.destroyItem,
      purge: legacy.purgeItemBlob,
    }),
  };
}
