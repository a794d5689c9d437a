import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { ERASE_USER_USAGE, eraseUserCommand } from './admin/erase-user.ts';
import { LEGAL_PUBLISH_USAGE, legalPublish } from './admin/legal-publish.ts';

// Operator commands. `bootstrap --json` prints exactly one JSON object on
// stdout (other tools parse it); everything else goes to stderr.
const USAGE = `usage: npm run -s admin -- bootstrap --workspace NAME [--email OWNER_EMAIL] [--json]
       ${LEGAL_PUBLISH_USAGE}
       ${ERASE_USER_USAGE}`;

const [command, ...rest] = process.argv.slice(2);
// The other commands, each in its own module: they run and exit here.
const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  'legal-publish': legalPublish,
  'erase-user': eraseUserCommand,
};
const other = command === undefined ? undefined : COMMANDS[command];
if (other) process.exit(await other(rest));
if (command !== 'bootstrap') {
  process.stderr.write(`${USAGE}\n`);
  process.exit(1);
}
const { values } = parseArgs({
  args: rest,
  options: { workspace: { type: 'string' }, email: { type: 'string' }, json: { type: 'boolean', default: false } },
});
if (!values.workspace?.trim()) {
  process.stderr.write(`--workspace is required\n${USAGE}\n`);
  process.exit(1);
}

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
