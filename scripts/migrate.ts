import { fileURLToPath } from 'node:url';
import { loadConfig } from '../lib/config.ts';
import { migrate } from '../lib/db/migrate.ts';

const config = loadConfig();
const directory = fileURLToPath(new URL('../migrations/', import.meta.url));
const result = await migrate(config.database.url, directory);
const names = result.applied.length > 0 ? `: ${result.applied.join(', ')}` : '';
process.stderr.write(`migrate: ${result.applied.length} applied, ${result.alreadyApplied} already there${names}\n`);
