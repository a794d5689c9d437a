#!/usr/bin/env node
// The `valise` executable. The CLI is TypeScript run through tsx (a devDependency
// of the repository root), so nothing needs building: `npm install` at the root
// is enough. tsx is registered for this process only, then the CLI is loaded.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
