import { parseArgs } from 'node:util';
import { loadConfig } from '../../lib/config.ts';
import { parseKeyring } from '../../lib/crypto/key-wrap.ts';
import { createDatabasePool } from '../../lib/db/pool.ts';
import { checkRetirement, countWrappedByKey } from '../../lib/master-keys/rotation.ts';
import { connectTemporal, keyRotationResult, keyRotationState, startKeyRotation } from '../../lib/temporal.ts';

// Master-key rotation for operators (docs/encryption.md, "Master keys"): what each key wraps, the
// rotation that re-wraps everything under the current key, and whether an old key may go. Each
// reads the same MASTER_KEYS and MASTER_KEY_ID as the API and the workers.

export const KEYS_USAGE = 'npm run -s admin -- keys status|rotate [--batch-size N] [--wait]|retire KEY_ID [--json]';

const KEY_ID = /^[a-z0-9-]{1,32}$/;

export async function keysCommand(args: string[]): Promise<number> {
  const [sub = '', ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      wait: { type: 'boolean', default: false },
      'batch-size': { type: 'string' },
    },
  });
  const config = loadConfig();
  const keyring = parseKeyring(config.masterKeys.spec, config.masterKeys.currentId);
  const print = (json: object, text: string) =>
    process.stdout.write(values.json ? `${JSON.stringify(json)}\n` : `${text}\n`);

  if (sub === 'rotate') {
    const batchSize = values['batch-size'] === undefined ? undefined : Number(values['batch-size']);
    if (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= 10_000)) {
      return usage('--batch-size must be an integer from 1 to 10000');
    }
    const client = await connectTemporal(config);
    try {
      const targetKeyId = keyring.currentId;
      const workflowId = await startKeyRotation(
        { client, taskQueue: config.temporal.taskQueue },
        batchSize === undefined ? { targetKeyId } : { targetKeyId, batchSize },
      );
      process.stderr.write(`rotation to master key "${targetKeyId}" runs as workflow ${workflowId}\n`);
      if (!values.wait) {
        print({ workflow_id: workflowId, target_key_id: targetKeyId }, workflowId);
        return 0;
      }
      const result = await keyRotationResult(client, targetKeyId);
      print(
        { workflow_id: workflowId, target_key_id: targetKeyId, ...result },
        `${workflowId}: ${result.rewrapped} values re-wrapped under "${targetKeyId}", ${result.failed} would not open` +
          (result.failures.length > 0 ? `:\n  ${result.failures.join('\n  ')}` : ''),
      );
      return result.failed > 0 ? 2 : 0;
    } finally {
      await client.connection.close();
    }
  }

  const db = await createDatabasePool(config.database.url, 2);
  try {
    if (sub === 'status') {
      const counts = await countWrappedByKey(db);
      const temporal = await connectTemporal(config);
      const rotation = await keyRotationState(temporal, keyring.currentId).finally(() => temporal.connection.close());
      const lines = [
        `keyring: ${[...keyring.keys.keys()].join(', ')} (current: ${keyring.currentId})`,
        ...Object.entries(counts.byKey).map(
          ([id, n]) =>
            `${id}: ${n} wrapped values${keyring.keys.has(id) ? '' : ' (NOT IN THE KEYRING: they cannot open)'}`,
        ),
        ...Object.entries(counts.byPlace).map(([place, byKey]) => `  ${place}: ${JSON.stringify(byKey)}`),
        rotation
          ? `rotation ${rotation.workflowId}: ${rotation.status}${rotation.progress ? ` (${rotation.progress.rewrapped} re-wrapped, ${rotation.progress.failed} failed)` : ''}`
          : 'no rotation to the current key started',
      ];
      print(
        {
          keyring: [...keyring.keys.keys()],
          current_key_id: keyring.currentId,
          by_key: counts.byKey,
          by_place: counts.byPlace,
          rotation: rotation && {
            workflow_id: rotation.workflowId,
            status: rotation.status,
            progress: rotation.progress,
          },
        },
        lines.join('\n'),
      );
      return 0;
    }

    if (sub === 'retire') {
      const keyId = positionals[0] ?? '';
      if (!KEY_ID.test(keyId)) return usage('retire needs the id of a master key');
      const verdict = await checkRetirement({ db, keyring }, keyId);
      if (verdict.retirable) {
        print(
          { key_id: keyId, retirable: true },
          `No stored value depends on master key "${keyId}": remove it from MASTER_KEYS and deploy (API and workers).`,
        );
        return 0;
      }
      const why =
        verdict.reason === 'current'
          ? `"${keyId}" is the current master key: make another current first (MASTER_KEY_ID), then rotate`
          : `${verdict.remaining} stored values still depend on "${keyId}" (${JSON.stringify(verdict.byPlace)}): run \`keys rotate\` first`;
      print(
        {
          key_id: keyId,
          retirable: false,
          reason: verdict.reason,
          remaining: verdict.remaining,
          by_place: verdict.byPlace,
        },
        `Refused: ${why}.`,
      );
      return 2;
    }
  } finally {
    await db.end();
  }
  return usage(`unknown keys command "${sub}"`);
}

function usage(message: string): number {
  process.stderr.write(`${message}\nusage: ${KEYS_USAGE}\n`);
  return 1;
}
