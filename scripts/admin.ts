import { parseArgs } from 'node:util';
import { verifyAuditChain } from '../lib/audit/chain.ts';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { ENVIRONMENTS, type Environment } from '../lib/vocabulary.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { BILLING_LINK_USAGE, billingLinkCommand } from './admin/billing-link.ts';
import { ERASE_USER_USAGE, eraseUserCommand } from './admin/erase-user.ts';
import { KEYS_USAGE, keysCommand } from './admin/keys.ts';
import { LEGAL_PUBLISH_USAGE, legalPublish } from './admin/legal-publish.ts';

// Operator commands, one function each, chosen by the first argument. `--json` prints exactly
// one JSON object on stdout (other tools parse it); everything else goes to stderr.
const USAGE = [
  'usage: npm run -s admin -- bootstrap --workspace NAME [--email OWNER_EMAIL] [--json]',
  '       npm run -s admin -- audit-verify --workspace ID --environment live|test|sandbox [--json]',
  `       ${LEGAL_PUBLISH_USAGE}`,
  `       ${ERASE_USER_USAGE}`,
  `       ${BILLING_LINK_USAGE}`,
  `       ${KEYS_USAGE}`,
].join('\n');

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  bootstrap,
  'audit-verify': auditVerify,
  'legal-publish': legalPublish,
  'erase-user': eraseUserCommand,
  'billing-link': billingLinkCommand,
  keys: keysCommand,
};

const [name = '', ...rest] = process.argv.slice(2);
const command = COMMANDS[name];
if (!command) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(1);
}
process.exitCode = await command(rest);

function usageError(message: string): number {
  process.stderr.write(`${message}\n${USAGE}\n`);
  return 1;
}

async function bootstrap(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { workspace: { type: 'string' }, email: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (!values.workspace?.trim()) return usageError('--workspace is required');

  const config = loadConfig();
  const db = await createDatabasePool(config.database.url, 2);
  try {
    const result = await bootstrapWorkspace(
      db,
      { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') },
      { workspaceName: values.workspace.trim(), ownerEmail: values.email ?? 'owner@example.com' },
    );
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } else {
      process.stdout.write(
        [
          `Workspace ${result.workspace_id} created; owner ${result.user_id}.`,
          `MFA secret (add it to an authenticator app): ${result.mfa_secret}`,
          `Live key:    ${result.keys.live}`,
          `Test key:    ${result.keys.test}`,
          `Sandbox key: ${result.keys.sandbox}`,
          'These values are shown once.',
          '',
        ].join('\n'),
      );
    }
  } finally {
    await db.end();
  }
  return 0;
}

/** Verifies one chain of the audit log (docs/audit.md, "Integrity"); exit code 2 when it is broken. */
async function auditVerify(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      workspace: { type: 'string' },
      environment: { type: 'string', default: 'live' },
      json: { type: 'boolean', default: false },
    },
  });
  const workspaceId = values.workspace?.trim() ?? '';
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(workspaceId)) {
    return usageError('--workspace must be a workspace id');
  }
  const environment = values.environment as Environment;
  if (!ENVIRONMENTS.includes(environment)) return usageError(`--environment must be one of ${ENVIRONMENTS.join(', ')}`);

  const config = loadConfig();
  const db = await createDatabasePool(config.database.url, 2);
  try {
    const result = await verifyAuditChain(db, { workspaceId, environment });
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ object: 'audit_verification', ...result })}\n`);
    } else if (result.first_broken) {
      const { id, seq, reason, detail } = result.first_broken;
      process.stdout.write(
        `BROKEN at seq ${seq} (entry ${id}): ${reason}. ${detail}\n${result.entries_checked} entries sound before it, from anchor seq ${result.anchor.seq}.\n`,
      );
    } else {
      process.stdout.write(
        `Valid: ${result.entries_checked} entries from anchor seq ${result.anchor.seq}` +
          (result.head ? ` to seq ${result.head.seq} (${result.head.hash}).\n` : '.\n'),
      );
    }
    return result.valid ? 0 : 2;
  } finally {
    await db.end();
  }
}
