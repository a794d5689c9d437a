import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Tenant } from '../../tenancy.ts';
import { IDEMPOTENCY_STATES } from '../../vocabulary.ts';
import { sql } from '../sql.ts';

const recordRow = z.object({
  /** false: a record from before records were bound to keys (migration 0010); it can no longer be replayed. */
  bound: z.boolean(),
  /** In progress, and its claim's lock ran out: the request that held it is gone. */
  abandoned: z.boolean(),
  request_fingerprint: z.string(),
  state: z.enum(IDEMPOTENCY_STATES),
  response_status: z.number().int().nullable(),
  response_sealed: z.string().nullable(),
});
export type IdempotencyRecord = z.infer<typeof recordRow>;

/**
 * Whose record: the tenant and the credential that made the request, an API key, an intake's
 * publishable key, or a vault member's invitation link.
 */
export type RecordOwner = Tenant & { keyKind: 'api_key' | 'publishable_key' | 'coffre_member'; keyId: string };

/** The owner's key columns, exactly one of them set. */
function keyColumns({ keyKind, keyId }: RecordOwner) {
  return {
    apiKeyId: keyKind === 'api_key' ? keyId : null,
    publishableKeyId: keyKind === 'publishable_key' ? keyId : null,
    coffreMemberId: keyKind === 'coffre_member' ? keyId : null,
  };
}

/** The condition that selects the owner's own records. */
function ownedBy(owner: RecordOwner) {
  switch (owner.keyKind) {
    case 'api_key':
      return sql.fragment`api_key_id = ${owner.keyId}`;
    case 'publishable_key':
      return sql.fragment`publishable_key_id = ${owner.keyId}`;
    case 'coffre_member':
      return sql.fragment`coffre_member_id = ${owner.keyId}`;
  }
}

/** A record from before records were bound to keys (migration 0010): it names no owner. */
const unbound = sql.fragment`num_nonnulls(api_key_id, publishable_key_id, coffre_member_id) = 0`;

/** One request's claim of a key: its id, and how long it holds the key unless renewed. */
export type Claim = { id: string; lockMs: number };

const lockEnd = (claim: Claim) => sql.fragment`now() + make_interval(secs => ${claim.lockMs / 1000})`;
/** Claims from before migration 0041 have no lock: they are abandoned once older than one. */
const lockRanOut = (lockMs: number) =>
  sql.fragment`COALESCE(locked_until, created_at + make_interval(secs => ${lockMs / 1000})) < now()`;

export function createIdempotencyQueries(db: CommonQueryMethods) {
  return {
    /** Claims the key for this request; false when another request of the same key holds or held it. */
    async claim(owner: RecordOwner, key: string, fingerprint: string, claim: Claim): Promise<boolean> {
      // Keys are remembered for 24 hours; the tenant's older records go first.
      await db.query(sql.typeAlias('void')`
        DELETE FROM idempotency_records
        WHERE workspace_id = ${owner.workspaceId} AND environment = ${owner.environment}
          AND created_at < now() - interval '24 hours'`);
      const { apiKeyId, publishableKeyId, coffreMemberId } = keyColumns(owner);
      // A record from before keys were bound still holds its Idempotency-Key.
      const claimed = await db.maybeOneFirst(sql.type(z.object({ claimed: z.boolean() }))`
        INSERT INTO idempotency_records (workspace_id, environment, api_key_id, publishable_key_id, coffre_member_id,
          idempotency_key, request_fingerprint, state, claim_id, locked_until)
        SELECT ${owner.workspaceId}, ${owner.environment}, ${apiKeyId}, ${publishableKeyId}, ${coffreMemberId}, ${key},
          ${fingerprint}, 'in_progress', ${claim.id}, ${lockEnd(claim)}
        WHERE NOT EXISTS (
          SELECT 1 FROM idempotency_records
          WHERE workspace_id = ${owner.workspaceId} AND environment = ${owner.environment}
            AND idempotency_key = ${key} AND ${unbound})
        ON CONFLICT DO NOTHING
        RETURNING true AS claimed`);
      return claimed === true;
    },

    /** The calling key's record for this Idempotency-Key (or an unbound one from before migration 0010). */
    async find(owner: RecordOwner, key: string, lockMs: number): Promise<IdempotencyRecord | null> {
      return db.maybeOne(sql.type(recordRow)`
        SELECT NOT ${unbound} AS bound, request_fingerprint, state, response_status, response_sealed,
          state = 'in_progress' AND ${lockRanOut(lockMs)} AS abandoned
        FROM idempotency_records
        WHERE workspace_id = ${owner.workspaceId} AND environment = ${owner.environment}
          AND idempotency_key = ${key} AND (${ownedBy(owner)} OR ${unbound})
        ORDER BY NOT ${unbound}
        LIMIT 1`);
    },

    /**
     * Takes over a claim of the same request whose holder is gone: its lock ran out without being
     * renewed (its process died, or never learnt its claim had committed). False while it is held.
     */
    async takeOver(owner: RecordOwner, key: string, fingerprint: string, claim: Claim): Promise<boolean> {
      const taken = await db.maybeOneFirst(sql.type(z.object({ taken: z.boolean() }))`
        UPDATE idempotency_records SET claim_id = ${claim.id}, locked_until = ${lockEnd(claim)}
        WHERE workspace_id = ${owner.workspaceId} AND environment = ${owner.environment}
          AND ${ownedBy(owner)} AND idempotency_key = ${key} AND state = 'in_progress'
          AND request_fingerprint = ${fingerprint} AND ${lockRanOut(claim.lockMs)}
        RETURNING true AS taken`);
      return taken === true;
    },

    /** Pushes the claim's lock forward while its request runs; false if it was taken over meanwhile. */
    async renew(owner: RecordOwner, key: string, claim: Claim): Promise<boolean> {
      const renewed = await db.maybeOneFirst(sql.type(z.object({ renewed: z.boolean() }))`
        UPDATE idempotency_records SET locked_until = ${lockEnd(claim)}
        WHERE workspace_id = ${owner.workspaceId} AND environment = ${owner.environment}
          AND ${ownedBy(owner)} AND idempotency_key = ${key} AND claim_id = ${claim.id} AND state = 'in_progress'
        RETURNING true AS renewed`);
      return renewed === true;
    },

    /** Stores the response, already sealed by the caller: the table never holds a response in clear. */
    async complete(owner: RecordOwner, key: string, claim: Claim, status: number, sealedBody: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE idempotency_records
        SET state = 'completed', response_status = ${status}, response_sealed = ${sealedBody}, locked_until = NULL
        WHERE workspace_id = ${owner.workspaceId} AND environment = ${owner.environment}
          AND ${ownedBy(owner)} AND idempotency_key = ${key} AND claim_id = ${claim.id}`);
    },

    /**
     * Forgets a claim whose request failed on our side, so the client may retry; only this claim,
     * never one that took it over.
     */
    async release(owner: RecordOwner, key: string, claim: Claim): Promise<void> {
      await db.query(sql.typeAlias('void')`
        DELETE FROM idempotency_records
        WHERE workspace_id = ${owner.workspaceId} AND environment = ${owner.environment}
          AND ${ownedBy(owner)} AND idempotency_key = ${key} AND claim_id = ${claim.id} AND state = 'in_progress'`);
    },
  };
}
